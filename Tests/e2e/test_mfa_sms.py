"""The SMS second factor (docs/api-contract.md, "MFA"), end to end against the real gateway,
token worker and the mailer's SMS channel (.sms files, as in test_phone.py): enrolment to the
account's verified phone, the sign-in challenge's code texted when the challenge opens,
POST /v1/auth/mfa/verify with it (a wrong one counted on the challenge), turning MFA off with a
texted code, and phone sign-in's SMS-pumping policy applied to the factor's codes."""

import random
import time

import db_tools
from identity_client import PASSWORD, assert_no_content, assert_problem, unique_email
from test_mfa import challenge_of, claims
from test_mfa import verify as mfa_verify
from test_phone import code_of, french_mobile, phone_app, refusals, send, sent, sms_files, verify as phone_verify, \
    wait_sms_file  # noqa: F401 (phone_app is a fixture)


def other(code):
    """A wrong code: the right one plus one."""
    return f"{(int(code) + 1) % 10**6:06d}"


def link_phone(stack, client, app, token, phone):
    """POST /v1/me/phone + /verify with the texted code: the account's verified phone."""
    before = len(sms_files(stack, phone))
    session = sent(client.post("/v1/me/phone", {"phone": phone}, app_key=app["app_key"], token=token))
    code = code_of(wait_sms_file(stack, phone, count=before + 1))
    done = client.post("/v1/me/phone/verify", {"session_id": session, "code": code}, app_key=app["app_key"], token=token)
    assert done.status == 200 and done.data["phone"] == phone, done


def user_with_phone(stack, client, app, label="mfa-sms", phone=None):
    """A new password user whose verified phone is `phone` (a French mobile by default):
    (email, sign-up answer, phone)."""
    email = unique_email(label)
    user = client.new_user(app, email=email)
    phone = phone or french_mobile()
    link_phone(stack, client, app, user["access_token"], phone)
    return email, user, phone


def texted_code(stack, phone, before):
    """The code of the SMS sent to `phone` after `before` earlier ones (the MFA text)."""
    text = wait_sms_file(stack, phone, count=before + 1)
    assert "verification code" in text, text
    return code_of(text)


def start_sms(client, app, token):
    resp = client.post("/v1/me/mfa/sms", app_key=app["app_key"], token=token)
    assert resp.status == 202 and resp.data == {"expires_in": 600}, resp
    return resp


def sms_mfa_user(stack, client, app):
    """A password user with a verified phone and the SMS factor on: (email, phone, uid, backup codes)."""
    email, user, phone = user_with_phone(stack, client, app)
    token = user["access_token"]
    before = len(sms_files(stack, phone))
    start_sms(client, app, token)
    code = texted_code(stack, phone, before)
    resp = client.post("/v1/me/mfa/sms/confirm", {"code": code}, app_key=app["app_key"], token=token)
    assert resp.status == 200 and len(resp.data["backup_codes"]) == 10, resp
    return email, phone, user["user"]["uid"], resp.data["backup_codes"]


def challenge_attempts(app, challenge_token):
    found = db_tools.rows(
        f"select attempts from mfa_challenges where app_id = {db_tools.literal(app['app_id'])} "
        f"and token_hash = sha256(convert_to({db_tools.literal(challenge_token)}, 'UTF8'))")
    return int(found[0][0]) if found else None


