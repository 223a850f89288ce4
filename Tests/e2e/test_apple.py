"""POST /v1/auth/apple: Sign in with Apple against the stand-in's keys. The identity token's
signature, issuer, audience (bundle or services id), expiry and nonce (the SHA-256 of a nonce
this service issued, single use, 5 minutes), the name Apple gives only once, and the
authorization-code exchange for an Apple refresh token kept encrypted."""

import json
import secrets
import time

import pytest

import db_tools
from identity_client import assert_problem
from jwt_tools import b64url_decode, b64url_encode, tamper_segment
from provider_flows import amr, apple_body, apple_signed_in
from provider_standin import APPLE_BUNDLE_ID, APPLE_SERVICES_ID, nonce_claim

INVALID = "auth/invalid-apple-token"
CODE_EXCHANGE_TIMEOUT = 10.0


def _nonce_hash_sql(nonce):
    return f"sha256(convert_to({db_tools.literal(nonce)}, 'UTF8'))"


def _expire_nonce(nonce):
    updated = db_tools.value(
        "with aged as (update auth_nonces set expires_at = now() - interval '1 second' "
        f"where nonce_hash = {_nonce_hash_sql(nonce)} returning 1) select count(*) from aged")
    assert updated == "1", "no auth_nonces row has the SHA-256 of the raw nonce as nonce_hash"


def _identity_row(app, sub, columns):
    return db_tools.rows(f"select {columns} from user_identities "
                         f"where app_id={db_tools.literal(app['app_id'])} and provider='apple' "
                         f"and subject={db_tools.literal(sub)}")


def _with_claims(token, **changes):
    """The token with its payload changed and its signature kept (so no longer matching)."""
    head, body, sig = token.split(".")
    claims = json.loads(b64url_decode(body))
    claims.update(changes)
    return ".".join([head, b64url_encode(json.dumps(claims).encode()), sig])


# --- success -------------------------------------------------------------------------------------

def test_first_apple_sign_in_creates_the_user(client, providers, provider_app):
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    user = data["user"]
    assert user["email"] == claims["email"]
    assert user["email_verified"] is True
    assert "apple" in user["providers"], user
    assert user["has_password"] is False
    assert user["is_guest"] is False
    assert amr(data) == ["apple"]
    me = client.me(provider_app, data["access_token"])
    assert me.status == 200 and me.data["uid"] == user["uid"], me


def test_same_apple_sub_signs_in_to_the_same_user(client, providers, provider_app):
    first, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    again, _ = apple_signed_in(client, providers, provider_app, is_new_user=False,
                               sub=claims["sub"], email=claims["email"])
    assert again["user"]["uid"] == first["user"]["uid"]
    assert again["session_id"] != first["session_id"]
    assert amr(again) == ["apple"]


def test_services_id_audience_is_accepted(client, providers, provider_app):
    # Sign in with Apple on the web: the token's aud is the services id, not the bundle id.
    data, _ = apple_signed_in(client, providers, provider_app, is_new_user=True,
                              aud=APPLE_SERVICES_ID)
    assert "apple" in data["user"]["providers"]


@pytest.mark.parametrize("claim, verified", [
    pytest.param("true", True, id="string-true"),
    pytest.param(True, True, id="bool-true"),
    pytest.param("false", False, id="string-false"),
    pytest.param(False, False, id="bool-false"),
])
def test_email_verified_as_apple_sends_it(client, providers, provider_app, claim, verified):
    # Apple sends "true"/"false" as strings; a non-empty string is not "verified" by itself.
    data, claims = apple_signed_in(client, providers, provider_app, email_verified=claim)
    assert data["user"]["email"] == claims["email"]
    assert data["user"]["email_verified"] is verified, data["user"]


def test_later_token_without_email_keeps_the_email(client, providers, provider_app):
    first, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    again, _ = apple_signed_in(client, providers, provider_app, is_new_user=False,
                               sub=claims["sub"], without=("email", "email_verified"))
    assert again["user"]["uid"] == first["user"]["uid"]
    assert again["user"]["email"] == claims["email"]
    assert again["user"]["email_verified"] is True


# --- invalid tokens: 401, and the nonce stays usable -----------------------------------------------

def _now():
    return int(time.time())


