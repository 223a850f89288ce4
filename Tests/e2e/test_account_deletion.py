"""DELETE /v1/me with fresh proof: `{password}` for a password user, `{secret}` for a guest,
a new Google `{id_token}` (at most 5 minutes old) of the same Google account, a new Apple
`{identity_token, authorization_code, nonce}` of the same Apple ID. Wrong, stale, foreign or
missing proof → 403 `auth/reauth-required` and nothing is deleted. On 204 the user and all
their rows are gone, every session ends, `user.deleted` and `session.revoked` events go out,
and the Apple refresh token kept at sign-in is revoked at Apple, retried until Apple answers 200."""

import time

import pytest

import db_tools
from event_tools import assert_event
from mail_flows import email_code, email_code_signed_in
from identity_client import (PASSWORD, assert_no_content, assert_problem, assert_session_ended,
                             assert_session_works, new_guest_secret, unique_email)
from provider_flows import (APPLE_REVOKE_RETRY_DELAYS_MS, apple_proof, apple_signed_in,
                            apple_signed_in_with_code, google_proof, google_signed_in,
                            quiet_revocations)
from provider_standin import APPLE_BUNDLE_ID, unique_apple_sub, unique_google_sub

REAUTH = "auth/reauth-required"
REVOKE_TIMEOUT = 20.0


def _rows_left(app, uid):
    """{table: count} of the rows of that user still in the store (empty when none is left)."""
    app_id, uid = db_tools.literal(app["app_id"]), db_tools.literal(uid)
    left = {table: db_tools.value(f"select count(*) from {table} "
                                  f"where app_id = {app_id} and uid = {uid}")
            for table in ("users", "sessions", "user_identities")}
    left["devices"] = db_tools.value(f"select count(*) from devices d where d.app_id = {app_id} "
                                     f"and strpos(d::text, {uid}) > 0")
    return {table: count for table, count in left.items() if count != "0"}


def _assert_alive(client, app, tokens):
    me = client.me(app, tokens["access_token"])
    assert me.status == 200 and me.data["uid"] == tokens["user"]["uid"], me


def _assert_deleted(client, app, uid, *sessions):
    """Every session refused, no row of the user left."""
    for tokens in sessions:
        assert_session_ended(client, app, tokens)
    assert _rows_left(app, uid) == {}, f"rows of deleted user {uid} left"


def _sign_in(client, app, email):
    resp = client.sign_in(app, email=email)
    assert resp.status == 200, resp
    return resp.data


# --- password users -------------------------------------------------------------------------


def test_password_user_deletes_the_account(client, app, events):
    email = unique_email("leaving")
    first = client.new_user(app, email=email)
    second = _sign_in(client, app, email)
    client.new_device(app, first["access_token"])
    bystander = client.new_user(app)
    uid = first["user"]["uid"]

    assert_no_content(client.delete_me(app, first["access_token"], {"password": PASSWORD}))

    _assert_deleted(client, app, uid, first, second)
    assert_problem(client.sign_in(app, email=email), 401, "auth/invalid-credential")
    deleted = events.wait_for("user.deleted", lambda b: b.get("uid") == uid)
    assert_event(deleted, "user.deleted", "UserDeleted", app, uid)
    for tokens in (first, second):
        revoked = events.wait_for("session.revoked",
                                  lambda b, s=tokens["session_id"]: b.get("session_id") == s)
        assert_event(revoked, "session.revoked", "SessionRevoked", app, uid)
    # Another user of the same app is untouched.
    _assert_alive(client, app, bystander)
    assert_session_works(client, app, bystander)
    assert _sign_in(client, app, bystander["user"]["email"])["user"]["uid"] == \
        bystander["user"]["uid"]


def test_the_email_of_a_deleted_account_is_free_again(client, app):
    email = unique_email("again")
    old = client.new_user(app, email=email)
    assert_no_content(client.delete_me(app, old["access_token"], {"password": PASSWORD}))
    new = client.new_user(app, email=email)
    assert new["user"]["uid"] != old["user"]["uid"]
    assert new["is_new_user"] is True