def test_enrol_sign_in_with_the_texted_code_and_turn_mfa_off(stack, client, phone_app, events):
    app = phone_app
    email, user, phone = user_with_phone(stack, client, app)
    token, uid = user["access_token"], user["user"]["uid"]

    # Enrolment: the code goes to the verified phone; a wrong one is refused, the right one
    # switches the factor on and answers the backup codes.
    before = len(sms_files(stack, phone))
    start_sms(client, app, token)
    code = texted_code(stack, phone, before)
    assert_problem(client.post("/v1/me/mfa/sms/confirm", {"code": other(code)}, app_key=app["app_key"], token=token),
                   401, "auth/invalid-code")
    resp = client.post("/v1/me/mfa/sms/confirm", {"code": code}, app_key=app["app_key"], token=token)
    assert resp.status == 200 and len(resp.data["backup_codes"]) == 10, resp
    events.wait_for("mfa.enabled", lambda body: body["uid"] == uid and body["method"] == "sms")
    status = client.get("/v1/me/mfa", app_key=app["app_key"], token=token).data
    assert status["enabled"] is True and status["methods"] == ["sms"], status
    assert status["backup_codes_remaining"] == 10, status

    # Password sign-in: 202, the challenge lists sms, and its code is texted as it opens.
    before = len(sms_files(stack, phone))
    challenge = challenge_of(client.sign_in(app, email=email))
    assert challenge["methods"] == ["sms", "backup_code"], challenge
    code = texted_code(stack, phone, before)
    # A wrong code is refused and counted on the challenge.
    assert challenge_attempts(app, challenge["challenge_token"]) == 0
    assert_problem(mfa_verify(client, app, challenge, other(code), method="sms"), 401, "auth/invalid-code")
    assert challenge_attempts(app, challenge["challenge_token"]) == 1
    resp = mfa_verify(client, app, challenge, code, method="sms")
    assert resp.status == 200, resp
    assert claims(resp.data)["amr"] == ["pwd", "otp", "mfa"] and claims(resp.data)["aal"] == 2, claims(resp.data)
    full = resp.data
    # Without `method` the code's shape finds the SMS factor too (a new challenge, a new text).
    before = len(sms_files(stack, phone))
    challenge = challenge_of(client.sign_in(app, email=email))
    resp = mfa_verify(client, app, challenge, texted_code(stack, phone, before))
    assert resp.status == 200 and claims(resp.data)["aal"] == 2, resp

    # Turning it off: POST /v1/me/mfa/sms texts a current code, which DELETE /v1/me/mfa takes.
    before = len(sms_files(stack, phone))
    start_sms(client, app, full["access_token"])
    code = texted_code(stack, phone, before)
    resp = client.request("DELETE", "/v1/me/mfa", {"code": other(code)}, app_key=app["app_key"],
                          token=full["access_token"])
    assert_problem(resp, 401, "auth/invalid-code")
    resp = client.request("DELETE", "/v1/me/mfa", {"code": code}, app_key=app["app_key"], token=full["access_token"])
    assert_no_content(resp)
    events.wait_for("mfa.disabled", lambda body: body["uid"] == uid and body["reason"] == "user")
    signed = client.sign_in(app, email=email)
    assert signed.status == 200 and claims(signed.data)["aal"] == 1, signed


def test_enrolment_needs_a_verified_phone(stack, client, phone_app):
    app = phone_app
    user = client.new_user(app)
    token = user["access_token"]
    resp = client.post("/v1/me/mfa/sms", app_key=app["app_key"], token=token)
    assert_problem(resp, 422, "auth/validation-failed")
    assert any(error.get("location") == "phone" for error in resp.json.get("errors", [])), resp.json
    # A phone set without verification (as an admin or an import sets one) is not enough.
    phone = french_mobile()
    db_tools.rows(f"update users set phone = {db_tools.literal(phone)}, phone_verified = false "
                  f"where app_id = {db_tools.literal(app['app_id'])} and uid = {db_tools.literal(user['user']['uid'])}")
    assert_problem(client.post("/v1/me/mfa/sms", app_key=app["app_key"], token=token), 422, "auth/validation-failed")
    time.sleep(0.5)
    assert sms_files(stack, phone) == []
    # Nothing was started: a confirmation finds no factor.
    assert_problem(client.post("/v1/me/mfa/sms/confirm", {"code": "123456"}, app_key=app["app_key"], token=token),
                   401, "auth/invalid-code")
    status = client.get("/v1/me/mfa", app_key=app["app_key"], token=token).data
    assert status["enabled"] is False, status


def test_a_phone_sign_in_is_not_finished_by_the_sms_factor(stack, client, phone_app):
    """A passwordless first factor never counts as both: a phone-code sign-in of a user whose
    second factor is that same phone gets no SMS offered (a backup code finishes it)."""
    app = phone_app
    _, phone, uid, backup_codes = sms_mfa_user(stack, client, app)
    before = len(sms_files(stack, phone))
    session = sent(send(client, app, phone))
    code = code_of(wait_sms_file(stack, phone, count=before + 1))
    challenge = challenge_of(phone_verify(client, app, session, code))
    assert challenge["methods"] == ["backup_code"], challenge
    time.sleep(0.5)
    assert len(sms_files(stack, phone)) == before + 1, "an SMS factor code was texted for a phone sign-in"
    assert_problem(mfa_verify(client, app, challenge, "123456", method="sms"), 401, "auth/invalid-code")
    done = mfa_verify(client, app, challenge, backup_codes[0])
    assert done.status == 200 and done.data["user"]["uid"] == uid, done
    assert claims(done.data)["amr"] == ["sms", "otp", "mfa"], claims(done.data)