# Each case: (kwargs for providers.apple_token given (providers, nonce), token mutator or None).
TOKEN_DEFECTS = {
    "wrong-aud": (lambda p, n: {"aud": "com.example.other"}, None),
    "aud-list-without-ours": (lambda p, n: {"aud": ["com.example.other"]}, None),
    "aud-of-google": (lambda p, n: {"aud": "web.apps.example"}, None),
    "wrong-iss": (lambda p, n: {"iss": "https://appleid.example.com"}, None),
    "google-iss": (lambda p, n: {"iss": "https://accounts.google.com"}, None),
    "expired": (lambda p, n: {"iat": _now() - 720, "exp": _now() - 120}, None),
    "bad-signature": (lambda p, n: {"signer": "unpublished", "kid": p.current_kid("apple")}, None),
    "signature-altered": (lambda p, n: {}, lambda t: tamper_segment(t, 2)),
    "payload-altered": (lambda p, n: {}, lambda t: _with_claims(t, email="mallory@example.com")),
    "signature-stripped": (lambda p, n: {}, lambda t: t.rsplit(".", 1)[0] + "."),
    "alg-none": (lambda p, n: {"alg": "none"}, None),
    "hs256-with-public-key": (lambda p, n: {"alg": "HS256"}, None),
    "unknown-kid": (lambda p, n: {"signer": "unpublished"}, None),
    "nonce-claim-missing": (lambda p, n: {"without": ("nonce",)}, None),
    "nonce-claim-is-the-raw-nonce": (lambda p, n: {"nonce_hash": n}, None),
    "nonce-claim-of-another-nonce": (lambda p, n: {"nonce_hash": nonce_claim(n + "x")}, None),
}


@pytest.mark.parametrize("defect", list(TOKEN_DEFECTS))
def test_invalid_identity_token_is_401_and_leaves_the_nonce_usable(client, providers,
                                                                     provider_app, defect):
    make_kwargs, mutate = TOKEN_DEFECTS[defect]
    nonce = client.new_nonce(provider_app)
    kwargs = make_kwargs(providers, nonce)
    kwargs.setdefault("nonce", nonce)
    if "nonce_hash" in kwargs or "nonce" in kwargs.get("without", ()):
        kwargs.pop("nonce")
    bad, claims = providers.apple_token(**kwargs)
    if mutate:
        bad = mutate(bad)
    assert_problem(client.apple_sign_in(provider_app, identity_token=bad, nonce=nonce), 401,
                   INVALID)
    # The refusal neither spent the nonce nor made an account: the same nonce with a valid
    # token for the same Apple user signs in, and that is the account's first sign-in.
    data, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, nonce=nonce,
                              sub=claims["sub"], email=claims.get("email"))
    assert amr(data) == ["apple"]


def test_unknown_kid_is_refused_even_after_a_refetch(stack, client, providers, provider_app):
    apple_signed_in(client, providers, provider_app)  # Apple's keys are cached now
    time.sleep(stack.jwks_refetch_interval + 0.1)     # a refetch is allowed again
    before = providers.fetch_count("apple")
    body, _ = apple_body(client, providers, provider_app, signer="unpublished")
    assert_problem(client.apple_sign_in(provider_app, **body), 401, INVALID)
    assert providers.fetch_count("apple") == before + 1, \
        "an unknown kid should make the service fetch Apple's keys again, once"


# --- the nonce ---------------------------------------------------------------------------------

def test_nonce_never_issued_is_refused(client, providers, provider_app):
    nonce = secrets.token_urlsafe(32)
    body, _ = apple_body(client, providers, provider_app, nonce=nonce)
    assert_problem(client.apple_sign_in(provider_app, **body), 401, INVALID)


def test_nonce_is_single_use(client, providers, provider_app):
    nonce = client.new_nonce(provider_app)
    body, claims = apple_body(client, providers, provider_app, nonce=nonce)
    assert client.apple_sign_in(provider_app, **body).status == 200
    # The very same request again (a replay), then a new token of the same user, then of
    # another user: all with the spent nonce.
    assert_problem(client.apple_sign_in(provider_app, **body), 401, INVALID)
    again, _ = apple_body(client, providers, provider_app, nonce=nonce, sub=claims["sub"],
                          email=claims["email"])
    assert_problem(client.apple_sign_in(provider_app, **again), 401, INVALID)
    other, _ = apple_body(client, providers, provider_app, nonce=nonce)
    assert_problem(client.apple_sign_in(provider_app, **other), 401, INVALID)


def test_expired_nonce_is_refused(client, providers, provider_app):
    nonce = client.new_nonce(provider_app)
    _expire_nonce(nonce)
    body, _ = apple_body(client, providers, provider_app, nonce=nonce)
    assert_problem(client.apple_sign_in(provider_app, **body), 401, INVALID)


def test_nonce_of_another_app_is_refused_and_stays_usable_at_home(client, providers,
                                                                   provider_app,
                                                                   other_provider_app):
    nonce = client.new_nonce(other_provider_app)
    body, claims = apple_body(client, providers, provider_app, nonce=nonce)
    assert_problem(client.apple_sign_in(provider_app, **body), 401, INVALID)
    data, _ = apple_signed_in(client, providers, other_provider_app, is_new_user=True,
                              nonce=nonce, sub=claims["sub"], email=claims["email"])
    assert amr(data) == ["apple"]


