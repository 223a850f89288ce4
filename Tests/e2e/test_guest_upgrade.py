"""Guest upgrade: a sign-up or sign-in call that carries a guest's `Authorization: Bearer` turns
that guest into the permanent account: the same uid, its data kept (profile, devices, sessions),
`is_guest` false, the guest secret forgotten. When the identity or email already belongs to
another account the answer is 409 `auth/account-exists`, the guest stays as it was, and the nonce,
token or code is not spent: the same body without the guest token signs in to that account."""

import pytest

import db_tools
from identity_client import (PASSWORD, assert_problem, assert_token_response, unique_email)
from jwt_tools import split
from mail_flows import email_code, email_code_signed_in
from provider_flows import (amr, apple_body, apple_signed_in, firebase_body, firebase_signed_in,
                            google_body, google_signed_in)
from provider_standin import unique_phone

EXISTS = "auth/account-exists"


def _guest(client, app, first_name=None):
    """A fresh guest, with a first name set through PATCH /v1/me when given and a push device
    registered. Returns (data, secret, device)."""
    guest, secret = client.new_guest(app, is_new_user=True)
    if first_name is not None:
        patched = client.patch_me(app, guest["access_token"], {"first_name": first_name})
        assert patched.status == 200, patched
    device = client.new_device(app, guest["access_token"])
    return guest, secret, device


def _upgraded(resp, app, guest, status=200):
    """The answer of an upgrading call: the token response of the guest's own uid, no longer a
    guest. Returns the data."""
    assert resp.status == status, resp
    data = resp.data
    assert_token_response(data, is_new_user=False, expires_in=app["access_token_ttl"])
    user = data["user"]
    assert user["uid"] == guest["user"]["uid"], (user, guest["user"])
    assert user["is_guest"] is False, user
    claims = split(data["access_token"])[1]
    assert claims["is_guest"] is False, claims
    assert claims["sub"] == guest["user"]["uid"], claims
    return data


def _me(client, app, token):
    me = client.me(app, token)
    assert me.status == 200, me
    return me.data


def _assert_still_guest(client, app, guest, secret):
    """The guest is untouched: its token still works and shows a guest, and its secret still
    signs in to the same guest."""
    me = _me(client, app, guest["access_token"])
    assert me["uid"] == guest["user"]["uid"] and me["is_guest"] is True, me
    assert me["providers"] == [] and me["email"] is None, me
    again, _ = client.new_guest(app, secret, is_new_user=False)
    assert again["user"]["uid"] == guest["user"]["uid"], again["user"]
    assert again["user"]["is_guest"] is True, again["user"]


# --- sign-up --------------------------------------------------------------------------------


def test_sign_up_with_a_guest_token_upgrades_the_guest_and_keeps_its_data(client, app):
    guest, _, device = _guest(client, app, first_name="Guesty")
    email = unique_email("upgraded")
    data = _upgraded(client.sign_up(app, email=email, token=guest["access_token"]), app, guest,
                     status=201)
    user = data["user"]
    assert user["email"] == email, user
    assert user["has_password"] is True, user
    assert user["providers"] == ["password"], user
    assert user["first_name"] == "Guesty", user
    assert amr(data) == ["pwd"], amr(data)
    me = _me(client, app, data["access_token"])
    assert me["is_guest"] is False and me["email"] == email and me["first_name"] == "Guesty", me
    # The device the guest registered is still the user's.
    listed = client.devices(app, data["access_token"])
    assert listed.status == 200, listed
    assert device["id"] in [d["id"] for d in listed.data], listed.data
    # The password now signs in to the same uid.
    signed_in = client.sign_in(app, email=email, password=PASSWORD)
    assert signed_in.status == 200, signed_in
    assert signed_in.data["user"]["uid"] == guest["user"]["uid"]


def test_upgraded_guests_old_session_lives_on_as_the_permanent_account(client, app):
    guest, _, _ = _guest(client, app)
    email = unique_email("upgraded")
    _upgraded(client.sign_up(app, email=email, token=guest["access_token"]), app, guest,
              status=201)
    refreshed = client.refresh(app, guest["refresh_token"])
    assert refreshed.status == 200, refreshed
    assert refreshed.data["session_id"] == guest["session_id"], refreshed.data
    me = _me(client, app, refreshed.data["access_token"])
    assert me["uid"] == guest["user"]["uid"], me
    assert me["is_guest"] is False and me["email"] == email, me