def test_a_calling_code_the_app_does_not_allow_answers_like_a_send_and_texts_nothing(
        stack, client, configured_app_factory):
    app = configured_app_factory(sms_allowed_calling_codes="33,44", rate_limits={"sms_resend_per_number": "off"})
    email, user, phone = user_with_phone(stack, client, app,
                                         phone="+447700" + "".join(random.choice("0123456789") for _ in range(6)))
    token = user["access_token"]
    # The app stops allowing the UK: the factor's code is refused like phone sign-in refuses
    # (the same 202, nothing stored or texted, the refusal counted).
    stack.configure_app(app["app_id"], sms_allowed_calling_codes="33")
    texts = len(sms_files(stack, phone))
    counted = refusals(stack, "calling_code")
    start_sms(client, app, token)
    time.sleep(1.0)
    assert refusals(stack, "calling_code") == counted + 1, "refusal not counted"
    assert len(sms_files(stack, phone)) == texts, "an SMS went to a calling code the app does not allow"
    assert_problem(client.post("/v1/me/mfa/sms/confirm", {"code": "123456"}, app_key=app["app_key"], token=token),
                   401, "auth/invalid-code")
    assert client.get("/v1/me/mfa", app_key=app["app_key"], token=token).data["enabled"] is False
    # Allowed again, the same request texts a code that switches the factor on.
    stack.configure_app(app["app_id"], sms_allowed_calling_codes="33,44")
    start_sms(client, app, token)
    code = texted_code(stack, phone, texts)
    resp = client.post("/v1/me/mfa/sms/confirm", {"code": code}, app_key=app["app_key"], token=token)
    assert resp.status == 200, resp


def test_the_per_number_cap_holds_challenge_texts_back(stack, client, configured_app_factory):
    """Sign-in challenges text under the same caps as phone sign-in: past the per-number cap a
    challenge still opens (the password was right) but nothing is texted."""
    app = configured_app_factory(sms_allowed_calling_codes="33",
                                 rate_limits={"sms_resend_per_number": "off", "sms_send_per_number": "3/1h"})
    email, phone, _, _ = sms_mfa_user(stack, client, app)  # the link and the enrolment: 2 texts
    before = len(sms_files(stack, phone))
    challenge_of(client.sign_in(app, email=email))
    texted_code(stack, phone, before)  # the third
    counted = refusals(stack, "sms_send_per_number")
    challenge = challenge_of(client.sign_in(app, email=email))
    assert challenge["methods"] == ["sms", "backup_code"], challenge
    time.sleep(1.0)
    assert refusals(stack, "sms_send_per_number") == counted + 1
    assert len(sms_files(stack, phone)) == before + 1


def test_graphql_enables_the_sms_factor_and_a_login_names_it(stack, client, phone_app):
    """Seed 003's enableTwoFactor(method: sms) / verifyTwoFactorSetup(method: sms) reach the same
    routes; a login then answers requiresTwoFactor with twoFactorMethod sms."""
    from test_graphql import TWO_FACTOR, gql, ok
    app = phone_app
    email, user, phone = user_with_phone(stack, client, app, "mfa-sms-gql")
    token = user["access_token"]
    before = len(sms_files(stack, phone))
    enabled = ok(gql(client, app, TWO_FACTOR[2], {"input": {"method": "sms"}}, token=token))["enableTwoFactor"]
    assert enabled["success"] is True and enabled["method"] == "sms" and enabled["expiresIn"] == 600, enabled
    code = texted_code(stack, phone, before)
    confirmed = ok(gql(client, app, TWO_FACTOR[3], {"input": {"code": code, "method": "sms"}}, token=token))
    assert len(confirmed["verifyTwoFactorSetup"]["backupCodes"]) == 10, confirmed
    before = len(sms_files(stack, phone))
    challenge = ok(gql(client, app, 'mutation { login(input: {identifier: "%s", password: "%s"}) '
                                    '{ token requiresTwoFactor twoFactorToken twoFactorMethod } }'
                        % (email, PASSWORD)))["login"]
    assert challenge["requiresTwoFactor"] is True and challenge["twoFactorMethod"] == "sms", challenge
    done = ok(gql(client, app, TWO_FACTOR[5], {"twoFactorToken": challenge["twoFactorToken"],
                                               "code": texted_code(stack, phone, before)}))["verifyLoginTwoFactor"]
    assert done["token"] and done["requiresTwoFactor"] is False, done
