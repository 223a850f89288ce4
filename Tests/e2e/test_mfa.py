"""MFA (docs/api-contract.md, "MFA") end to end, against the real gateway and workers: TOTP
enrolment checked with pyotp as an independent oracle, the 202 challenge of every first factor,
POST /v1/auth/mfa/verify, backup codes, the email second factor, step-up, the budgets, events,
and the access token's amr/aal verified against the app's JWKS."""

import base64
import hashlib
import hmac
import os
import threading
import time
import urllib.parse

import pyotp
import pytest

import db_tools
from admin_tools import audit_rows
from conftest import mail_payload_key
from identity_client import PASSWORD, assert_no_content, assert_problem, assert_token_response, unique_email
from jwt_tools import split, verify_rs256
from mail_flows import MAIL_TIMEOUT, email_code, email_verification_code
from provider_flows import apple_body, firebase_body, google_body
from smtp_sink import code_from

STEP = 30


def wait_away_from_step_edge(margin=4):
    """Sleeps past the next TOTP step boundary when one is near, so a test's codes and the
    server's clock agree on which step is "now"."""
    into = time.time() % STEP
    if into > STEP - margin:
        time.sleep(STEP - into + 0.5)


def code_at(secret, offset_steps=0):
    return pyotp.TOTP(secret).at(time.time() + offset_steps * STEP)


def claims(data):
    return split(data["access_token"])[1]


def jwks(client, app):
    resp = client.get(f"/v1/apps/{app['app_id']}/jwks.json")
    assert resp.status == 200, resp
    return resp.json


def enrol_totp(client, app, token):
    """POST /v1/me/mfa/totp then confirm with pyotp's current code: (secret, backup codes)."""
    wait_away_from_step_edge()
    resp = client.post("/v1/me/mfa/totp", app_key=app["app_key"], token=token)
    assert resp.status == 200, resp
    data = resp.data
    secret = data["secret"]
    uri = urllib.parse.urlsplit(data["otpauth_uri"])
    assert uri.scheme == "otpauth" and uri.netloc == "totp", data["otpauth_uri"]
    query = urllib.parse.parse_qs(uri.query)
    assert query["secret"] == [secret] and query["issuer"] == [app["name"]], query
    assert data["qr_svg"].startswith("<svg") and "<path" in data["qr_svg"], data["qr_svg"][:200]
    assert len(base64.b32decode(secret + "=" * (-len(secret) % 8))) == 20
    resp = client.post("/v1/me/mfa/totp/confirm", {"code": code_at(secret)}, app_key=app["app_key"], token=token)
    assert resp.status == 200, resp
    codes = resp.data["backup_codes"]
    assert len(codes) == 10 and len(set(codes)) == 10, codes
    return secret, codes


def challenge_of(resp):
    assert resp.status == 202, resp
    mfa = resp.json["data"]["mfa"]
    assert mfa["challenge_token"].startswith("mfa_") and mfa["expires_at"].endswith("Z"), mfa
    return mfa


def verify(client, app, challenge, code, **fields):
    return client.post("/v1/auth/mfa/verify", {"challenge_token": challenge["challenge_token"], "code": code, **fields},
                       app_key=app["app_key"])


def mfa_user(client, app):
    """A password user with TOTP on: (email, secret, backup codes, uid)."""
    email = unique_email("mfa")
    user = client.new_user(app, email=email)
    secret, codes = enrol_totp(client, app, user["access_token"])
    return email, secret, codes, user["user"]["uid"]


def fully_signed_in(client, app, email, secret, offset=0):
    challenge = challenge_of(client.sign_in(app, email=email))
    resp = verify(client, app, challenge, code_at(secret, offset))
    assert resp.status == 200, resp
    return resp.data


