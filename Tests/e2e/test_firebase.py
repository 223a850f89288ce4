"""POST /v1/auth/id-token {provider: "firebase", id_token}: a Firebase id token (its clients
signed in with Google or a phone number) checked against the stand-in's Firebase keys:
signature, issuer https://securetoken.google.com/<project>, audience the app's project id,
expiry, not issued in the future."""

import time

import pytest

from identity_client import assert_problem, unique_email
from jwt_tools import tamper_segment
from provider_flows import amr, firebase_body, firebase_signed_in
from provider_standin import FIREBASE_PROJECT_ID, unique_phone

INVALID = "auth/invalid-id-token"


def _now():
    return int(time.time())


def test_firebase_phone_user_is_created_with_the_phone(client, providers, provider_app):
    phone = unique_phone()
    data, _ = firebase_signed_in(client, providers, provider_app, is_new_user=True,
                                 phone_number=phone, sign_in_provider="phone")
    user = data["user"]
    assert user["phone"] == phone
    assert user["email"] is None
    assert "firebase" in user["providers"], user
    assert user["has_password"] is False
    assert amr(data) == ["firebase"]
    me = client.me(provider_app, data["access_token"])
    assert me.status == 200 and me.data["uid"] == user["uid"] and me.data["phone"] == phone, me


def test_firebase_email_user_gets_the_email(client, providers, provider_app):
    data, claims = firebase_signed_in(client, providers, provider_app, is_new_user=True,
                                      email=unique_email("firebase"))
    assert data["user"]["email"] == claims["email"]
    assert data["user"]["email_verified"] is True
    assert amr(data) == ["firebase"]


def test_same_firebase_uid_signs_in_to_the_same_user(client, providers, provider_app):
    phone = unique_phone()
    first, claims = firebase_signed_in(client, providers, provider_app, is_new_user=True,
                                       phone_number=phone, sign_in_provider="phone")
    again, _ = firebase_signed_in(client, providers, provider_app, is_new_user=False,
                                  uid=claims["sub"], phone_number=phone, sign_in_provider="phone")
    assert again["user"]["uid"] == first["user"]["uid"]
    assert again["session_id"] != first["session_id"]


TOKEN_DEFECTS = {
    "wrong-aud": (lambda p: {"aud": "other-project"}, None),
    "wrong-iss": (lambda p: {"iss": "https://securetoken.google.com/other-project"}, None),
    "google-iss": (lambda p: {"iss": "https://accounts.google.com"}, None),
    "expired": (lambda p: {"iat": _now() - 3720, "auth_time": _now() - 3720, "exp": _now() - 120},
                None),
    "iat-in-the-future": (lambda p: {"iat": _now() + 300}, None),
    "bad-signature": (lambda p: {"signer": "unpublished", "kid": p.current_kid("firebase")}, None),
    "signature-altered": (lambda p: {}, lambda t: tamper_segment(t, 2)),
    "alg-none": (lambda p: {"alg": "none"}, None),
    "hs256-with-public-key": (lambda p: {"alg": "HS256"}, None),
    "unknown-kid": (lambda p: {"signer": "unpublished"}, None),
}


@pytest.mark.parametrize("defect", list(TOKEN_DEFECTS))
def test_invalid_firebase_token_is_401(client, providers, provider_app, defect):
    make_kwargs, mutate = TOKEN_DEFECTS[defect]
    phone = unique_phone()
    body, claims = firebase_body(providers, phone_number=phone, **make_kwargs(providers))
    if mutate:
        body["id_token"] = mutate(body["id_token"])
    assert_problem(client.id_token_sign_in(provider_app, **body), 401, INVALID)
    firebase_signed_in(client, providers, provider_app, is_new_user=True, uid=claims["sub"],
                       phone_number=phone)


def test_firebase_claims_signed_by_a_google_key_are_401(client, providers, provider_app):
    token = providers.mint("google", providers.firebase_claims(phone_number=unique_phone()))
    assert_problem(client.id_token_sign_in(provider_app, provider="firebase", id_token=token),
                   401, INVALID)


@pytest.mark.parametrize("body, location", [
    pytest.param({"provider": "google", "id_token": "t"}, "body.provider", id="google"),
    pytest.param({"provider": "apple", "id_token": "t"}, "body.provider", id="apple"),
    pytest.param({"provider": "Firebase", "id_token": "t"}, "body.provider", id="capitalised"),
    pytest.param({"provider": "", "id_token": "t"}, "body.provider", id="empty"),
    pytest.param({"provider": 1, "id_token": "t"}, "body.provider", id="number"),
    pytest.param({"id_token": "t"}, "body.provider", id="provider-missing"),
    pytest.param({"provider": "firebase"}, "body.id_token", id="id-token-missing"),
    pytest.param({"provider": "firebase", "id_token": None}, "body.id_token", id="id-token-null"),
])
def test_bad_provider_or_missing_token_is_422(client, providers, provider_app, body, location):
    token, _ = providers.firebase_token(phone_number=unique_phone())
    body = {k: (token if v == "t" else v) for k, v in body.items()}
    resp = client.post("/v1/auth/id-token", body, app_key=provider_app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed", locations=[location])


def test_project_id_is_the_apps_own(client, providers, provider_app_factory):
    other = provider_app_factory(firebase_project_id="another-project")
    token, claims = providers.firebase_token(phone_number=unique_phone())
    assert claims["aud"] == FIREBASE_PROJECT_ID != "another-project"
    assert_problem(client.id_token_sign_in(other, provider="firebase", id_token=token), 401,
                   INVALID)
    firebase_signed_in(client, providers, other, is_new_user=True, project="another-project",
                       phone_number=unique_phone())