def test_wrong_password_is_403_and_nothing_changes(client, app, events):
    signed_up = client.new_user(app)
    resp = client.delete_me(app, signed_up["access_token"], {"password": PASSWORD + "x"})
    assert_problem(resp, 403, REAUTH)
    _assert_alive(client, app, signed_up)
    assert _sign_in(client, app, signed_up["user"]["email"])["user"]["uid"] == \
        signed_up["user"]["uid"]
    assert_session_works(client, app, signed_up)
    uid = signed_up["user"]["uid"]
    assert db_tools.value("select count(*) from users "
                          f"where uid = {db_tools.literal(uid)}") == "1"
    events.collect(1.0)
    assert not events.matching("user.deleted", lambda b: b.get("uid") == uid)


@pytest.mark.parametrize("who", ["password", "guest"])
@pytest.mark.parametrize("body", [
    pytest.param(None, id="no-body"),
    pytest.param({}, id="empty-object"),
])
def test_missing_proof_is_403(client, app, who, body):
    if who == "password":
        tokens = client.new_user(app)
    else:
        tokens, _ = client.new_guest(app, is_new_user=True)
    if body is None:
        resp = client.delete_me(app, tokens["access_token"])
    else:
        resp = client.delete_me(app, tokens["access_token"], body)
    assert_problem(resp, 403, REAUTH)
    _assert_alive(client, app, tokens)
    assert_session_works(client, app, tokens)


def _passwordless_user(client, smtp_sink, app):
    email = unique_email("nopass")
    _, code = email_code(client, smtp_sink, app, email)
    return email_code_signed_in(client, app, email, code, is_new_user=True)


def test_a_passwordless_user_deletes_with_a_fresh_sign_in(client, smtp_sink, app, events):
    """An email-code (or passkey) account has no credential to send again: a session signed in
    less than 5 minutes ago is its proof."""
    tokens = _passwordless_user(client, smtp_sink, app)
    uid = tokens["user"]["uid"]
    assert_no_content(client.delete_me(app, tokens["access_token"]))
    deleted = events.wait_for("user.deleted", lambda b: b.get("uid") == uid)
    assert_event(deleted, "user.deleted", "UserDeleted", app, uid)
    _assert_deleted(client, app, uid, tokens)


def test_a_passwordless_user_with_an_old_session_must_sign_in_again(client, smtp_sink, app):
    tokens = _passwordless_user(client, smtp_sink, app)
    db_tools.rows("update sessions set created_at = now() - interval '6 minutes' "
                  f"where id = {db_tools.literal(tokens['session_id'])}")
    assert_problem(client.delete_me(app, tokens["access_token"]), 403, REAUTH)
    _assert_alive(client, app, tokens)


def test_a_fresh_session_is_no_proof_for_an_account_with_a_password(client, app):
    tokens = client.new_user(app)  # signed up this instant: fresh, yet it has a password to send
    assert_problem(client.delete_me(app, tokens["access_token"], {}), 403, REAUTH)
    _assert_alive(client, app, tokens)


def test_delete_without_a_bearer_token_is_401(client, app):
    signed_up = client.new_user(app)
    resp = client.delete("/v1/me", json_body={"password": PASSWORD}, app_key=app["app_key"])
    assert_problem(resp, 401, "auth/invalid-token")
    _assert_alive(client, app, signed_up)


def test_token_of_another_app_cannot_delete(client, app, other_app):
    signed_up = client.new_user(app)
    client.new_user(other_app)
    resp = client.delete_me(other_app, signed_up["access_token"], {"password": PASSWORD})
    assert_problem(resp, 401, "auth/invalid-token")
    _assert_alive(client, app, signed_up)


# --- guests ---------------------------------------------------------------------------------


