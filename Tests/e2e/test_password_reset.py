"""Forgotten password: POST /v1/auth/password/forgot mails a 6-digit code (202 whether or not the
account exists, and no mail for an unknown email), /password/verify-code checks it without
spending it, and /password/reset sets the new password and ends every session."""

from identity_client import (PASSWORD, assert_no_content, assert_problem, assert_session_ended,
                             assert_session_works, unique_email)
from mail_flows import expire_codes, other_code, password_reset_code, without_request_id

NEW_PASSWORD = "Persimmon-Otter-77?"


def _signed_in(client, app, email, password):
    resp = client.sign_in(app, email=email, password=password)
    assert resp.status == 200, f"sign-in with {password!r} refused: {resp!r}"
    return resp.data


def _refused(client, app, email, password):
    assert_problem(client.sign_in(app, email=email, password=password), 401,
                   "auth/invalid-credential")


# --- forgot ---------------------------------------------------------------------------------


def test_forgot_answers_the_same_for_unknown_emails_and_mails_only_known_ones(client, smtp_sink,
                                                                              app):
    known = client.new_user(app)["user"]["email"]
    unknown = unique_email("nobody")
    mark = smtp_sink.mark()
    answers = {}
    for email in (known, unknown):
        resp = client.password_forgot(app, email)
        assert resp.status == 202, resp
        answers[email] = without_request_id(resp.json) if resp.body else None
    assert answers[known] == answers[unknown], answers
    smtp_sink.wait_for(known, after=mark)
    assert smtp_sink.collect_to(unknown, 2.0, after=mark) == [], \
        "a password-reset mail went to an email without an account"


def test_forgot_mails_a_code(client, smtp_sink, app):
    email = client.new_user(app)["user"]["email"]
    message, code = password_reset_code(client, smtp_sink, app, email)
    assert message.to == email, message
    assert len(code) == 6


# --- verify-code ----------------------------------------------------------------------------


def test_verify_code_does_not_spend_the_code(client, smtp_sink, app):
    email = client.new_user(app)["user"]["email"]
    _, code = password_reset_code(client, smtp_sink, app, email)
    for _ in range(2):
        resp = client.password_verify_code(app, email, code)
        assert resp.status == 200, resp
        assert resp.data == {"valid": True}, resp.json
    assert_no_content(client.password_reset(app, email, code, NEW_PASSWORD))
    _signed_in(client, app, email, NEW_PASSWORD)


def test_verify_code_with_a_wrong_code_is_not_valid(client, smtp_sink, app):
    email = client.new_user(app)["user"]["email"]
    _, code = password_reset_code(client, smtp_sink, app, email)
    resp = client.password_verify_code(app, email, other_code(code))
    assert resp.status == 200, resp
    assert resp.data == {"valid": False}, resp.json


# --- reset ----------------------------------------------------------------------------------


def test_reset_sets_the_new_password_and_ends_every_session(client, smtp_sink, app):
    email = unique_email()
    sessions = [client.new_user(app, email=email), _signed_in(client, app, email, PASSWORD)]
    bystander = client.new_user(app)  # another user of the same app keeps their session
    _, code = password_reset_code(client, smtp_sink, app, email)
    assert_no_content(client.password_reset(app, email, code, NEW_PASSWORD))
    _refused(client, app, email, PASSWORD)
    after = _signed_in(client, app, email, NEW_PASSWORD)
    assert after["user"]["uid"] == sessions[0]["user"]["uid"]
    for tokens in sessions:
        assert_session_ended(client, app, tokens)
    assert_session_works(client, app, after)
    assert_session_works(client, app, bystander)


def test_reset_with_a_weak_password_is_422_and_changes_nothing(client, smtp_sink, app):
    email = client.new_user(app)["user"]["email"]
    _, code = password_reset_code(client, smtp_sink, app, email)
    assert_problem(client.password_reset(app, email, code, "password123"), 422,
                   "auth/weak-password", locations=["body.password"])
    _signed_in(client, app, email, PASSWORD)


def test_reset_with_a_wrong_code_is_401_and_changes_nothing(client, smtp_sink, app):
    email = unique_email()
    tokens = client.new_user(app, email=email)
    _, code = password_reset_code(client, smtp_sink, app, email)
    assert_problem(client.password_reset(app, email, other_code(code), NEW_PASSWORD), 401,
                   "auth/invalid-code")
    _refused(client, app, email, NEW_PASSWORD)
    _signed_in(client, app, email, PASSWORD)
    assert_session_works(client, app, tokens)


def test_reset_code_is_single_use(client, smtp_sink, app):
    email = client.new_user(app)["user"]["email"]
    _, code = password_reset_code(client, smtp_sink, app, email)
    assert_no_content(client.password_reset(app, email, code, NEW_PASSWORD))
    assert_problem(client.password_reset(app, email, code, "Another-Strong-Pass-9"), 401,
                   "auth/invalid-code")
    resp = client.password_verify_code(app, email, code)
    assert resp.status == 200 and resp.data == {"valid": False}, resp
    _signed_in(client, app, email, NEW_PASSWORD)


def test_reset_with_an_expired_code_is_401_code_expired(client, smtp_sink, app):
    email = client.new_user(app)["user"]["email"]
    _, code = password_reset_code(client, smtp_sink, app, email)
    expire_codes(app)
    assert_problem(client.password_reset(app, email, code, NEW_PASSWORD), 401, "auth/code-expired")
    _signed_in(client, app, email, PASSWORD)


def test_reset_without_any_code_sent_is_401(client, app):
    email = client.new_user(app)["user"]["email"]
    assert_problem(client.password_reset(app, email, "123456", NEW_PASSWORD), 401,
                   "auth/invalid-code")


def test_a_reset_code_of_one_app_is_not_valid_in_another(client, smtp_sink, app, other_app):
    email = unique_email()
    client.new_user(app, email=email)
    client.new_user(other_app, email=email)
    _, code = password_reset_code(client, smtp_sink, app, email)
    resp = client.password_verify_code(other_app, email, code)
    assert resp.status == 200 and resp.data == {"valid": False}, resp
    assert_problem(client.password_reset(other_app, email, code, NEW_PASSWORD), 401,
                   "auth/invalid-code")
    _signed_in(client, other_app, email, PASSWORD)
    # Still good where it was sent.
    assert_no_content(client.password_reset(app, email, code, NEW_PASSWORD))
