"""Fresh proof for every change to a way in (docs/security.md, "Takeover"): adding, replacing or
removing a passkey, a phone, a second factor, backup codes or a provider link needs a session
signed in less than 5 minutes ago (aal 2 once MFA is on), or the password where the route takes
one. A stolen access token alone, 301 seconds after its sign-in, gets 403 auth/reauth-required on
each such route and changes nothing; a fresh sign-in succeeds. The routes come from the served
OpenAPI document, so a new way-in route without a case here fails the coverage test."""

import pytest

import db_tools
import webauthn_authenticator as wa
from identity_client import PASSWORD, assert_no_content, assert_problem, unique_email
from provider_flows import google_body
from test_phone import code_of, french_mobile, sent, wait_sms_file

RP_ID = "fresh.example.test"
ORIGIN = "https://fresh.example.test"
WAY_IN_RESOURCES = ("/v1/me/passkeys", "/v1/me/phone", "/v1/me/mfa", "/v1/me/identities", "/v1/me/password",
                    "/v1/me/email/change")

# Each way-in route as the document names it, with the body a stale token sends.
STALE_CASES = {
    ("POST", "/v1/me/passkeys/options"): None,
    ("POST", "/v1/me/passkeys"): {"response": {"id": "x", "type": "public-key"}},
    ("PATCH", "/v1/me/passkeys/{id}"): {"name": "mine"},
    ("DELETE", "/v1/me/passkeys/{id}"): None,
    ("POST", "/v1/me/phone"): {"phone": "+33612345678"},
    ("POST", "/v1/me/phone/verify"): {"session_id": "ps_x", "code": "123456"},
    ("POST", "/v1/me/mfa/totp"): None,
    ("POST", "/v1/me/mfa/email"): None,
    ("POST", "/v1/me/mfa/sms"): None,
    ("POST", "/v1/me/mfa/totp/confirm"): {"code": "123456"},
    ("POST", "/v1/me/mfa/email/confirm"): {"code": "123456"},
    ("POST", "/v1/me/mfa/sms/confirm"): {"code": "123456"},
    ("POST", "/v1/me/mfa/backup-codes"): None,
    ("DELETE", "/v1/me/mfa"): {"code": "123456"},
    ("POST", "/v1/me/identities/{provider}"): {"id_token": "x.y.z"},
    ("DELETE", "/v1/me/identities/{provider}"): None,
    ("POST", "/v1/me/email/change"): {"email": "new-address@example.test"},
}
# Routes whose own body carries the proof (the current password): a stale session still works
# with it (see test_a_stale_session_changes_the_password_with_the_current_one).
# The email change's confirm is proved by the code a fresh start mailed to the new address.
OWN_PROOF = {("POST", "/v1/me/password"), ("POST", "/v1/me/email/change/confirm")}


@pytest.fixture
def fresh_app(provider_app_factory):
    """Providers, passkeys and phone codes (France allowed) on one app."""
    return provider_app_factory(webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN], sms_allowed_calling_codes="33",
                                rate_limits={"sms_resend_per_number": "off"})


def age_session(app, session_id, seconds=301):
    """The session signed in `seconds` ago (its access token stays valid)."""
    db_tools.rows(f"update sessions set created_at = now() - interval '{int(seconds)} seconds' "
                  f"where app_id = {db_tools.literal(app['app_id'])} and id = {db_tools.literal(session_id)}")


def stale_user(client, app):
    user = client.new_user(app, email=unique_email("stale"))
    age_session(app, user["session_id"])
    return user


def concrete(path):
    return path.replace("{id}", "pk_none").replace("{provider}", "google")


def test_every_way_in_route_of_the_document_has_a_case(client):
    document = client.get("/api/docs/openapi.json").json
    way_in = {(method.upper(), path) for path, item in document["paths"].items()
              for method in item if method in ("post", "patch", "put", "delete")
              and any(path == r or path.startswith(r + "/") for r in WAY_IN_RESOURCES)}
    assert way_in == set(STALE_CASES) | OWN_PROOF
    for method, path in STALE_CASES:
        codes = document["paths"][path][method.lower()]["responses"]["403"]["x-error-codes"]
        assert "auth/reauth-required" in codes, (method, path)


