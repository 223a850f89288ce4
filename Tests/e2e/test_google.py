"""POST /v1/auth/google: a Google id token checked against the stand-in's keys: signature,
issuer (both spellings), audience (any of the app's client ids), expiry, age (at most 5
minutes old, not from the future), and the nonce when the client sends one."""

import time

import pytest

from identity_client import assert_problem
from jwt_tools import tamper_segment
from provider_flows import amr, google_body, google_signed_in
from provider_standin import GOOGLE_CLIENT_IDS

INVALID = "auth/invalid-google-token"


def _now():
    return int(time.time())


def test_first_google_sign_in_creates_the_user_from_the_token(client, providers, provider_app):
    data, claims = google_signed_in(client, providers, provider_app, is_new_user=True,
                                    given_name="Ada", family_name="Lovelace",
                                    picture="https://lh3.example.com/a/ada.png")
    user = data["user"]
    assert user["email"] == claims["email"]
    assert user["email_verified"] is True
    assert (user["first_name"], user["last_name"]) == ("Ada", "Lovelace")
    assert user["photo_url"] == "https://lh3.example.com/a/ada.png"
    assert "google" in user["providers"], user
    assert user["has_password"] is False
    assert amr(data) == ["google"]
    me = client.me(provider_app, data["access_token"])
    assert me.status == 200 and me.data["uid"] == user["uid"], me


def test_same_google_sub_signs_in_to_the_same_user(client, providers, provider_app):
    first, claims = google_signed_in(client, providers, provider_app, is_new_user=True)
    again, _ = google_signed_in(client, providers, provider_app, is_new_user=False,
                                sub=claims["sub"], email=claims["email"])
    assert again["user"]["uid"] == first["user"]["uid"]
    assert again["session_id"] != first["session_id"]


@pytest.mark.parametrize("aud", GOOGLE_CLIENT_IDS)
def test_every_configured_client_id_is_accepted(client, providers, provider_app, aud):
    data, _ = google_signed_in(client, providers, provider_app, is_new_user=True, aud=aud)
    assert amr(data) == ["google"]


@pytest.mark.parametrize("iss", ["https://accounts.google.com", "accounts.google.com"])
def test_both_google_issuers_are_accepted(client, providers, provider_app, iss):
    google_signed_in(client, providers, provider_app, is_new_user=True, iss=iss)


def test_matching_nonce_is_accepted(client, providers, provider_app):
    google_signed_in(client, providers, provider_app, is_new_user=True, nonce="n-0123456789abcdef",
                     send_nonce="n-0123456789abcdef")


def test_nonce_claim_without_a_nonce_sent_is_accepted(client, providers, provider_app):
    # The nonce is checked when the client sends one; a client that does not is not refused.
    google_signed_in(client, providers, provider_app, is_new_user=True, nonce="n-0123456789abcdef")


def test_unverified_google_email_is_not_verified(client, providers, provider_app):
    data, claims = google_signed_in(client, providers, provider_app, is_new_user=True,
                                    email_verified=False)
    assert data["user"]["email"] == claims["email"]
    assert data["user"]["email_verified"] is False


# Each case: kwargs for google_body given the providers, and a token mutator or None.
TOKEN_DEFECTS = {
    "wrong-aud": (lambda p: {"aud": "android.apps.example"}, None),
    "aud-of-apple": (lambda p: {"aud": "com.example.app"}, None),
    "wrong-iss": (lambda p: {"iss": "https://accounts.google.com.example"}, None),
    "apple-iss": (lambda p: {"iss": "https://appleid.apple.com"}, None),
    "expired": (lambda p: {"iat": _now() - 240, "exp": _now() - 120}, None),
    "iat-6-minutes-ago": (lambda p: {"iat": _now() - 360}, None),
    "iat-5-minutes-ahead": (lambda p: {"iat": _now() + 300}, None),
    "bad-signature": (lambda p: {"signer": "unpublished", "kid": p.current_kid("google")}, None),
    "signature-altered": (lambda p: {}, lambda t: tamper_segment(t, 2)),
    "signature-stripped": (lambda p: {}, lambda t: t.rsplit(".", 1)[0] + "."),
    "alg-none": (lambda p: {"alg": "none"}, None),
    "hs256-with-public-key": (lambda p: {"alg": "HS256"}, None),
    "unknown-kid": (lambda p: {"signer": "unpublished"}, None),
    "nonce-differs": (lambda p: {"nonce": "n-claimed-0123456789", "send_nonce": "n-sent-0123456789"},
                      None),
    "nonce-sent-token-has-none": (lambda p: {"send_nonce": "n-sent-0123456789"}, None),
}


@pytest.mark.parametrize("defect", list(TOKEN_DEFECTS))
def test_invalid_google_token_is_401(client, providers, provider_app, defect):
    make_kwargs, mutate = TOKEN_DEFECTS[defect]
    body, claims = google_body(providers, **make_kwargs(providers))
    if mutate:
        body["id_token"] = mutate(body["id_token"])
    assert_problem(client.google_sign_in(provider_app, **body), 401, INVALID)
    # The refusal made no account: a valid token of the same Google user is its first sign-in.
    google_signed_in(client, providers, provider_app, is_new_user=True, sub=claims["sub"],
                     email=claims["email"])


def test_google_claims_signed_by_an_apple_key_are_401(client, providers, provider_app):
    # A real key of a real provider, but not Google's: each provider has its own key set.
    token = providers.mint("apple", providers.google_claims())
    assert_problem(client.google_sign_in(provider_app, id_token=token), 401, INVALID)


@pytest.mark.parametrize("body, location", [
    pytest.param({}, "body.id_token", id="id-token-missing"),
    pytest.param({"id_token": None}, "body.id_token", id="id-token-null"),
    pytest.param({"id_token": ["x"]}, "body.id_token", id="id-token-array"),
    pytest.param({"id_token": "t", "nonce": 42}, "body.nonce", id="nonce-number"),
])
def test_missing_or_non_string_fields_are_422(client, providers, provider_app, body, location):
    token, _ = providers.google_token()
    body = {k: (token if v == "t" else v) for k, v in body.items()}
    resp = client.post("/v1/auth/google", body, app_key=provider_app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed", locations=[location])