def test_enrol_confirm_sign_in_202_verify_with_amr_and_aal_in_a_signed_token(client, app, events):
    email = unique_email("mfa")
    user = client.new_user(app, email=email)
    assert claims(user)["aal"] == 1 and claims(user)["amr"] == ["pwd"]
    status = client.get("/v1/me/mfa", app_key=app["app_key"], token=user["access_token"])
    assert status.status == 200 and status.data["enabled"] is False, status
    secret, codes = enrol_totp(client, app, user["access_token"])
    events.wait_for("mfa.enabled", lambda body: body["uid"] == user["user"]["uid"] and body["method"] == "totp")
    status = client.get("/v1/me/mfa", app_key=app["app_key"], token=user["access_token"]).data
    assert status["enabled"] is True and status["methods"] == ["totp"], status
    assert status["backup_codes_remaining"] == 10 and status["enabled_at"].endswith("Z"), status

    challenge = challenge_of(client.sign_in(app, email=email))
    assert challenge["methods"] == ["totp", "backup_code"], challenge
    resp = verify(client, app, challenge, code_at(secret, 1))
    assert resp.status == 200, resp
    data = resp.data
    assert_token_response(data, is_new_user=False, expires_in=app["access_token_ttl"])
    assert verify_rs256(data["access_token"], jwks(client, app))
    assert claims(data)["amr"] == ["pwd", "otp", "mfa"] and claims(data)["aal"] == 2, claims(data)
    me = client.me(app, data["access_token"])
    assert me.status == 200 and me.data["mfa_enabled"] is True, me
    sessions = client.sessions(app, data["access_token"]).data
    assert any(s["id"] == data["session_id"] and s["mfa_verified"] for s in sessions), sessions
    # The refreshed token keeps what the sign-in proved.
    refreshed = client.refresh(app, data["refresh_token"])
    assert refreshed.status == 200, refreshed
    assert claims(refreshed.data)["aal"] == 2 and "mfa" in claims(refreshed.data)["amr"]
    # A finished challenge does not start a second session.
    assert_problem(verify(client, app, challenge, code_at(secret, 1)), 401, "auth/code-expired")


def test_a_totp_code_is_accepted_once_and_only_within_one_step(client, app):
    email, secret, _, _ = mfa_user(client, app)
    wait_away_from_step_edge()
    # -2 and +2 steps: refused (and each counts as a wrong code).
    challenge = challenge_of(client.sign_in(app, email=email))
    assert_problem(verify(client, app, challenge, code_at(secret, -2)), 401, "auth/invalid-code")
    assert_problem(verify(client, app, challenge, code_at(secret, 2)), 401, "auth/invalid-code")
    # +1 step: accepted.
    assert verify(client, app, challenge, code_at(secret, 1)).status == 200
    # The same code again, in a new challenge within its window: refused.
    challenge = challenge_of(client.sign_in(app, email=email))
    assert_problem(verify(client, app, challenge, code_at(secret, 1)), 401, "auth/invalid-code")
    # An older step than the last accepted one (the current step, -1 from it): refused too.
    assert_problem(verify(client, app, challenge, code_at(secret, 0)), 401, "auth/invalid-code")


def test_a_reused_totp_code_is_refused_as_before_audited_and_alerted(client, app, smtp_sink):
    """ASVS 2.8.5: a code that was right but already used (the last accepted step, or an earlier
    one still within ±1 step) gets the answer of any wrong code, and besides an audit row and a
    `mfa_code_reused` alert to the owner; a code that was never right raises neither."""
    email, secret, _, uid = mfa_user(client, app)
    wait_away_from_step_edge()
    used = code_at(secret, 1)
    assert verify(client, app, challenge_of(client.sign_in(app, email=email)), used).status == 200
    mark = smtp_sink.mark()
    challenge = challenge_of(client.sign_in(app, email=email))
    wrong = next(c for c in ("000000", "000001") if c not in (code_at(secret, -1), code_at(secret, 0), used))
    assert_problem(verify(client, app, challenge, wrong), 401, "auth/invalid-code")
    assert_problem(verify(client, app, challenge, used), 401, "auth/invalid-code")
    assert_problem(verify(client, app, challenge, code_at(secret, 0)), 401, "auth/invalid-code")
    alert = smtp_sink.wait_for(email, lambda m: m.kind == "security_alert_mfa_code_reused", timeout=15, after=mark)
    assert "already been used" in alert.text and alert.parsed.get("Auto-Submitted"), alert.summary()
    rows = audit_rows(client, app, action="mfa.totp_code_reused", target="user:" + uid)
    assert len(rows) == 2 and all(r["actor"] == "system" and r["detail"]["method"] == "totp" for r in rows), rows
    time.sleep(2)
    reused = [m for m in smtp_sink.messages_to(email, after=mark, alerts=True) if m.kind == "security_alert_mfa_code_reused"]
    assert len(reused) == 2, [m.summary() for m in reused]  # the two replays, not the wrong code


