"""Passwordless sign-in with an emailed code: POST /v1/auth/email-code/send mails a 6-digit code
(10 minutes, single use, replaced by a new send, dead after 5 wrong guesses), and
POST /v1/auth/email-code/verify signs in with it, creating the account when there is none. Also
the mail itself: sender, subject, magic link, per-app sender and templates."""

import uuid
from urllib.parse import quote

import pytest

import db_tools
from identity_client import assert_problem, assert_session_works, public_user, unique_email
from mail_flows import (CODE_TTL, MAIL_FROM_ADDRESS, MAIL_FROM_NAME, MAX_WRONG_CODES, email_code,
                        email_code_signed_in, expire_codes, other_code, password_reset_code,
                        without_request_id)
from provider_flows import google_body
from smtp_sink import code_from

DEEP_LINK_URL = "https://app.example/auth"


def _fresh_code(client, smtp_sink, app, email, not_this):
    """A new send whose code differs from `not_this` (one in a million sends repeats it)."""
    for _ in range(3):
        message, code = email_code(client, smtp_sink, app, email)
        if code != not_this:
            return message, code
    pytest.fail(f"three sends in a row mailed the same code {not_this}")


# --- send -----------------------------------------------------------------------------------


def test_send_answers_202_and_mails_a_code(client, smtp_sink, app):
    email = unique_email("otp")
    mark = smtp_sink.mark()
    resp = client.email_code_send(app, email)
    assert resp.status == 202, resp
    assert resp.header("Content-Type").split(";")[0].strip() == "application/json"
    assert without_request_id(resp.json) == {"data": {"expires_in": CODE_TTL}}, resp.json
    message = smtp_sink.wait_for(email, after=mark)
    assert message.to == email, message
    assert message.from_name == MAIL_FROM_NAME, message.from_header
    assert message.from_address == MAIL_FROM_ADDRESS, message.from_header
    assert app["name"] in message.subject, message.subject
    assert len(code_from(message)) == 6


def test_send_answers_the_same_whether_the_account_exists_or_not(client, smtp_sink, app):
    existing = client.new_user(app)["user"]["email"]
    unknown = unique_email("nobody")
    answers = []
    for email in (existing, unknown):
        mark = smtp_sink.mark()
        resp = client.email_code_send(app, email)
        assert resp.status == 202, resp
        answers.append(without_request_id(resp.json))
        # Either way a code is mailed: for an unknown email it signs up.
        code_from(smtp_sink.wait_for(email, after=mark))
    assert answers[0] == answers[1], answers


@pytest.mark.parametrize("email", ["not-an-email", "a@b", "a b@c.com"])
def test_send_with_a_malformed_email_is_422(client, app, email):
    assert_problem(client.email_code_send(app, email), 422, "auth/invalid-email")


# --- verify ---------------------------------------------------------------------------------


def test_verify_creates_the_account_with_the_email_verified(client, smtp_sink, app):
    email = unique_email("new")
    _, code = email_code(client, smtp_sink, app, email)
    data = email_code_signed_in(client, app, email, code, is_new_user=True, first_name="Ada",
                                last_name="Lovelace")
    user = data["user"]
    assert user["first_name"] == "Ada" and user["last_name"] == "Lovelace", user
    assert user["has_password"] is False, user
    assert user["is_guest"] is False, user
    me = client.me(app, data["access_token"])
    assert me.status == 200, me
    assert public_user(me.data) == public_user(user), (me.data, user)
    assert_session_works(client, app, data)


def test_verify_signs_in_an_existing_password_user(client, smtp_sink, app):
    signed_up = client.new_user(app, first_name="Grace")
    user = signed_up["user"]
    assert user["email_verified"] is False
    _, code = email_code(client, smtp_sink, app, user["email"])
    data = email_code_signed_in(client, app, user["email"], code, is_new_user=False)
    assert data["user"]["uid"] == user["uid"], data["user"]
    assert data["user"]["first_name"] == "Grace", data["user"]
    assert data["session_id"] != signed_up["session_id"]
    assert client.me(app, data["access_token"]).data["email_verified"] is True
    # This was the first proof of the address on an unverified account: the password set
    # before it (by whoever registered the address) and its sessions are gone (docs/api-contract.md,
    # "Operating the service": email ownership); see the pre-account hijacking tests below.
    assert data["user"]["has_password"] is False, data["user"]
    assert_problem(client.sign_in(app, email=user["email"]), 401, "auth/invalid-credential")
    assert_problem(client.me(app, signed_up["access_token"]), 401, "auth/invalid-token")


def test_a_code_is_single_use(client, smtp_sink, app):
    email = unique_email()
    _, code = email_code(client, smtp_sink, app, email)
    email_code_signed_in(client, app, email, code, is_new_user=True)
    assert_problem(client.email_code_verify(app, email=email, code=code), 401, "auth/invalid-code")