@pytest.mark.parametrize("method,path", sorted(STALE_CASES))
def test_a_301_second_old_session_is_refused(client, fresh_app, method, path):
    user = stale_user(client, fresh_app)
    body = STALE_CASES[(method, path)]
    kwargs = {} if body is None else {"json_body": body}
    resp = client.request(method, concrete(path), app_key=fresh_app["app_key"], token=user["access_token"], **kwargs)
    assert_problem(resp, 403, "auth/reauth-required")
    # The token itself is still good: only the change needs fresh proof.
    assert client.me(fresh_app, user["access_token"]).status == 200


def test_a_session_just_under_five_minutes_old_still_counts(client, fresh_app):
    user = client.new_user(fresh_app)
    age_session(fresh_app, user["session_id"], seconds=290)
    resp = client.post("/v1/me/passkeys/options", app_key=fresh_app["app_key"], token=user["access_token"])
    assert resp.status == 200, resp


def test_passkeys_need_a_fresh_sign_in_to_add_rename_and_remove(client, fresh_app):
    email = unique_email("pk-fresh")
    user = client.new_user(fresh_app, email=email)
    token, key = user["access_token"], fresh_app["app_key"]
    # Options taken while fresh, the registration sent after the window: refused, nothing added.
    options = client.post("/v1/me/passkeys/options", app_key=key, token=token).data
    _, registration = wa.create(options, ORIGIN)
    age_session(fresh_app, user["session_id"])
    assert_problem(client.post("/v1/me/passkeys", {"response": registration}, app_key=key, token=token),
                   403, "auth/reauth-required")
    assert client.get("/v1/me/passkeys", app_key=key, token=token).data == []
    # A fresh sign-in registers, renames and removes.
    fresh = client.sign_in(fresh_app, email=email).data
    options = client.post("/v1/me/passkeys/options", app_key=key, token=fresh["access_token"]).data
    _, registration = wa.create(options, ORIGIN)
    added = client.post("/v1/me/passkeys", {"response": registration}, app_key=key, token=fresh["access_token"])
    assert added.status == 201, added
    passkey_id = added.data["id"]
    age_session(fresh_app, fresh["session_id"])
    assert_problem(client.patch(f"/v1/me/passkeys/{passkey_id}", {"name": "attacker"}, app_key=key,
                                token=fresh["access_token"]), 403, "auth/reauth-required")
    assert_problem(client.delete(f"/v1/me/passkeys/{passkey_id}", app_key=key, token=fresh["access_token"]),
                   403, "auth/reauth-required")
    again = client.sign_in(fresh_app, email=email).data["access_token"]
    renamed = client.patch(f"/v1/me/passkeys/{passkey_id}", {"name": "laptop"}, app_key=key, token=again)
    assert renamed.status == 200 and renamed.data["name"] == "laptop", renamed
    assert_no_content(client.delete(f"/v1/me/passkeys/{passkey_id}", app_key=key, token=again))


def test_a_phone_is_linked_only_from_a_fresh_sign_in(stack, client, fresh_app):
    email = unique_email("phone-fresh")
    user = client.new_user(fresh_app, email=email)
    key, phone = fresh_app["app_key"], french_mobile()
    # The code sent while fresh cannot be spent once the window has passed.
    session = sent(client.post("/v1/me/phone", {"phone": phone}, app_key=key, token=user["access_token"]))
    code = code_of(wait_sms_file(stack, phone))
    age_session(fresh_app, user["session_id"])
    assert_problem(client.post("/v1/me/phone/verify", {"session_id": session, "code": code}, app_key=key,
                               token=user["access_token"]), 403, "auth/reauth-required")
    assert client.me(fresh_app, user["access_token"]).data.get("phone") in (None, "")
    fresh = client.sign_in(fresh_app, email=email).data["access_token"]
    done = client.post("/v1/me/phone/verify", {"session_id": session, "code": code}, app_key=key, token=fresh)
    assert done.status == 200 and done.data["phone"] == phone, done


