"""POST /v1/apps/{app_id}/apple/notifications: Apple's server-to-server notifications, each a
JWT Apple signs (here the stand-in's Apple key) for one of the app's client ids. Consent revoked
or Apple ID deleted: the Apple link and its sessions end, and an account with no other way in is
disabled (consent) or deleted (Apple ID). A relay address Apple says stopped forwarding gets no
mail until Apple says it forwards again. Each event is applied once; a forged, foreign or
malformed notification changes nothing."""

import json
import time
import uuid

import db_tools
from identity_client import assert_problem
from ops_metrics import scrape, value
from provider_flows import apple_signed_in
from provider_standin import APPLE_BUNDLE_ID, APPLE_ISSUER

INVALID = "auth/invalid-apple-token"


def _notification(providers, event_type, sub, *, email=None, aud=APPLE_BUNDLE_ID, iat=None, jti=None,
                  signer="published", events_as_text=True):
    now = int(time.time())
    event = {"type": event_type, "sub": sub, "event_time": now}
    if email is not None:
        event.update(email=email, is_private_email="true")
    claims = {"iss": APPLE_ISSUER, "aud": aud, "iat": now if iat is None else iat,
              "jti": jti or uuid.uuid4().hex, "events": json.dumps(event) if events_as_text else event}
    return providers.mint("apple", claims, signer=signer)


def _post(client, app, payload):
    return client.post(f"/v1/apps/{app['app_id']}/apple/notifications", {"payload": payload})


def _apple_linked(app, sub):
    return db_tools.value("select count(*) from user_identities where app_id = "
                          f"{db_tools.literal(app['app_id'])} and provider = 'apple' and subject = {db_tools.literal(sub)}")


def _user_row(app, uid, column):
    return db_tools.value(f"select {column} from users where app_id = {db_tools.literal(app['app_id'])} "
                          f"and uid = {db_tools.literal(uid)}")


def _relay():
    return f"{uuid.uuid4().hex[:10]}@privaterelay.appleid.com"


def test_consent_revoked_disables_an_account_apple_was_the_only_way_into(client, providers, provider_app, events):
    # A private-relay address is Apple's: no way in once Apple is gone.
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True, email=_relay())
    uid = data["user"]["uid"]
    resp = _post(client, provider_app, _notification(providers, "consent-revoked", claims["sub"]))
    assert resp.status == 200, resp
    assert _apple_linked(provider_app, claims["sub"]) == "0"
    assert _user_row(provider_app, uid, "disabled") == "t", "Apple was its only way in: disabled, not deleted"
    assert client.me(provider_app, data["access_token"]).status == 401
    assert_problem(client.refresh(provider_app, data["refresh_token"]), 403, "auth/user-disabled")
    updated = events.wait_for("user.updated", lambda b: b.get("uid") == uid and b.get("change") == "apple_consent_revoked")
    assert "account:disabled" in updated.get("removed", []), updated.summary()
    assert events.wait_for("user.disabled", lambda b: b.get("uid") == uid)


def test_consent_revoked_ends_only_the_apple_sessions_of_an_account_with_another_way_in(client, providers,
                                                                                       provider_app, events):
    # A verified address of its own is a way in (email codes).
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    uid = data["user"]["uid"]
    resp = _post(client, provider_app, _notification(providers, "consent-revoked", claims["sub"]))
    assert resp.status == 200, resp
    assert _apple_linked(provider_app, claims["sub"]) == "0"
    assert _user_row(provider_app, uid, "disabled") == "f"
    assert client.me(provider_app, data["access_token"]).status == 401, "the Apple session ended"
    updated = events.wait_for("user.updated", lambda b: b.get("uid") == uid and b.get("change") == "apple_consent_revoked")
    assert updated.get("removed") == ["provider:apple"], updated.summary()