def test_a_wrong_code_is_401_and_the_right_one_still_works(client, smtp_sink, app):
    email = unique_email()
    _, code = email_code(client, smtp_sink, app, email)
    assert_problem(client.email_code_verify(app, email=email, code=other_code(code)), 401,
                   "auth/invalid-code")
    email_code_signed_in(client, app, email, code, is_new_user=True)


@pytest.mark.parametrize("wrong, works", [(MAX_WRONG_CODES - 1, True), (MAX_WRONG_CODES, False)])
def test_a_code_dies_after_five_wrong_guesses(client, smtp_sink, app, wrong, works):
    email = unique_email()
    _, code = email_code(client, smtp_sink, app, email)
    for i in range(wrong):
        guess = f"{(int(code) + 1 + i) % 10**6:06d}"
        assert_problem(client.email_code_verify(app, email=email, code=guess), 401,
                       "auth/invalid-code")
    if works:
        email_code_signed_in(client, app, email, code, is_new_user=True)
    else:
        assert_problem(client.email_code_verify(app, email=email, code=code), 401,
                       "auth/invalid-code")


def test_a_new_send_replaces_the_old_code(client, smtp_sink, configured_app_factory):
    # A resend within a minute is rate limited (code_resend_per_address); this app allows it.
    app = configured_app_factory(rate_limits={"code_resend_per_address": "10/1s"})
    email = unique_email()
    _, first = email_code(client, smtp_sink, app, email)
    _, second = _fresh_code(client, smtp_sink, app, email, not_this=first)
    assert_problem(client.email_code_verify(app, email=email, code=first), 401, "auth/invalid-code")
    email_code_signed_in(client, app, email, second, is_new_user=True)


def test_an_expired_code_is_401_code_expired(client, smtp_sink, app):
    email = unique_email()
    _, code = email_code(client, smtp_sink, app, email)
    expire_codes(app)
    assert_problem(client.email_code_verify(app, email=email, code=code), 401, "auth/code-expired")


def test_verify_without_any_code_sent_is_401(client, app):
    assert_problem(client.email_code_verify(app, email=unique_email(), code="123456"), 401,
                   "auth/invalid-code")


def test_codes_are_stored_hashed_only(client, smtp_sink, app):
    email = unique_email()
    _, code = email_code(client, smtp_sink, app, email)
    app_id = db_tools.literal(app["app_id"])
    assert db_tools.value(f"select count(*) from verification_codes where app_id = {app_id}") == "1"
    leaks = db_tools.rows(f"select count(*) from verification_codes v where v.app_id = {app_id} "
                          f"and v::text like {db_tools.literal('%' + code + '%')}")
    assert leaks == [["0"]], f"the code {code} is stored in plaintext"
    # Still good: looking did not spend it.
    email_code_signed_in(client, app, email, code, is_new_user=True)


def test_a_code_sent_in_one_app_does_not_verify_in_another(client, smtp_sink, app, other_app):
    email = unique_email()
    client.new_user(other_app, email=email)  # the same email has an account there too
    _, code = email_code(client, smtp_sink, app, email)
    assert_problem(client.email_code_verify(other_app, email=email, code=code), 401,
                   "auth/invalid-code")
    data = email_code_signed_in(client, app, email, code, is_new_user=True)
    assert client.sign_in(other_app, email=email).data["user"]["uid"] != data["user"]["uid"]


# --- the mail: magic link, sender, templates ------------------------------------------------


def test_mail_settings_are_printed_and_each_flag_keeps_the_others(stack, app):
    first = stack.configure_app(app["app_id"], deep_link_url=DEEP_LINK_URL,
                                mail_from_name="Recipes", mail_from_address="hello@recipes.example")
    assert first["deep_link_url"] == DEEP_LINK_URL, first
    assert first["mail_from_name"] == "Recipes", first
    assert first["mail_from_address"] == "hello@recipes.example", first
    second = stack.configure_app(app["app_id"], mail_from_name="Recipes & Co")
    assert second["mail_from_name"] == "Recipes & Co", second
    assert second["deep_link_url"] == DEEP_LINK_URL, second
    assert second["mail_from_address"] == "hello@recipes.example", second


def test_mail_carries_a_magic_link_when_the_app_has_a_deep_link_url(client, smtp_sink,
                                                                  configured_app_factory):
    app = configured_app_factory(deep_link_url=DEEP_LINK_URL)
    assert app["settings"]["deep_link_url"] == DEEP_LINK_URL, app["settings"]
    email = f"jane+{uuid.uuid4().hex[:12]}@example.com"
    message, code = email_code(client, smtp_sink, app, email)
    encoded = quote(email, safe="")
    assert "%2B" in encoded and "%40" in encoded, encoded
    link = f"{DEEP_LINK_URL}?mode=sign_in&email={encoded}&code={code}"
    assert link in message.text, f"no {link} in:\n{message.text}"
    # The link's code is the mail's code: it signs in.
    email_code_signed_in(client, app, email, code, is_new_user=True)