def test_guest_deletes_itself_with_its_secret(client, app, events):
    guest, secret = client.new_guest(app, is_new_user=True)
    client.new_device(app, guest["access_token"])
    uid = guest["user"]["uid"]
    assert_no_content(client.delete_me(app, guest["access_token"], {"secret": secret}))
    _assert_deleted(client, app, uid, guest)
    assert_event(events.wait_for("user.deleted", lambda b: b.get("uid") == uid), "user.deleted",
                 "UserDeleted", app, uid)
    # The secret now finds nobody: it makes a new guest.
    fresh, _ = client.new_guest(app, secret, is_new_user=True)
    assert fresh["user"]["uid"] != uid


@pytest.mark.parametrize("whose", ["unknown", "another-guest"])
def test_guest_with_a_wrong_secret_is_403(client, app, whose):
    guest, secret = client.new_guest(app, is_new_user=True)
    if whose == "unknown":
        wrong = new_guest_secret()
    else:
        _, wrong = client.new_guest(app, is_new_user=True)
    assert_problem(client.delete_me(app, guest["access_token"], {"secret": wrong}), 403, REAUTH)
    _assert_alive(client, app, guest)
    again, _ = client.new_guest(app, secret, is_new_user=False)
    assert again["user"]["uid"] == guest["user"]["uid"]


# --- Google users ---------------------------------------------------------------------------


def test_google_user_deletes_with_a_fresh_id_token(client, providers, provider_app, events):
    data, claims = google_signed_in(client, providers, provider_app, is_new_user=True)
    uid = data["user"]["uid"]
    proof, _ = google_proof(providers, sub=claims["sub"], email=claims["email"])
    assert_no_content(client.delete_me(provider_app, data["access_token"], proof))
    _assert_deleted(client, provider_app, uid, data)
    assert_event(events.wait_for("user.deleted", lambda b: b.get("uid") == uid), "user.deleted",
                 "UserDeleted", provider_app, uid)
    # The Google account is free again: signing in makes a new account.
    again, _ = google_signed_in(client, providers, provider_app, is_new_user=True,
                                sub=claims["sub"], email=claims["email"])
    assert again["user"]["uid"] != uid


@pytest.mark.parametrize("defect", ["another-sub", "issued-6-minutes-ago"])
def test_google_user_with_bad_proof_is_403(client, providers, provider_app, defect):
    data, claims = google_signed_in(client, providers, provider_app, is_new_user=True)
    if defect == "another-sub":
        proof, _ = google_proof(providers, sub=unique_google_sub())
    else:
        proof, _ = google_proof(providers, sub=claims["sub"], email=claims["email"],
                                iat=int(time.time()) - 360)
    assert_problem(client.delete_me(provider_app, data["access_token"], proof), 403, REAUTH)
    _assert_alive(client, provider_app, data)
    again, _ = google_signed_in(client, providers, provider_app, is_new_user=False,
                                sub=claims["sub"], email=claims["email"])
    assert again["user"]["uid"] == data["user"]["uid"]


# --- Apple users ----------------------------------------------------------------------------


def test_apple_user_deletes_with_a_fresh_identity_token(client, providers, provider_app, events):
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    uid = data["user"]["uid"]
    proof, _ = apple_proof(client, providers, provider_app, sub=claims["sub"],
                           email=claims["email"])
    assert_no_content(client.delete_me(provider_app, data["access_token"], proof))
    _assert_deleted(client, provider_app, uid, data)
    assert_event(events.wait_for("user.deleted", lambda b: b.get("uid") == uid), "user.deleted",
                 "UserDeleted", provider_app, uid)


@pytest.mark.parametrize("defect", ["another-sub", "spent-nonce"])
def test_apple_user_with_bad_proof_is_403(client, providers, provider_app, defect):
    nonce = client.new_nonce(provider_app)
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True, nonce=nonce)
    if defect == "another-sub":
        proof, _ = apple_proof(client, providers, provider_app, sub=unique_apple_sub())
    else:
        # The nonce of the sign-in: spent already.
        proof, _ = apple_proof(client, providers, provider_app, sub=claims["sub"],
                               email=claims["email"], nonce=nonce)
    assert_problem(client.delete_me(provider_app, data["access_token"], proof), 403, REAUTH)
    _assert_alive(client, provider_app, data)
    # Nothing was deleted, and good proof still works.
    good, _ = apple_proof(client, providers, provider_app, sub=claims["sub"],
                          email=claims["email"])
    assert_no_content(client.delete_me(provider_app, data["access_token"], good))