def test_upgraded_guests_secret_is_forgotten(client, app):
    guest, secret, _ = _guest(client, app)
    _upgraded(client.sign_up(app, token=guest["access_token"]), app, guest, status=201)
    fresh, _ = client.new_guest(app, secret, is_new_user=True)
    assert fresh["user"]["uid"] != guest["user"]["uid"]
    assert fresh["user"]["is_guest"] is True


def test_sign_up_with_a_guest_token_and_an_email_of_another_account_is_409(client, app):
    email = unique_email("taken")
    owner = client.new_user(app, email=email)
    guest, secret, _ = _guest(client, app)
    assert_problem(client.sign_up(app, email=email, token=guest["access_token"]), 409, EXISTS)
    _assert_still_guest(client, app, guest, secret)
    signed_in = client.sign_in(app, email=email)
    assert signed_in.status == 200, signed_in
    assert signed_in.data["user"]["uid"] == owner["user"]["uid"]
    assert signed_in.data["user"]["is_guest"] is False


def test_a_non_guest_token_on_sign_up_is_ignored(client, app):
    someone = client.new_user(app)
    email = unique_email("new")
    resp = client.sign_up(app, email=email, token=someone["access_token"])
    assert resp.status == 201, resp
    assert_token_response(resp.data, is_new_user=True, expires_in=app["access_token_ttl"])
    assert resp.data["user"]["uid"] != someone["user"]["uid"]
    assert resp.data["user"]["email"] == email
    # The signed-in user is as it was.
    me = _me(client, app, someone["access_token"])
    assert me["uid"] == someone["user"]["uid"] and me["email"] == someone["user"]["email"], me


def test_a_garbage_bearer_on_sign_up_is_401(client, app):
    email = unique_email("nobody")
    assert_problem(client.sign_up(app, email=email, token="garbage"), 401, "auth/invalid-token")
    # Nothing was created.
    assert_problem(client.sign_in(app, email=email), 401, "auth/invalid-credential")


# --- email code -----------------------------------------------------------------------------


def test_email_code_verify_with_a_guest_token_upgrades_the_guest(client, smtp_sink, app):
    guest, _, device = _guest(client, app, first_name="Guesty")
    email = unique_email("otp")
    _, code = email_code(client, smtp_sink, app, email)
    data = _upgraded(client.email_code_verify(app, email=email, code=code,
                                              token=guest["access_token"]), app, guest)
    user = data["user"]
    assert user["email"] == email and user["email_verified"] is True, user
    assert user["first_name"] == "Guesty", user
    assert amr(data) == ["otp"], amr(data)
    me = _me(client, app, data["access_token"])
    assert me["is_guest"] is False and me["email_verified"] is True, me
    listed = client.devices(app, data["access_token"])
    assert listed.status == 200 and device["id"] in [d["id"] for d in listed.data], listed


def test_email_code_for_an_email_of_another_account_is_409_and_the_code_still_signs_in(
        client, smtp_sink, app):
    email = unique_email("taken")
    owner = client.new_user(app, email=email)
    guest, secret, _ = _guest(client, app)
    _, code = email_code(client, smtp_sink, app, email)
    assert_problem(client.email_code_verify(app, email=email, code=code,
                                            token=guest["access_token"]), 409, EXISTS)
    _assert_still_guest(client, app, guest, secret)
    # The 409 did not spend the code: without the guest token it signs in to the owner.
    data = email_code_signed_in(client, app, email, code, is_new_user=False)
    assert data["user"]["uid"] == owner["user"]["uid"]
    _assert_still_guest(client, app, guest, secret)


# --- providers ------------------------------------------------------------------------------