def test_a_provider_is_unlinked_only_from_a_fresh_sign_in(client, providers, fresh_app):
    email = unique_email("unlink-fresh")
    user = client.new_user(fresh_app, email=email)
    body, _ = google_body(providers)
    assert client.link_identity(fresh_app, user["access_token"], "google", body).status == 200
    age_session(fresh_app, user["session_id"])
    assert_problem(client.unlink_identity(fresh_app, user["access_token"], "google"), 403, "auth/reauth-required")
    assert "google" in client.me(fresh_app, user["access_token"]).data["providers"]
    fresh = client.sign_in(fresh_app, email=email).data["access_token"]
    assert_no_content(client.unlink_identity(fresh_app, fresh, "google"))


def test_a_stale_session_links_with_the_password_instead(client, providers, fresh_app):
    user = stale_user(client, fresh_app)
    body, _ = google_body(providers)
    resp = client.link_identity(fresh_app, user["access_token"], "google", dict(body, password=PASSWORD))
    assert resp.status == 200 and "google" in resp.data["providers"], resp


def test_a_stale_session_changes_the_password_with_the_current_one(client, fresh_app):
    email = unique_email("pw-stale")
    user = client.new_user(fresh_app, email=email)
    age_session(fresh_app, user["session_id"])
    assert_no_content(client.change_password(fresh_app, user["access_token"], PASSWORD, "a new long passphrase"))
    assert client.sign_in(fresh_app, email=email, password="a new long passphrase").status == 200


def test_mfa_enrolment_needs_a_fresh_sign_in(client, fresh_app):
    email = unique_email("mfa-fresh")
    user = client.new_user(fresh_app, email=email)
    key = fresh_app["app_key"]
    started = client.post("/v1/me/mfa/totp", app_key=key, token=user["access_token"])
    assert started.status == 200, started
    age_session(fresh_app, user["session_id"])
    assert_problem(client.post("/v1/me/mfa/totp/confirm", {"code": "000000"}, app_key=key,
                               token=user["access_token"]), 403, "auth/reauth-required")
    status = client.get("/v1/me/mfa", app_key=key, token=user["access_token"])
    assert status.status == 200 and status.data["enabled"] is False, status


def test_with_mfa_on_only_an_aal2_session_changes_a_way_in(stack, client, fresh_app):
    """The worker's half of the rule: with MFA on, a fresh session is not enough at aal 1 (the
    session that enrolled the factor); the phone (which could become the SMS second factor) and
    passkeys need the second factor passed."""
    from test_mfa import enrol_totp, fully_signed_in
    email = unique_email("mfa-way-in")
    user = client.new_user(fresh_app, email=email)
    key = fresh_app["app_key"]
    secret, _ = enrol_totp(client, fresh_app, user["access_token"])
    for method, path, body in (("POST", "/v1/me/phone", {"phone": french_mobile()}),
                               ("POST", "/v1/me/passkeys/options", None)):
        kwargs = {} if body is None else {"json_body": body}
        assert_problem(client.request(method, path, app_key=key, token=user["access_token"], **kwargs),
                       403, "auth/reauth-required")
    full = fully_signed_in(client, fresh_app, email, secret, 1)
    phone = french_mobile()
    session = sent(client.post("/v1/me/phone", {"phone": phone}, app_key=key, token=full["access_token"]))
    done = client.post("/v1/me/phone/verify", {"session_id": session, "code": code_of(wait_sms_file(stack, phone))},
                       app_key=key, token=full["access_token"])
    assert done.status == 200 and done.data["phone"] == phone, done