def test_minus_one_step_is_accepted(client, app):
    email = unique_email("mfa")
    user = client.new_user(app, email=email)
    wait_away_from_step_edge()
    resp = client.post("/v1/me/mfa/totp", app_key=app["app_key"], token=user["access_token"])
    secret = resp.data["secret"]
    # Confirmation with the previous step's code.
    resp = client.post("/v1/me/mfa/totp/confirm", {"code": code_at(secret, -1)}, app_key=app["app_key"],
                       token=user["access_token"])
    assert resp.status == 200, resp
    # Confirmation advanced the last step too: that code is spent.
    challenge = challenge_of(client.sign_in(app, email=email))
    assert_problem(verify(client, app, challenge, code_at(secret, -1)), 401, "auth/invalid-code")
    assert verify(client, app, challenge, code_at(secret, 0)).status == 200


def test_a_backup_code_is_spent_once_under_ten_parallel_uses(client, app):
    email, _, codes, _ = mfa_user(client, app)
    challenges = [challenge_of(client.sign_in(app, email=email)) for _ in range(10)]
    answers = [None] * 10

    def use(i):
        answers[i] = verify(client, app, challenges[i], codes[0].upper())

    threads = [threading.Thread(target=use, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(a.status for a in answers)
    assert statuses == [200] + [401] * 9, [(a.status, a.json.get("code")) for a in answers]
    winner = next(a for a in answers if a.status == 200).data
    assert claims(winner)["aal"] == 2 and "mfa" in claims(winner)["amr"]
    status = client.get("/v1/me/mfa", app_key=app["app_key"], token=winner["access_token"]).data
    assert status["backup_codes_remaining"] == 9, status
    # Another code of the set still works.
    assert verify(client, app, challenges[0 if answers[0].status != 200 else 1], codes[1]).status == 200


def backup_code_rows(app, uid):
    return db_tools.rows("select encode(salt, 'hex'), encode(code_hmac, 'hex') from mfa_backup_codes "
                         f"where app_id = {db_tools.literal(app['app_id'])} and uid = {db_tools.literal(uid)} "
                         "and spent_at is null")


def test_each_backup_code_is_stored_under_its_own_salt_and_old_unsalted_codes_still_work(client, app):
    """ASVS 2.6.2: each stored backup code has a random 16-byte salt of its own, beside
    HMAC-SHA-256(backup-code sub-key, salt ‖ code) (checked here independently of the service);
    a code stored the old way (no salt, an HMAC of the code alone) still signs in, once."""
    email, _, codes, uid = mfa_user(client, app)
    key = bytes.fromhex(mail_payload_key(os.environ["IDENTITY_MASTER_KEY"], b"mfa-backup-code-v1"))
    stored = backup_code_rows(app, uid)
    salts = [bytes.fromhex(salt) for salt, _ in stored]
    assert len(stored) == 10 and all(len(salt) == 16 for salt in salts), stored
    assert len(set(salts)) == 10 and len({mac for _, mac in stored}) == 10, stored
    normalized = [c.replace("-", "").lower().encode() for c in codes]
    macs = {hmac.new(key, salt + code, hashlib.sha256).hexdigest() for salt in salts for code in normalized}
    assert {mac for _, mac in stored} <= macs, "each row is HMAC(sub-key, salt || code) of one code"
    assert not {hmac.new(key, code, hashlib.sha256).hexdigest() for code in normalized} & {m for _, m in stored}

    # A code stored before salts: a row with no salt.
    legacy = "abcde-23456"
    legacy_mac = hmac.new(key, b"abcde23456", hashlib.sha256).hexdigest()
    db_tools.value(f"insert into mfa_backup_codes (app_id, uid, code_hmac) values ({db_tools.literal(app['app_id'])}, "
                   f"{db_tools.literal(uid)}, decode('{legacy_mac}', 'hex')) returning 1")
    resp = verify(client, app, challenge_of(client.sign_in(app, email=email)), legacy.upper())
    assert resp.status == 200 and claims(resp.data)["aal"] == 2, resp
    assert_problem(verify(client, app, challenge_of(client.sign_in(app, email=email)), legacy), 401, "auth/invalid-code")
    # A salted one too.
    assert verify(client, app, challenge_of(client.sign_in(app, email=email)), codes[3]).status == 200
    assert len(backup_code_rows(app, uid)) == 9


def test_five_wrong_codes_kill_a_challenge(client, app):
    email, secret, _, _ = mfa_user(client, app)
    challenge = challenge_of(client.sign_in(app, email=email))
    for _ in range(4):
        assert_problem(verify(client, app, challenge, "000000"), 401, "auth/invalid-code")
    assert_problem(verify(client, app, challenge, "000001"), 401, "auth/code-expired")
    assert_problem(verify(client, app, challenge, code_at(secret, 1)), 401, "auth/code-expired")
    # A new sign-in opens a new challenge.
    assert verify(client, app, challenge_of(client.sign_in(app, email=email)), code_at(secret, 1)).status == 200


def test_the_budget_of_wrong_codes_spans_challenges_and_spares_passwords(client, configured_app_factory):
    app = configured_app_factory(rate_limits={"mfa_guess_per_user": "6/1h"})
    email, secret, _, _ = mfa_user(client, app)
    for _ in range(2):
        challenge = challenge_of(client.sign_in(app, email=email))
        for _ in range(3):
            assert_problem(verify(client, app, challenge, "999999"), 401, "auth/invalid-code")
    # Budget spent: even the right code in a fresh challenge is refused.
    challenge = challenge_of(client.sign_in(app, email=email))
    resp = verify(client, app, challenge, code_at(secret, 1))
    assert_problem(resp, 429, "auth/rate-limited")
    assert resp.header("Retry-After"), resp
    # The password still opens challenges: one limit does not lock the other.
    challenge_of(client.sign_in(app, email=email))


def test_every_first_factor_answers_202_for_an_mfa_user(client, provider_app, providers, smtp_sink):
    app = provider_app
    email = unique_email("mfa-google")
    body, google_claims = google_body(providers, email=email, email_verified=True)
    first = client.google_sign_in(app, **body)
    assert first.status == 200, first
    secret, _ = enrol_totp(client, app, first.data["access_token"])
    # Google again.
    body, _ = google_body(providers, sub=google_claims["sub"], email=email, email_verified=True)
    assert challenge_of(client.google_sign_in(app, **body))["methods"] == ["totp", "backup_code"]
    # An email code (the account's verified address).
    _, code = email_code(client, smtp_sink, app, email)
    challenge = challenge_of(client.email_code_verify(app, email=email, code=code))
    resp = verify(client, app, challenge, code_at(secret, 1))
    assert resp.status == 200, resp
    assert claims(resp.data)["amr"] == ["otp", "mfa"] and claims(resp.data)["aal"] == 2
    # Apple: its own account with TOTP.
    apple, apple_claims = apple_body(client, providers, app)
    signed = client.apple_sign_in(app, **apple)
    assert signed.status == 200, signed
    enrol_totp(client, app, signed.data["access_token"])
    apple, _ = apple_body(client, providers, app, sub=apple_claims["sub"])
    challenge_of(client.apple_sign_in(app, **apple))
    # Firebase: its own account with TOTP.
    fb_body, fb_claims = firebase_body(providers)
    signed = client.id_token_sign_in(app, **fb_body)
    assert signed.status == 200, signed
    enrol_totp(client, app, signed.data["access_token"])
    fb_body, _ = firebase_body(providers, sub=fb_claims["sub"])
    challenge_of(client.id_token_sign_in(app, **fb_body))


def test_step_up_for_disable_and_deletion(client, app, events):
    email, secret, codes, uid = mfa_user(client, app)
    full = verify(client, app, challenge_of(client.sign_in(app, email=email)), code_at(secret, 1)).data
    # An aal 2 session older than 5 minutes: refused, and nothing changes.
    db_tools.rows(f"update sessions set created_at = now() - interval '6 minutes' "
                  f"where app_id = {db_tools.literal(app['app_id'])} and id = {db_tools.literal(full['session_id'])}")
    resp = client.request("DELETE", "/v1/me/mfa", {"code": codes[0]}, app_key=app["app_key"], token=full["access_token"])
    assert_problem(resp, 403, "auth/reauth-required")
    resp = client.request("DELETE", "/v1/me", {"password": PASSWORD}, app_key=app["app_key"], token=full["access_token"])
    assert_problem(resp, 403, "auth/reauth-required")
    assert client.me(app, full["access_token"]).status == 200
    resp = client.change_password(app, full["access_token"], PASSWORD, "another long passphrase")
    assert_problem(resp, 403, "auth/reauth-required")
    # A fresh aal 2 session: a wrong code is refused, a current one turns MFA off.
    fresh = verify(client, app, challenge_of(client.sign_in(app, email=email)), codes[1]).data
    resp = client.request("DELETE", "/v1/me/mfa", {"code": "123"}, app_key=app["app_key"], token=fresh["access_token"])
    assert_problem(resp, 401, "auth/invalid-code")
    resp = client.request("DELETE", "/v1/me/mfa", {"code": codes[2]}, app_key=app["app_key"], token=fresh["access_token"])
    assert_no_content(resp)
    events.wait_for("mfa.disabled", lambda body: body["uid"] == uid and body["reason"] == "user")
    signed = client.sign_in(app, email=email)
    assert signed.status == 200 and claims(signed.data)["aal"] == 1, signed
    # Deletion of an MFA user: the aal 1 session that enrolled is refused, an aal 2 one deletes.
    email = unique_email("mfa")
    user = client.new_user(app, email=email)
    secret, _ = enrol_totp(client, app, user["access_token"])
    resp = client.request("DELETE", "/v1/me", {"password": PASSWORD}, app_key=app["app_key"], token=user["access_token"])
    assert_problem(resp, 403, "auth/reauth-required")
    full = verify(client, app, challenge_of(client.sign_in(app, email=email)), code_at(secret, 1)).data
    resp = client.request("DELETE", "/v1/me", {"password": PASSWORD}, app_key=app["app_key"], token=full["access_token"])
    assert_no_content(resp)
    assert client.sign_in(app, email=email).status == 401


def test_enrolment_changes_need_aal2_once_mfa_is_on(client, app):
    email = unique_email("mfa")
    user = client.new_user(app, email=email)
    secret, _ = enrol_totp(client, app, user["access_token"])
    resp = client.post("/v1/me/mfa/backup-codes", app_key=app["app_key"], token=user["access_token"])
    assert_problem(resp, 403, "auth/reauth-required")
    full = fully_signed_in(client, app, email, secret, 1)
    resp = client.post("/v1/me/mfa/backup-codes", app_key=app["app_key"], token=full["access_token"])
    assert resp.status == 200 and len(resp.data["backup_codes"]) == 10, resp
    resp = client.post("/v1/me/mfa/totp", app_key=app["app_key"], token=full["access_token"])
    assert_problem(resp, 409, "auth/mfa-already-enabled")


def test_sms_needs_a_verified_phone_and_guests_cannot_enrol(client, app):
    # The SMS factor end to end: test_mfa_sms.py.
    user = client.new_user(app)
    resp = client.post("/v1/me/mfa/sms", app_key=app["app_key"], token=user["access_token"])
    assert_problem(resp, 422, "auth/validation-failed")
    guest, _ = client.new_guest(app)
    resp = client.post("/v1/me/mfa/totp", app_key=app["app_key"], token=guest["access_token"])
    assert_problem(resp, 422, "auth/validation-failed")


def test_email_second_factor_end_to_end(client, app, smtp_sink, events):
    email = unique_email("mfa-mail")
    user = client.new_user(app, email=email)
    token = user["access_token"]
    _, code = email_verification_code(client, smtp_sink, app, token, email)
    assert client.verify_email(app, email, code, token=token).status == 200
    mark = smtp_sink.mark()
    resp = client.post("/v1/me/mfa/email", app_key=app["app_key"], token=token)
    assert resp.status == 202, resp
    code = code_from(smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT))
    assert_problem(client.post("/v1/me/mfa/email/confirm", {"code": f"{(int(code) + 1) % 10**6:06d}"},
                               app_key=app["app_key"], token=token), 401, "auth/invalid-code")
    resp = client.post("/v1/me/mfa/email/confirm", {"code": code}, app_key=app["app_key"], token=token)
    assert resp.status == 200 and len(resp.data["backup_codes"]) == 10, resp
    events.wait_for("mfa.enabled", lambda body: body["uid"] == user["user"]["uid"] and body["method"] == "email")
    # Password sign-in: 202, and the challenge's code arrives by mail.
    mark = smtp_sink.mark()
    challenge = challenge_of(client.sign_in(app, email=email))
    assert challenge["methods"] == ["email", "backup_code"], challenge
    code = code_from(smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT))
    resp = verify(client, app, challenge, code, method="email")
    assert resp.status == 200, resp
    assert claims(resp.data)["amr"] == ["pwd", "otp", "mfa"] and claims(resp.data)["aal"] == 2
    full = resp.data
    # A passwordless first factor never counts as both: an email-code sign-in needs a backup code.
    _, code = email_code(client, smtp_sink, app, email)
    challenge = challenge_of(client.email_code_verify(app, email=email, code=code))
    assert challenge["methods"] == ["backup_code"], challenge
    assert_problem(verify(client, app, challenge, "123456"), 401, "auth/invalid-code")
    # Turning it off with a freshly mailed code.
    mark = smtp_sink.mark()
    assert client.post("/v1/me/mfa/email", app_key=app["app_key"], token=full["access_token"]).status == 202
    code = code_from(smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT))
    resp = client.request("DELETE", "/v1/me/mfa", {"code": code}, app_key=app["app_key"], token=full["access_token"])
    assert_no_content(resp)
    events.wait_for("mfa.disabled", lambda body: body["uid"] == user["user"]["uid"])