def test_app_sender_and_templates_are_used_and_html_is_escaped(client, smtp_sink,
                                                             configured_app_factory):
    app = configured_app_factory(
        mail_from_name="Recipes", mail_from_address="hello@recipes.example",
        mail_templates={"email_code.subject": "Code for {{app_name}}: {{code}}",
                        "email_code.text": "Your code: {{code}} (for {{email}})",
                        "email_code.html": "<p>Hi {{email}}</p>"})
    assert app["settings"]["mail_from_name"] == "Recipes", app["settings"]
    assert app["settings"]["mail_from_address"] == "hello@recipes.example", app["settings"]
    email = f"a&b-{uuid.uuid4().hex[:12]}@example.com"
    message, code = email_code(client, smtp_sink, app, email)
    assert message.from_name == "Recipes", message.from_header
    assert message.from_address == "hello@recipes.example", message.from_header
    assert message.subject == f"Code for {app['name']}: {code}", message.subject
    assert f"Your code: {code} (for {email})" in message.text, message.text
    escaped = email.replace("&", "&amp;")
    assert message.html is not None, f"no text/html part:\n{message.raw[:2000]!r}"
    assert f"<p>Hi {escaped}</p>" in message.html, message.html
    assert email not in message.html, f"the html part has the raw '&': {message.html}"
    email_code_signed_in(client, app, email, code, is_new_user=True)


def test_templates_of_one_app_do_not_reach_another(client, smtp_sink, configured_app_factory,
                                                   app):
    configured_app_factory(mail_from_name="Recipes", mail_from_address="hello@recipes.example",
                           mail_templates={"email_code.subject": "Recipes code {{code}}"})
    email = unique_email()
    message, _ = email_code(client, smtp_sink, app, email)
    assert message.from_address == MAIL_FROM_ADDRESS, message.from_header
    assert "Recipes" not in message.subject, message.subject
    assert app["name"] in message.subject, message.subject



# --- pre-account hijacking (docs/api-contract.md, "Operating the service": email ownership) -------


def _stranger_with_google(client, providers, app, email):
    """Someone registers `email` with a password and links their own Google account to it."""
    stranger = client.new_user(app, email=email)
    assert stranger["user"]["email_verified"] is False
    body, claims = google_body(providers)
    assert client.link_identity(app, stranger["access_token"], "google", body).status == 200
    return stranger, claims


def test_a_stranger_who_registered_the_address_first_keeps_nothing(client, smtp_sink, providers,
                                                                   provider_app_factory, events):
    """The victim later signs in with a mailed code: the stranger's password, sessions and
    provider link are gone, and user.updated says so."""
    app = provider_app_factory(providers=("google",))
    email = unique_email("victim")
    stranger, google_claims = _stranger_with_google(client, providers, app, email)

    _, code = email_code(client, smtp_sink, app, email)
    victim = email_code_signed_in(client, app, email, code, is_new_user=False)
    uid = victim["user"]["uid"]
    assert uid == stranger["user"]["uid"]
    assert victim["user"]["has_password"] is False, victim["user"]
    assert victim["user"]["providers"] == [], victim["user"]

    assert_problem(client.sign_in(app, email=email), 401, "auth/invalid-credential")
    assert_problem(client.me(app, stranger["access_token"]), 401, "auth/invalid-token")
    assert_problem(client.refresh(app, stranger["refresh_token"]), 401, "auth/refresh-token-revoked")
    # The stranger's Google account no longer leads here.
    body, _ = google_body(providers, sub=google_claims["sub"], email=google_claims["email"])
    resp = client.google_sign_in(app, **body)
    assert resp.status == 200 and resp.data["user"]["uid"] != uid, resp
    events.wait_for("user.updated", lambda b: b.get("uid") == uid and b.get("change") == "email_ownership_proved")
    assert client.me(app, victim["access_token"]).status == 200


def test_a_reset_on_an_unverified_account_drops_the_links_set_before_it(client, smtp_sink, providers,
                                                                       provider_app_factory):
    app = provider_app_factory(providers=("google",))
    email = unique_email("victim")
    stranger, _ = _stranger_with_google(client, providers, app, email)
    _, code = password_reset_code(client, smtp_sink, app, email)
    assert client.password_reset(app, email, code, "Victims-Own-Walrus-9!").status == 204
    signed_in = client.sign_in(app, email=email, password="Victims-Own-Walrus-9!")
    assert signed_in.status == 200, signed_in
    assert signed_in.data["user"]["providers"] == ["password"], signed_in.data["user"]
    assert signed_in.data["user"]["email_verified"] is True


def test_a_verified_account_keeps_its_password_and_sessions(client, smtp_sink, app):
    """Only the first proof on an unverified account takes it over: an owner who already
    proved the address loses nothing to a later code sign-in."""
    email = unique_email("owner")
    owner = client.new_user(app, email=email)
    db_tools.rows("update users set email_verified = true "
                  f"where uid = {db_tools.literal(owner['user']['uid'])}")
    _, code = email_code(client, smtp_sink, app, email)
    email_code_signed_in(client, app, email, code, is_new_user=False)
    assert client.me(app, owner["access_token"]).status == 200
    assert client.sign_in(app, email=email).status == 200
