"""Access tokens, checked the way an app backend would: offline, against the published JWKS,
with our own RSA code. Plus tokens minted here with the app's real key to reach the expiry and
audience checks."""

import time
import uuid

import pytest

from identity_client import assert_problem
from jwt_tools import (b64url_uint, encode, load_signing_key, public_pem_from_jwk, sign_hs256,
                       sign_rs256, split, verify_rs256)


def _jwks(client, app):
    resp = client.get(f"/v1/apps/{app['app_id']}/jwks.json")
    assert resp.status == 200, resp
    return resp.json


def test_apps_create_prints_the_app(base_url, app_factory):
    app = app_factory(name="printed", access_token_ttl=900)
    assert app["name"] == "printed"
    assert app["app_id"].startswith("app_")
    assert app["app_key"].startswith("ak_")
    assert app["secret_key"].startswith("sk_")
    assert app["issuer"] == f"{base_url}/v1/apps/{app['app_id']}"
    assert app["access_token_ttl"] == 900
    assert app_factory()["access_token_ttl"] == 3600


def test_jwks_lists_rsa_signing_keys_with_cache_control(client, app):
    client.new_user(app)  # whether keys are made eagerly or on first use, one exists now
    resp = client.get(f"/v1/apps/{app['app_id']}/jwks.json")
    assert resp.status == 200, resp
    assert "max-age" in (resp.header("Cache-Control") or ""), resp.header("Cache-Control")
    keys = resp.json["keys"]
    assert keys, resp.json
    for key in keys:
        assert (key["kty"], key["use"], key["alg"]) == ("RSA", "sig", "RS256"), key
        assert key["kid"] and key["n"] and key["e"]
        # Only the public half: no private RSA members may leak.
        assert not {"d", "p", "q", "dp", "dq", "qi"} & set(key), key


def test_jwks_of_unknown_app_is_404(client):
    assert_problem(client.get("/v1/apps/app_doesnotexist/jwks.json"), 404, "auth/not-found")
    assert_problem(client.get("/v1/apps/app_doesnotexist/.well-known/openid-configuration"),
                   404, "auth/not-found")


def test_openid_configuration(client, app):
    resp = client.get(f"/v1/apps/{app['app_id']}/.well-known/openid-configuration")
    assert resp.status == 200, resp
    doc = resp.json
    assert doc["issuer"] == app["issuer"]
    assert doc["jwks_uri"].endswith(f"/v1/apps/{app['app_id']}/jwks.json")
    # No ID token is issued: nothing of OpenID Connect's is claimed (test_oauth_edges.py checks the rest).
    assert "id_token_signing_alg_values_supported" not in doc and "response_types_supported" not in doc
    # The advertised URI works as is (it is absolute, on the public base URL).
    assert doc["jwks_uri"].startswith(client.base_url + "/"), doc["jwks_uri"]
    assert client.get(doc["jwks_uri"][len(client.base_url):]).status == 200


def _check_claims(token, app, data, jwks, ttl):
    header, claims, _, _ = split(token)
    # RFC 9068: an access token says so in its header.
    assert header["alg"] == "RS256" and header["typ"] == "at+jwt", header
    assert header["kid"] in {k["kid"] for k in jwks["keys"]}, header
    assert verify_rs256(token, jwks), "signature does not verify against the app's JWKS"
    user = data["user"]
    assert claims["iss"] == app["issuer"]
    assert claims["aud"] in (app["app_id"], [app["app_id"]]), claims["aud"]
    assert claims["sub"] == user["uid"]
    assert claims["sid"] == data["session_id"]
    assert isinstance(claims["iat"], int) and isinstance(claims["exp"], int)
    assert abs(claims["iat"] - time.time()) < 300, claims["iat"]
    assert claims["exp"] - claims["iat"] == ttl
    assert isinstance(claims["jti"], str) and claims["jti"]
    assert claims["amr"] == ["pwd"]
    assert claims["is_guest"] is False
    assert claims["email"] == user["email"]
    assert claims["email_verified"] is False
    assert claims["roles"] == []
    return claims


def test_access_tokens_verify_offline_and_carry_the_claims(client, app_factory):
    app = app_factory(access_token_ttl=600)
    signed_up = client.new_user(app)
    signed_in = client.sign_in(app, email=signed_up["user"]["email"])
    assert signed_in.status == 200, signed_in
    jwks = _jwks(client, app)
    jtis = set()
    for data in (signed_up, signed_in.data):
        assert data["expires_in"] == 600
        jtis.add(_check_claims(data["access_token"], app, data, jwks, ttl=600)["jti"])
    assert len(jtis) == 2, "jti must be unique per token"


