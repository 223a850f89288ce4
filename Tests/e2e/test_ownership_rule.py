"""The account-takeover rules (docs/api-contract.md, "Account": ways in; "Operating the service":
email ownership):

- The first proof of an unverified address (a mailed code, a reset) removes every way in a
  squatter could have set before it: password, provider links, passkeys, the phone, every second
  factor and the backup codes, so the owner is not stopped at the squatter's MFA challenge and
  the squatter's passkey or phone no longer leads in.
- One count of "ways in" (password, each provider, each passkey, a verified phone the app texts,
  a verified email) decides every removal: 409 auth/last-sign-in-method only when nothing would
  be left."""

import pytest

import db_tools
import webauthn_authenticator as wa
from identity_client import assert_no_content, assert_problem, unique_email
from mail_flows import email_code, email_code_signed_in, password_reset_code
from provider_flows import firebase_signed_in, google_body, google_signed_in
from test_mfa import challenge_of, enrol_totp
from test_phone import code_of, french_mobile, send, sent, sms_files, verify as phone_verify, wait_sms_file

RP_ID = "ownership.example.test"
ORIGIN = "https://ownership.example.test"


@pytest.fixture
def ways_app(provider_app_factory):
    """Google, Firebase, passkeys and SMS to France (+33) and the UK (+44): every kind of way in.
    The resend cooldowns are off, so a test may send two codes to one address or number."""
    return provider_app_factory(providers=("google", "firebase"), webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN],
                                sms_allowed_calling_codes="33,44",
                                rate_limits={"sms_resend_per_number": "off", "code_resend_per_address": "off"})


def add_passkey(client, app, token):
    """Registers a software passkey while signed in: (credential, the passkey's JSON)."""
    options = client.post("/v1/me/passkeys/options", app_key=app["app_key"], token=token)
    assert options.status == 200, options
    cred, registration = wa.create(options.data, ORIGIN)
    resp = client.post("/v1/me/passkeys", {"response": registration}, app_key=app["app_key"], token=token)
    assert resp.status == 201, resp
    return cred, resp.data


def passkey_sign_in(client, app, cred):
    """A usernameless passkey sign-in with `cred`: the verify answer."""
    started = client.post("/v1/auth/passkey/options", {}, app_key=app["app_key"])
    assert started.status == 200, started
    assertion = wa.get(cred, started.data["options"], ORIGIN)
    return client.post("/v1/auth/passkey/verify", {"flow_id": started.data["flow_id"], "response": assertion},
                       app_key=app["app_key"])


def passkeys_of(client, app, token):
    resp = client.get("/v1/me/passkeys", app_key=app["app_key"], token=token)
    assert resp.status == 200, resp
    return resp.data


def delete_passkey(client, app, token, passkey):
    return client.delete(f"/v1/me/passkeys/{passkey['id']}", app_key=app["app_key"], token=token)


def link_phone(stack, client, app, token, phone):
    """POST /v1/me/phone, then the code the SMS carried: the phone is the account's, verified."""
    # Counted before the send: the mailer may write the SMS before the 202 is read.
    before = len(sms_files(stack, phone))
    session = sent(client.post("/v1/me/phone", {"phone": phone}, app_key=app["app_key"], token=token))
    code = code_of(wait_sms_file(stack, phone, count=before + 1))
    resp = client.post("/v1/me/phone/verify", {"session_id": session, "code": code},
                       app_key=app["app_key"], token=token)
    assert resp.status == 200 and resp.data["phone"] == phone, resp


def phone_signed_in(stack, client, app, phone):
    """A phone-code sign-in: the verify answer."""
    before = len(sms_files(stack, phone))
    session = sent(send(client, app, phone))
    return phone_verify(client, app, session, code_of(wait_sms_file(stack, phone, count=before + 1)))


def mfa_status(client, app, token):
    resp = client.get("/v1/me/mfa", app_key=app["app_key"], token=token)
    assert resp.status == 200, resp
    return resp.data


def squatter_with_everything(stack, client, providers, app, email):
    """Someone registers `email` with a password before its owner, then adds a passkey, a
    verified phone, their Google account and TOTP with backup codes (TOTP last: with MFA on,
    changing a way in needs a second factor). Returns what they set."""
    squatter = client.new_user(app, email=email)
    assert squatter["user"]["email_verified"] is False
    token = squatter["access_token"]
    cred, passkey = add_passkey(client, app, token)
    phone = french_mobile()
    link_phone(stack, client, app, token, phone)
    body, google_claims = google_body(providers)
    assert client.link_identity(app, token, "google", body).status == 200
    secret, backup_codes = enrol_totp(client, app, token)
    # The squatter's factors are in force: a first factor now stops at a challenge.
    challenge_of(client.sign_in(app, email=email))
    return {"data": squatter, "uid": squatter["user"]["uid"], "cred": cred, "passkey": passkey, "phone": phone,
            "google": google_claims, "backup_codes": backup_codes}