@pytest.mark.parametrize("body, location", [
    pytest.param({"nonce": "n"}, "body.identity_token", id="identity-token-missing"),
    pytest.param({"identity_token": None, "nonce": "n"}, "body.identity_token",
                 id="identity-token-null"),
    pytest.param({"identity_token": 42, "nonce": "n"}, "body.identity_token",
                 id="identity-token-number"),
    pytest.param({"identity_token": "t"}, "body.nonce", id="nonce-missing"),
    pytest.param({"identity_token": "t", "nonce": None}, "body.nonce", id="nonce-null"),
    pytest.param({"identity_token": "t", "nonce": ["n"]}, "body.nonce", id="nonce-array"),
])
def test_missing_or_non_string_fields_are_422(client, providers, provider_app, body, location):
    token, _ = providers.apple_token(nonce="n")
    body = {k: (token if v == "t" else v) for k, v in body.items()}
    resp = client.post("/v1/auth/apple", body, app_key=provider_app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed", locations=[location])


# --- the name Apple gives only once ------------------------------------------------------------

def test_name_of_the_first_sign_in_is_stored(client, providers, provider_app):
    data, _ = apple_signed_in(client, providers, provider_app, is_new_user=True,
                              fields={"first_name": "Jane", "last_name": "Appleseed"})
    assert (data["user"]["first_name"], data["user"]["last_name"]) == ("Jane", "Appleseed")
    me = client.me(provider_app, data["access_token"])
    assert (me.data["first_name"], me.data["last_name"]) == ("Jane", "Appleseed"), me


@pytest.mark.parametrize("later_fields", [
    pytest.param({}, id="absent"),
    pytest.param({"first_name": "", "last_name": ""}, id="empty"),
    pytest.param({"first_name": None, "last_name": None}, id="null"),
])
def test_later_sign_in_without_a_name_keeps_it(client, providers, provider_app, later_fields):
    first, claims = apple_signed_in(client, providers, provider_app, is_new_user=True,
                                    fields={"first_name": "Jane", "last_name": "Appleseed"})
    again, _ = apple_signed_in(client, providers, provider_app, is_new_user=False,
                               sub=claims["sub"], email=claims["email"], fields=later_fields)
    assert again["user"]["uid"] == first["user"]["uid"]
    assert (again["user"]["first_name"], again["user"]["last_name"]) == ("Jane", "Appleseed")
    me = client.me(provider_app, again["access_token"])
    assert (me.data["first_name"], me.data["last_name"]) == ("Jane", "Appleseed"), me


def test_name_sent_with_a_refused_token_is_recorded_on_the_retry(client, providers, provider_app):
    # Apple hands the name to the app once; the app keeps sending it until a sign-in succeeds.
    nonce = client.new_nonce(provider_app)
    now = int(time.time())
    expired, claims = providers.apple_token(nonce=nonce, iat=now - 720, exp=now - 120)
    names = {"first_name": "Jane", "last_name": "Appleseed"}
    assert_problem(client.apple_sign_in(provider_app, identity_token=expired, nonce=nonce,
                                        **names), 401, INVALID)
    data, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, nonce=nonce,
                              sub=claims["sub"], email=claims["email"], fields=names)
    assert (data["user"]["first_name"], data["user"]["last_name"]) == ("Jane", "Appleseed")


# --- the authorization code ----------------------------------------------------------------------

@pytest.mark.parametrize("aud", [APPLE_BUNDLE_ID, APPLE_SERVICES_ID])
def test_authorization_code_is_exchanged_and_the_refresh_token_kept_encrypted(
        client, providers, provider_app, aud):
    code = f"c_{secrets.token_hex(16)}"
    _, claims = apple_signed_in(client, providers, provider_app, is_new_user=True, aud=aud,
                                fields={"authorization_code": code})
    call = providers.wait_for_apple_token_call(lambda c: c["code"] == code,
                                               timeout=CODE_EXCHANGE_TIMEOUT)
    assert call is not None, f"no POST /apple/token with code {code} within " \
        f"{CODE_EXCHANGE_TIMEOUT}s; calls: {providers.apple_token_calls()[-5:]}"
    assert call["client_id"] == aud, call
    assert call["grant_type"] == "authorization_code", call
    assert call["client_secret_ok"], f"client secret refused: {call['reason']} " \
        f"(header {call['header']}, claims {call['claims']})"
    assert call["status"] == 200 and call["refresh_token"], call

    def stored():
        found = _identity_row(provider_app, claims["sub"], "apple_refresh_token_enc is not null")
        return found == [["t"]]
    assert client.wait_for(stored, timeout=CODE_EXCHANGE_TIMEOUT, interval=0.2), \
        "apple_refresh_token_enc not set on the user's Apple identity"
    blob = _identity_row(provider_app, claims["sub"], "encode(apple_refresh_token_enc, 'hex')")
    assert call["refresh_token"].encode().hex() not in blob[0][0], \
        "the Apple refresh token is stored in plaintext"
    # Exchanged once, not once per retry or per worker.
    time.sleep(1.0)
    calls = [c for c in providers.apple_token_calls() if c["code"] == code]
    assert len(calls) == 1, calls


def test_sign_in_without_a_code_calls_no_token_endpoint(client, providers, provider_app):
    before = len(providers.apple_token_calls())
    _, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    time.sleep(3.0)
    assert providers.apple_token_calls()[before:] == []
    found = _identity_row(provider_app, claims["sub"], "apple_refresh_token_enc is null")
    assert found == [["t"]], found