# --- revoking the Apple refresh token at Apple ----------------------------------------------


def _assert_revoke_call(call, refresh_token):
    assert call["token"] == refresh_token, call
    assert call["client_id"] == APPLE_BUNDLE_ID, call
    assert call["token_type_hint"] == "refresh_token", call
    assert call["client_secret_ok"], f"client secret refused: {call['reason']}"


def test_deleting_an_apple_user_revokes_its_refresh_token_at_apple(client, providers,
                                                                   provider_app):
    data, claims, refresh_token = apple_signed_in_with_code(client, providers, provider_app,
                                                            is_new_user=True)
    proof, _ = apple_proof(client, providers, provider_app, sub=claims["sub"],
                           email=claims["email"])
    assert_no_content(client.delete_me(provider_app, data["access_token"], proof))

    def revoked():
        return [c for c in providers.apple_revoke_calls()
                if c["token"] == refresh_token and c["status"] == 200]
    calls = client.wait_for(revoked, timeout=REVOKE_TIMEOUT, interval=0.2)
    assert calls, f"no POST /apple/revoke of {refresh_token} within {REVOKE_TIMEOUT}s; " \
        f"revoke calls: {providers.apple_revoke_calls()[-5:]}"
    _assert_revoke_call(calls[0], refresh_token)
    _assert_deleted(client, provider_app, data["user"]["uid"], data)


def test_a_failed_revocation_is_retried_until_apple_answers_200(client, providers,
                                                                provider_app):
    data, claims, refresh_token = apple_signed_in_with_code(client, providers, provider_app,
                                                            is_new_user=True)
    proof, _ = apple_proof(client, providers, provider_app, sub=claims["sub"],
                           email=claims["email"])
    mark = quiet_revocations(client, providers)
    providers.fail_revoke(2)
    try:
        assert_no_content(client.delete_me(provider_app, data["access_token"], proof))

        def done():
            new = providers.apple_revoke_calls()[mark:]
            ours = [c for c in new if c["token"] == refresh_token]
            if len(new) < 3 or not ours or ours[-1]["status"] != 200:
                return None
            # Whatever was revoked (a token from the deletion's code too, maybe) got its 200.
            last = {c["token"]: c["status"] for c in new}
            return new if all(status == 200 for status in last.values()) else None

        new = client.wait_for(done, timeout=REVOKE_TIMEOUT, interval=0.2)
        seen = providers.apple_revoke_calls()[mark:]
        assert new, f"revocation of {refresh_token} not retried to a 200 within " \
            f"{REVOKE_TIMEOUT}s; revoke calls: {[(c['token'], c['status']) for c in seen]}"
    finally:
        providers.fail_revoke(0)
    assert [c["status"] for c in new].count(500) == 2, [(c["token"], c["status"]) for c in new]
    ours = [c for c in new if c["token"] == refresh_token]
    for call in ours:
        assert call["token"] == refresh_token and call["client_id"] == APPLE_BUNDLE_ID, call
        assert call["token_type_hint"] == "refresh_token", call
        assert call["client_secret_ok"], f"client secret refused: {call['reason']}"
    assert ours[-1]["status"] == 200, ours
    # Retried after a delay, not in a tight loop.
    first_delay = APPLE_REVOKE_RETRY_DELAYS_MS[0] / 1000
    for before, after in zip(ours, ours[1:]):
        assert after["at"] - before["at"] >= first_delay * 0.66, \
            f"retried after {after['at'] - before['at']:.3f}s, expected {first_delay}s or more"