# --- the ownership rule ---------------------------------------------------------------------------

def test_the_owners_code_sign_in_removes_everything_the_squatter_set(stack, client, smtp_sink, providers,
                                                                    ways_app, events):
    email = unique_email("victim")
    squatter = squatter_with_everything(stack, client, providers, ways_app, email)
    uid = squatter["uid"]

    _, code = email_code(client, smtp_sink, ways_app, email)
    # Tokens at once (200, amr ["otp"]), not a 202 challenge for the squatter's TOTP.
    owner = email_code_signed_in(client, ways_app, email, code, is_new_user=False)
    token = owner["access_token"]
    assert owner["user"]["uid"] == uid
    user = owner["user"]
    assert user["has_password"] is False and user["providers"] == [], user
    assert user["mfa_enabled"] is False and user.get("phone") is None, user

    status = mfa_status(client, ways_app, token)
    assert status["enabled"] is False and status["methods"] == [], status
    assert status["backup_codes_remaining"] == 0, status
    assert db_tools.value("select count(*) from mfa_backup_codes "
                          f"where app_id = {db_tools.literal(ways_app['app_id'])} and uid = {db_tools.literal(uid)}") == "0"
    assert passkeys_of(client, ways_app, token) == []
    assert client.me(ways_app, token).data.get("phone") is None

    # Nothing the squatter set leads in any more.
    assert_problem(passkey_sign_in(client, ways_app, squatter["cred"]), 401, "auth/invalid-passkey")
    by_phone = phone_signed_in(stack, client, ways_app, squatter["phone"])
    assert by_phone.status == 200 and by_phone.data["user"]["uid"] != uid, by_phone
    assert by_phone.data["is_new_user"] is True, by_phone.data
    body, _ = google_body(providers, sub=squatter["google"]["sub"], email=squatter["google"]["email"])
    by_google = client.google_sign_in(ways_app, **body)
    assert by_google.status == 200 and by_google.data["user"]["uid"] != uid, by_google
    assert_problem(client.sign_in(ways_app, email=email), 401, "auth/invalid-credential")
    assert_problem(client.me(ways_app, squatter["data"]["access_token"]), 401, "auth/invalid-token")

    # The events say what went.
    updated = events.wait_for("user.updated", lambda b: b.get("uid") == uid
                              and b.get("change") == "email_ownership_proved").body
    assert updated["removed"] == ["password", "identity:google", "passkey:" + squatter["passkey"]["id"], "phone",
                                  "mfa:totp", "backup_codes"], updated
    events.wait_for("passkey.removed", lambda b: b.get("uid") == uid and b.get("passkey_id") == squatter["passkey"]["id"])
    events.wait_for("mfa.disabled", lambda b: b.get("uid") == uid and b.get("reason") == "email_ownership_proved")

    # The owner's account works as any other: a second code signs in without a challenge.
    _, code = email_code(client, smtp_sink, ways_app, email)
    email_code_signed_in(client, ways_app, email, code, is_new_user=False)


def test_a_reset_on_an_unverified_account_removes_the_squatters_factors_and_passkeys(stack, client, smtp_sink,
                                                                                     providers, ways_app):
    email = unique_email("victim")
    squatter = squatter_with_everything(stack, client, providers, ways_app, email)
    _, code = password_reset_code(client, smtp_sink, ways_app, email)
    assert client.password_reset(ways_app, email, code, "Owners-Own-Walrus-7!").status == 204
    # The owner's new password signs in at once: no challenge for the squatter's TOTP.
    signed_in = client.sign_in(ways_app, email=email, password="Owners-Own-Walrus-7!")
    assert signed_in.status == 200, signed_in
    user = signed_in.data["user"]
    assert user["providers"] == ["password"] and user["mfa_enabled"] is False and user.get("phone") is None, user
    assert passkeys_of(client, ways_app, signed_in.data["access_token"]) == []
    assert_problem(passkey_sign_in(client, ways_app, squatter["cred"]), 401, "auth/invalid-passkey")


def test_a_verified_account_keeps_its_passkeys_phone_and_factors(stack, client, smtp_sink, ways_app):
    """Only the first proof on an unverified account removes anything: an owner who proved the
    address already keeps what they set."""
    email = unique_email("owner")
    _, code = email_code(client, smtp_sink, ways_app, email)
    owner = email_code_signed_in(client, ways_app, email, code, is_new_user=True)
    token = owner["access_token"]
    cred, _ = add_passkey(client, ways_app, token)
    phone = french_mobile()
    link_phone(stack, client, ways_app, token, phone)
    enrol_totp(client, ways_app, token)
    _, code = email_code(client, smtp_sink, ways_app, email)
    challenge_of(client.email_code_verify(ways_app, email=email, code=code))
    # A passkey with user verification is two factors by itself: it still signs in.
    by_passkey = passkey_sign_in(client, ways_app, cred)
    assert by_passkey.status == 200 and by_passkey.data["user"]["uid"] == owner["user"]["uid"], by_passkey
    assert mfa_status(client, ways_app, token)["enabled"] is True
    assert client.me(ways_app, token).data["phone"] == phone