def test_google_with_a_guest_token_upgrades_the_guest_names_filling_only_gaps(client, providers,
                                                                             provider_app):
    guest, _, device = _guest(client, provider_app, first_name="Guesty")
    body, claims = google_body(providers, given_name="Ada", family_name="Lovelace",
                               picture="https://lh3.example.com/a/ada.png")
    data = _upgraded(client.google_sign_in(provider_app, token=guest["access_token"], **body),
                     provider_app, guest)
    user = data["user"]
    assert "google" in user["providers"], user
    assert user["email"] == claims["email"] and user["email_verified"] is True, user
    # The guest's own first name stays; what it did not have comes from the token.
    assert user["first_name"] == "Guesty", user
    assert user["last_name"] == "Lovelace", user
    assert user["photo_url"] == "https://lh3.example.com/a/ada.png", user
    assert amr(data) == ["google"], amr(data)
    me = _me(client, provider_app, data["access_token"])
    assert (me["first_name"], me["last_name"]) == ("Guesty", "Lovelace"), me
    listed = client.devices(provider_app, data["access_token"])
    assert listed.status == 200 and device["id"] in [d["id"] for d in listed.data], listed
    # From now on the Google account itself finds the former guest.
    later, _ = google_signed_in(client, providers, provider_app, is_new_user=False,
                                sub=claims["sub"], email=claims["email"])
    assert later["user"]["uid"] == guest["user"]["uid"]


def test_apple_with_a_guest_token_upgrades_the_guest(client, providers, provider_app):
    guest, secret, _ = _guest(client, provider_app)
    body, claims = apple_body(client, providers, provider_app)
    data = _upgraded(client.apple_sign_in(provider_app, token=guest["access_token"], **body),
                     provider_app, guest)
    assert "apple" in data["user"]["providers"], data["user"]
    assert data["user"]["email"] == claims["email"], data["user"]
    assert amr(data) == ["apple"], amr(data)
    later, _ = apple_signed_in(client, providers, provider_app, is_new_user=False,
                               sub=claims["sub"], email=claims["email"])
    assert later["user"]["uid"] == guest["user"]["uid"]
    fresh, _ = client.new_guest(provider_app, secret, is_new_user=True)
    assert fresh["user"]["uid"] != guest["user"]["uid"]


def test_firebase_with_a_guest_token_upgrades_the_guest(client, providers, provider_app):
    guest, _, _ = _guest(client, provider_app)
    phone = unique_phone()
    body, claims = firebase_body(providers, phone_number=phone, sign_in_provider="phone")
    data = _upgraded(client.id_token_sign_in(provider_app, token=guest["access_token"], **body),
                     provider_app, guest)
    assert "firebase" in data["user"]["providers"], data["user"]
    assert data["user"]["phone"] == phone, data["user"]
    later, _ = firebase_signed_in(client, providers, provider_app, is_new_user=False,
                                  uid=claims["sub"], phone_number=phone, sign_in_provider="phone")
    assert later["user"]["uid"] == guest["user"]["uid"]


@pytest.mark.parametrize("provider", ["google", "apple"])
def test_identity_of_another_account_is_409_and_the_same_body_signs_in_without_the_guest(
        client, providers, provider_app, provider):
    if provider == "google":
        owner, claims = google_signed_in(client, providers, provider_app, is_new_user=True)
        # The very token the client got from Google, sent twice.
        body, _ = google_body(providers, sub=claims["sub"], email=claims["email"])
        call = client.google_sign_in
    else:
        owner, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
        # A fresh nonce, sent twice: the 409 must not spend it.
        body, _ = apple_body(client, providers, provider_app, sub=claims["sub"],
                             email=claims["email"])
        call = client.apple_sign_in
    guest, secret, _ = _guest(client, provider_app)
    assert_problem(call(provider_app, token=guest["access_token"], **body), 409, EXISTS)
    _assert_still_guest(client, provider_app, guest, secret)

    resp = call(provider_app, **body)
    assert resp.status == 200, resp
    assert_token_response(resp.data, is_new_user=False,
                          expires_in=provider_app["access_token_ttl"])
    assert resp.data["user"]["uid"] == owner["user"]["uid"], resp.data["user"]
    assert amr(resp.data) == [provider], amr(resp.data)
    # Switching to the existing account left the guest as it was.
    _assert_still_guest(client, provider_app, guest, secret)


def test_google_with_the_verified_email_of_another_account_is_409(client, providers,
                                                                  provider_app):
    email = unique_email("taken")
    owner, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, email=email,
                               email_verified="true")
    guest, secret, _ = _guest(client, provider_app)
    body, _ = google_body(providers, email=email, email_verified=True)
    assert_problem(client.google_sign_in(provider_app, token=guest["access_token"], **body), 409,
                   EXISTS)
    _assert_still_guest(client, provider_app, guest, secret)
    uid = db_tools.literal(owner["user"]["uid"])
    assert db_tools.value("select count(*) from user_identities where provider = 'google' "
                          f"and uid = {uid}") == "0", "the refused upgrade linked Google anyway"
