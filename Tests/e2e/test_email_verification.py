"""Email verification: POST /v1/me/email/verification (signed in) mails a 6-digit code, at most
once a minute (429 auth/rate-limited with Retry-After otherwise); POST /v1/auth/email/verify
{email, code} answers the user with email_verified true.

Email ownership (docs/api-contract.md; pre-account hijacking): sent with the account's own access
token, the proof keeps the password, links and that session and ends the others; sent without
it (the code read by someone else, the address's owner), it is the rule in full: the password,
the links set before and every session are gone."""

from identity_client import assert_problem, assert_user_shape, public_user, unique_email
from mail_flows import EMAIL_VERIFICATION_COOLDOWN_SECONDS, email_verification_code, other_code


def _unverified_user(client, app):
    data = client.new_user(app)
    assert data["user"]["email_verified"] is False, data["user"]
    return data


def test_verification_mail_and_code_verify_the_email(client, smtp_sink, app):
    data = _unverified_user(client, app)
    email = data["user"]["email"]
    message, code = email_verification_code(client, smtp_sink, app, data["access_token"], email)
    assert message.to == email, message
    resp = client.verify_email(app, email, code, token=data["access_token"])
    assert resp.status == 200, resp
    user = resp.data
    assert_user_shape(user)
    assert user["uid"] == data["user"]["uid"], user
    assert user["email"] == email and user["email_verified"] is True, user
    me = client.me(app, data["access_token"])
    assert me.status == 200, me
    assert me.data["email_verified"] is True, me.data
    assert public_user(me.data) == public_user(user), (me.data, user)
    # Proved in its own session: the password stays.
    assert user["has_password"] is True, user
    assert client.sign_in(app, email=email).status == 200


def test_a_proof_in_session_ends_the_other_sessions_only(client, smtp_sink, app):
    data = _unverified_user(client, app)
    email = data["user"]["email"]
    other = client.sign_in(app, email=email)
    assert other.status == 200, other
    _, code = email_verification_code(client, smtp_sink, app, data["access_token"], email)
    assert client.verify_email(app, email, code, token=data["access_token"]).status == 200
    assert client.me(app, data["access_token"]).status == 200
    assert_problem(client.me(app, other.data["access_token"]), 401, "auth/invalid-token")


def test_a_stranger_who_registered_the_address_keeps_nothing_once_its_owner_verifies(client, smtp_sink, app, events):
    """The stranger signs up with the victim's address and asks for a verification mail; the
    victim enters the code they received (without the stranger's session): the stranger's
    password and session are gone."""
    stranger = _unverified_user(client, app)
    email = stranger["user"]["email"]
    uid = stranger["user"]["uid"]
    _, code = email_verification_code(client, smtp_sink, app, stranger["access_token"], email)
    resp = client.verify_email(app, email, code)
    assert resp.status == 200, resp
    assert resp.data["email_verified"] is True and resp.data["has_password"] is False, resp.data
    assert_problem(client.sign_in(app, email=email), 401, "auth/invalid-credential")
    assert_problem(client.me(app, stranger["access_token"]), 401, "auth/invalid-token")
    assert_problem(client.refresh(app, stranger["refresh_token"]), 401, "auth/refresh-token-revoked")
    events.wait_for("user.updated", lambda b: b.get("uid") == uid and b.get("change") == "email_ownership_proved")


def test_a_proof_with_another_users_token_is_not_in_session(client, smtp_sink, app):
    """The in-session rule needs the account's own session: a token of another account makes
    the proof an outsider's, so the password still goes."""
    stranger = _unverified_user(client, app)
    email = stranger["user"]["email"]
    someone = client.new_user(app)
    _, code = email_verification_code(client, smtp_sink, app, stranger["access_token"], email)
    resp = client.verify_email(app, email, code, token=someone["access_token"])
    assert resp.status == 200 and resp.data["has_password"] is False, resp
    assert client.me(app, someone["access_token"]).status == 200


def test_a_proof_with_a_bad_token_is_401_and_spends_nothing(client, smtp_sink, app):
    data = _unverified_user(client, app)
    email = data["user"]["email"]
    _, code = email_verification_code(client, smtp_sink, app, data["access_token"], email)
    assert_problem(client.verify_email(app, email, code, token=data["access_token"][:-4] + "AAAA"),
                   401, "auth/invalid-token")
    assert client.verify_email(app, email, code, token=data["access_token"]).status == 200


def test_a_second_request_within_a_minute_is_429_with_retry_after(client, smtp_sink, app):
    data = _unverified_user(client, app)
    email = data["user"]["email"]
    email_verification_code(client, smtp_sink, app, data["access_token"], email)
    mark = smtp_sink.mark()
    resp = client.request_email_verification(app, data["access_token"])
    assert_problem(resp, 429, "auth/rate-limited")
    retry_after = resp.header("Retry-After")
    assert retry_after is not None and retry_after.strip().isdigit(), \
        f"Retry-After is not whole seconds: {retry_after!r}"
    assert 1 <= int(retry_after) <= EMAIL_VERIFICATION_COOLDOWN_SECONDS, retry_after
    assert smtp_sink.collect_to(email, 1.0, after=mark) == [], "the refused request sent a mail"


def test_the_cooldown_is_per_user(client, smtp_sink, app):
    first = _unverified_user(client, app)
    second = _unverified_user(client, app)
    email_verification_code(client, smtp_sink, app, first["access_token"], first["user"]["email"])
    # Another user of the same app is not held back by the first one's request.
    email_verification_code(client, smtp_sink, app, second["access_token"],
                            second["user"]["email"])


def test_a_wrong_code_is_401_and_leaves_the_email_unverified(client, smtp_sink, app):
    data = _unverified_user(client, app)
    email = data["user"]["email"]
    _, code = email_verification_code(client, smtp_sink, app, data["access_token"], email)
    assert_problem(client.verify_email(app, email, other_code(code)), 401, "auth/invalid-code")
    assert client.me(app, data["access_token"]).data["email_verified"] is False
    # Fewer than five wrong guesses: the right code still works.
    resp = client.verify_email(app, email, code)
    assert resp.status == 200 and resp.data["email_verified"] is True, resp


def test_verify_without_any_code_sent_is_401(client, app):
    email = _unverified_user(client, app)["user"]["email"]
    assert_problem(client.verify_email(app, email, "123456"), 401, "auth/invalid-code")


def test_request_without_a_bearer_token_is_401(client, app):
    assert_problem(client.post("/v1/me/email/verification", app_key=app["app_key"]), 401,
                   "auth/invalid-token")


def test_a_verification_code_does_not_sign_in(client, smtp_sink, app):
    # Codes are for what they were sent for: an email-verification code is not a sign-in code.
    data = _unverified_user(client, app)
    email = data["user"]["email"]
    _, code = email_verification_code(client, smtp_sink, app, data["access_token"], email)
    assert_problem(client.email_code_verify(app, email=email, code=code), 401, "auth/invalid-code")
    resp = client.verify_email(app, email, code, token=data["access_token"])
    assert resp.status == 200 and resp.data["email_verified"] is True, resp


def test_verification_code_of_one_app_does_not_verify_in_another(client, smtp_sink, app,
                                                                  other_app):
    email = unique_email()
    data = client.new_user(app, email=email)
    there = client.new_user(other_app, email=email)
    _, code = email_verification_code(client, smtp_sink, app, data["access_token"], email)
    assert_problem(client.verify_email(other_app, email, code), 401, "auth/invalid-code")
    assert client.me(other_app, there["access_token"]).data["email_verified"] is False
    assert client.verify_email(app, email, code).status == 200