# --- one rule for the last way in ---------------------------------------------------------------

def test_a_google_user_with_a_passkey_can_unlink_google_and_then_not_delete_the_passkey(client, providers,
                                                                                       ways_app):
    # Google does not vouch for the address here: the email is not a way in, so the passkey
    # is the only other one.
    data, _ = google_signed_in(client, providers, ways_app, is_new_user=True, email_verified=False)
    assert data["user"]["email_verified"] is False, data["user"]
    token = data["access_token"]
    cred, passkey = add_passkey(client, ways_app, token)
    assert_no_content(client.unlink_identity(ways_app, token, "google"))
    assert client.me(ways_app, token).data["providers"] == []
    # Now the passkey is the last way in.
    assert_problem(delete_passkey(client, ways_app, token, passkey), 409, "auth/last-sign-in-method")
    assert [p["id"] for p in passkeys_of(client, ways_app, token)] == [passkey["id"]]
    signed_in = passkey_sign_in(client, ways_app, cred)
    assert signed_in.status == 200 and signed_in.data["user"]["uid"] == data["user"]["uid"], signed_in


def test_a_google_only_user_without_a_verified_email_cannot_unlink_google(client, providers, ways_app):
    data, _ = google_signed_in(client, providers, ways_app, is_new_user=True, email_verified=False)
    assert_problem(client.unlink_identity(ways_app, data["access_token"], "google"), 409, "auth/last-sign-in-method")
    assert client.me(ways_app, data["access_token"]).data["providers"] == ["google"]


def test_a_verified_email_is_a_way_in(client, smtp_sink, providers, ways_app):
    """Every app signs in by mailed code, so a Google user whose address Google verified keeps a
    way in without Google: the unlink is allowed, and the code signs in to the same account."""
    data, claims = google_signed_in(client, providers, ways_app, is_new_user=True)
    assert data["user"]["email_verified"] is True, data["user"]
    assert_no_content(client.unlink_identity(ways_app, data["access_token"], "google"))
    _, code = email_code(client, smtp_sink, ways_app, claims["email"])
    again = email_code_signed_in(client, ways_app, claims["email"], code, is_new_user=False)
    assert again["user"]["uid"] == data["user"]["uid"]


def test_a_verified_phone_is_a_way_in_while_the_app_texts_its_number(stack, client, providers, ways_app):
    phone = french_mobile()
    signed_up = phone_signed_in(stack, client, ways_app, phone)
    assert signed_up.status == 200 and signed_up.data["is_new_user"] is True, signed_up
    token = signed_up.data["access_token"]
    # A phone-only user adds a passkey and Google: either may go, the phone stays.
    _, first = add_passkey(client, ways_app, token)
    assert_no_content(delete_passkey(client, ways_app, token, first))
    body, _ = google_body(providers, email_verified=False)
    assert client.link_identity(ways_app, token, "google", body).status == 200
    assert_no_content(client.unlink_identity(ways_app, token, "google"))

    # Once the app no longer texts +33, the number cannot receive a sign-in code: the passkey
    # is the last way in.
    _, second = add_passkey(client, ways_app, token)
    stack.configure_app(ways_app["app_id"], sms_allowed_calling_codes="44")
    try:
        assert_problem(delete_passkey(client, ways_app, token, second), 409, "auth/last-sign-in-method")
    finally:
        stack.configure_app(ways_app["app_id"], sms_allowed_calling_codes="33,44")
    assert_no_content(delete_passkey(client, ways_app, token, second))
    assert passkeys_of(client, ways_app, token) == []
    # And the phone still signs in to that account.
    again = phone_signed_in(stack, client, ways_app, phone)
    assert again.status == 200 and again.data["user"]["uid"] == signed_up.data["user"]["uid"], again


def test_a_phone_only_a_provider_named_is_not_a_way_in(client, providers, ways_app):
    """A number from a Firebase token was never proved by a code here: it does not count."""
    phone = french_mobile()
    data, _ = firebase_signed_in(client, providers, ways_app, is_new_user=True, phone_number=phone,
                                 sign_in_provider="phone")
    token = data["access_token"]
    assert data["user"]["phone"] == phone and data["user"].get("email") is None, data["user"]
    assert_problem(client.unlink_identity(ways_app, token, "firebase"), 409, "auth/last-sign-in-method")
    assert client.me(ways_app, token).data["providers"] == ["firebase"]