def test_default_ttl_is_one_hour(client, app):
    data = client.new_user(app)
    _, claims, _, _ = split(data["access_token"])
    assert data["expires_in"] == 3600 and claims["exp"] - claims["iat"] == 3600


# --- tokens minted here with the app's real private key ----------------------------------


@pytest.fixture
def minted(client, app):
    """(user data, kid, private key, claims of a real token) for a fresh user of `app`."""
    data = client.new_user(app)
    kid, key = load_signing_key(app["app_id"])
    jwks = _jwks(client, app)
    jwk = next(k for k in jwks["keys"] if k["kid"] == kid)
    # The stored key is the published one: otherwise the tests below prove nothing.
    pub = key.public_key().public_numbers()
    assert (pub.n, pub.e) == (b64url_uint(jwk["n"]), b64url_uint(jwk["e"]))
    _, claims, _, _ = split(data["access_token"])
    return data, kid, key, claims, jwk


def _mint(kid, key, claims, typ="at+jwt", **changes):
    return sign_rs256({"alg": "RS256", "typ": typ, "kid": kid},
                      dict(claims, jti=uuid.uuid4().hex, **changes), key)


def test_a_token_minted_with_the_app_key_is_accepted(client, app, minted):
    # The control for the tests below: our minting is right, so their 401s are the service's
    # checks at work rather than a malformed token.
    data, kid, key, claims, _ = minted
    now = int(time.time())
    resp = client.me(app, _mint(kid, key, claims, iat=now - 10, exp=now + 300))
    assert resp.status == 200, resp
    assert resp.data["uid"] == data["user"]["uid"]


@pytest.mark.parametrize("typ", ["JWT", None, "id+jwt"])
def test_a_jwt_of_another_type_signed_with_the_app_key_is_401(client, app, minted, typ):
    """Only `typ: at+jwt` is an access token: an id token (or anything else) made with the
    same key is refused, however valid its claims."""
    _, kid, key, claims, _ = minted
    now = int(time.time())
    token = _mint(kid, key, claims, typ=typ, iat=now - 10, exp=now + 300)
    assert_problem(client.me(app, token), 401, "auth/invalid-token")


def test_expired_token_is_401_token_expired(client, app, minted):
    _, kid, key, claims, _ = minted
    now = int(time.time())
    ttl = claims["exp"] - claims["iat"]
    # Ten minutes past expiry: beyond any reasonable clock-skew leeway.
    token = _mint(kid, key, claims, iat=now - 600 - ttl, exp=now - 600)
    assert_problem(client.me(app, token), 401, "auth/token-expired")


def test_token_for_another_audience_is_401_invalid_token(client, app, other_app, minted):
    _, kid, key, claims, _ = minted
    now = int(time.time())
    token = _mint(kid, key, claims, aud=other_app["app_id"], iat=now, exp=now + 300)
    assert_problem(client.me(app, token), 401, "auth/invalid-token")
    assert_problem(client.me(other_app, token), 401, "auth/invalid-token")


def test_token_with_another_issuer_is_401_invalid_token(client, app, other_app, minted):
    _, kid, key, claims, _ = minted
    now = int(time.time())
    token = _mint(kid, key, claims, iss=other_app["issuer"], iat=now, exp=now + 300)
    assert_problem(client.me(app, token), 401, "auth/invalid-token")


def test_token_for_a_session_that_never_existed_is_401(client, app, minted):
    # A live session is part of a valid token (sessions can end before exp).
    _, kid, key, claims, _ = minted
    now = int(time.time())
    token = _mint(kid, key, claims, sid="ses_" + uuid.uuid4().hex, iat=now, exp=now + 300)
    assert_problem(client.me(app, token), 401, "auth/invalid-token")


def test_alg_none_is_401_invalid_token(client, app, minted):
    _, kid, _, claims, _ = minted
    token = encode({"alg": "none", "typ": "JWT", "kid": kid}, claims, lambda data: b"")
    assert_problem(client.me(app, token), 401, "auth/invalid-token")


def test_hs256_signed_with_the_public_key_is_401_invalid_token(client, app, minted):
    # Algorithm confusion: a verifier that lets the header pick HMAC would use the public PEM
    # (which anyone has) as the secret.
    _, kid, _, claims, jwk = minted
    token = sign_hs256({"alg": "HS256", "typ": "JWT", "kid": kid}, claims, public_pem_from_jwk(jwk))
    assert_problem(client.me(app, token), 401, "auth/invalid-token")