def test_account_delete_deletes_an_account_apple_was_the_only_way_into(client, providers, provider_app, events):
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True, email=_relay())
    uid = data["user"]["uid"]
    resp = _post(client, provider_app, _notification(providers, "account-delete", claims["sub"]))
    assert resp.status == 200, resp
    assert _user_row(provider_app, uid, "count(*)") == "0"
    assert events.wait_for("user.deleted", lambda b: b.get("uid") == uid)
    assert client.me(provider_app, data["access_token"]).status == 401


def test_the_same_event_is_applied_once(client, providers, provider_app, events):
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    uid = data["user"]["uid"]
    payload = _notification(providers, "consent-revoked", claims["sub"])
    assert _post(client, provider_app, payload).status == 200
    # Apple retries: the same notification again is 200, and nothing happens twice.
    assert _post(client, provider_app, payload).status == 200
    events.collect(1.0)
    assert len(events.matching("user.updated", lambda b: b.get("uid") == uid
                               and b.get("change") == "apple_consent_revoked")) == 1


def test_forged_foreign_and_malformed_notifications_change_nothing(client, providers, provider_app,
                                                                  other_provider_app):
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    sub = claims["sub"]
    bad = [
        _notification(providers, "account-delete", sub, signer="unpublished"),  # not Apple's key
        _notification(providers, "account-delete", sub, aud="com.someone.else"),  # another app's client id
        _notification(providers, "account-delete", sub, iat=int(time.time()) - 8 * 24 * 3600),  # too old
        _notification(providers, "password-changed", sub),  # no such event
        providers.mint("apple", {"iss": "https://evil.example", "aud": APPLE_BUNDLE_ID, "iat": int(time.time()),
                                 "events": json.dumps({"type": "account-delete", "sub": sub})}),
    ]
    for payload in bad:
        assert_problem(_post(client, provider_app, payload), 401, INVALID)
    assert_problem(_post(client, provider_app, "not a jwt"), 401, INVALID)
    assert_problem(client.post(f"/v1/apps/{provider_app['app_id']}/apple/notifications", {}), 422,
                   "auth/validation-failed")
    assert_problem(client.post("/v1/apps/app_does_not_exist/apple/notifications", {"payload": bad[0]}), 404,
                   "auth/not-found")
    # Signed for this app's client id but posted to another app: that app has no such user; and
    # the user of this app is untouched by everything above.
    assert _post(client, other_provider_app, _notification(providers, "account-delete", sub)).status == 200
    assert _apple_linked(provider_app, sub) == "1"
    assert client.me(provider_app, data["access_token"]).status == 200


def test_a_relay_address_that_stops_forwarding_gets_no_mail_until_it_forwards_again(stack, client, smtp_sink,
                                                                                    providers, provider_app_factory):
    # Two codes to one address within a minute: this app allows the resend.
    provider_app = provider_app_factory(rate_limits={"code_resend_per_address": "10/1s"})
    relay = _relay()
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True, email=relay)
    mailer_url = stack.metrics_url(stack.mailer_worker)
    held_before = value(scrape(mailer_url), "identity_deliveries_total", channel="email", outcome="undeliverable")
    assert _post(client, provider_app, _notification(providers, "email-disabled", claims["sub"], email=relay)).status == 200
    mark = smtp_sink.mark()
    assert client.email_code_send(provider_app, relay).status == 202
    deadline = time.monotonic() + 15
    while value(scrape(mailer_url), "identity_deliveries_total", channel="email",
                outcome="undeliverable") <= held_before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert value(scrape(mailer_url), "identity_deliveries_total", channel="email",
                 outcome="undeliverable") == held_before + 1
    assert smtp_sink.messages_to(relay, after=mark) == []
    assert _post(client, provider_app, _notification(providers, "email-enabled", claims["sub"], email=relay)).status == 200
    assert client.email_code_send(provider_app, relay).status == 202
    assert smtp_sink.wait_for(relay, after=mark, timeout=20) is not None