def test_verify_validates_its_body(client, app):
    assert_problem(client.post("/v1/auth/mfa/verify", {"code": "123456"}, app_key=app["app_key"]),
                   422, "auth/validation-failed")
    assert_problem(client.post("/v1/auth/mfa/verify", {"challenge_token": "mfa_nope", "code": "123456"},
                               app_key=app["app_key"]), 401, "auth/code-expired")
    assert_problem(client.post("/v1/auth/mfa/verify", {"challenge_token": "mfa_x", "code": "1", "method": "carrier"},
                               app_key=app["app_key"]), 422, "auth/validation-failed")


def test_the_app_backend_resets_the_mfa_of_a_user_who_lost_every_factor(client, app, other_app, events):
    """Recovery (docs/api-contract.md, MFA): POST /v1/admin/users/{uid}/mfa/reset with the app's secret key
    removes every factor; the next sign-in is plain tokens again, mfa.disabled says admin_reset,
    and the call is audited. A user's token, or another app's key, resets nothing."""
    from admin_tools import admin, audit_rows
    email, _, _, uid = mfa_user(client, app)
    user_token = client.new_user(app)["access_token"]
    assert admin(client, app, "POST", f"/v1/admin/users/{uid}/mfa/reset", key=user_token).status == 401
    assert admin(client, app, "POST", f"/v1/admin/users/{uid}/mfa/reset", key=other_app["secret_key"]).status in (401, 404)
    assert client.sign_in(app, email=email).status == 202
    resp = admin(client, app, "POST", f"/v1/admin/users/{uid}/mfa/reset")
    assert resp.status == 200 and resp.json["data"]["mfa_enabled"] is False, resp
    signed = client.sign_in(app, email=email)
    assert signed.status == 200 and claims(signed.data)["aal"] == 1, signed
    events.wait_for("mfa.disabled", lambda body: body["uid"] == uid and body["reason"] == "admin_reset")
    assert any(row["action"] == "admin.users.mfa_reset" and row["target"] == f"user:{uid}"
               for row in audit_rows(client, app))
