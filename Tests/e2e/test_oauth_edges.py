"""The standard OAuth edges, checked with the libraries an app's backend would use as the client:
authlib for the authorization server metadata (RFC 8414), introspection (RFC 7662) and
revocation (RFC 7009) with client_secret_basic and client_secret_post, and PyJWT's PyJWKClient
for verifying an access token (RFC 9068, with its client_id) from the advertised jwks_uri."""

import jwt
import pytest
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.oidc.discovery import OpenIDProviderMetadata

from admin_tools import assert_invalid_client, introspect
from identity_client import assert_session_ended, assert_session_works
from jwt_tools import split

METHODS = ["client_secret_basic", "client_secret_post"]
# What RFC 8414 calls REQUIRED but the service has no endpoint for: no authorization endpoint
# (so no response type) and no RFC 6749 token endpoint (sign-in and refresh are the API's own
# JSON operations). Claiming either would be false; docs/flows.md says so.
NOT_CLAIMED = {"token_endpoint", "response_types_supported"}


def _metadata(client, app):
    resp = client.get(f"/.well-known/oauth-authorization-server/v1/apps/{app['app_id']}")
    assert resp.status == 200, resp
    assert (resp.header("Content-Type") or "").startswith("application/json"), resp
    return resp.json


def _session(app, method, secret=None):
    """An OAuth client of the app, as authlib makes one: the app id and its secret key."""
    return OAuth2Session(client_id=app["app_id"], client_secret=secret or app["secret_key"],
                         token_endpoint_auth_method=method, revocation_endpoint_auth_method=method)


def test_metadata_passes_authlibs_validators_for_every_field_it_claims(client, app):
    doc = _metadata(client, app)
    # The same document where OpenID Connect discovery looks ({issuer}/.well-known/…).
    oidc_path = client.get(f"/v1/apps/{app['app_id']}/.well-known/openid-configuration")
    assert oidc_path.status == 200 and oidc_path.json == doc, oidc_path
    metadata = AuthorizationServerMetadata(doc)
    # Only registered RFC 8414 fields, each passing its own validator.
    assert set(doc) <= set(AuthorizationServerMetadata.REGISTRY_KEYS), set(doc)
    for field in doc:
        getattr(metadata, f"validate_{field}")()
    # The whole validation fails only for the REQUIRED fields left out on purpose; in particular
    # no authorization endpoint is implied (grant_types_supported is given, and empty).
    failed = set()
    for field in AuthorizationServerMetadata.REGISTRY_KEYS:
        try:
            getattr(metadata, f"validate_{field}")()
        except ValueError:
            failed.add(field)
    assert failed == NOT_CLAIMED, failed
    with pytest.raises(ValueError):
        metadata.validate()
    # Nothing of OpenID Connect is claimed (no ID token, no userinfo, no response types), and
    # the fields both specifications define pass OpenID's validators too.
    openid_only = set(OpenIDProviderMetadata.REGISTRY_KEYS) - set(AuthorizationServerMetadata.REGISTRY_KEYS)
    assert not openid_only & set(doc), openid_only & set(doc)
    assert "authorization_endpoint" not in doc and "id_token_signing_alg_values_supported" not in doc
    oidc = OpenIDProviderMetadata(doc)
    for field in set(doc) & set(OpenIDProviderMetadata.REGISTRY_KEYS):
        getattr(oidc, f"validate_{field}")()
    assert doc["grant_types_supported"] == []
    assert doc["introspection_endpoint_auth_methods_supported"] == METHODS
    assert doc["revocation_endpoint_auth_methods_supported"] == METHODS


def test_every_advertised_endpoint_is_real(client, app):
    doc = _metadata(client, app)
    base = client.base_url
    assert doc["issuer"] == app["issuer"] == f"{base}/v1/apps/{app['app_id']}"
    assert doc["introspection_endpoint"] == f"{base}/v1/token/introspect"
    assert doc["revocation_endpoint"] == f"{base}/v1/token/revoke"
    assert client.get(doc["jwks_uri"][len(base):]).json["keys"]
    assert client.get(doc["service_documentation"][len(base):]).status == 200
    data = client.new_user(app)
    for method in METHODS:
        answer = _session(app, method).introspect_token(doc["introspection_endpoint"], token=data["access_token"])
        assert answer.status_code == 200 and answer.json()["active"] is True, answer.text


def test_pyjwkclient_verifies_an_access_token_and_its_client_id(client, app):
    doc = _metadata(client, app)
    token = client.new_user(app)["access_token"]
    key = jwt.PyJWKClient(doc["jwks_uri"]).get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=["RS256", "ES256", "EdDSA"], audience=app["app_id"],
                        issuer=doc["issuer"], options={"require": ["iss", "exp", "aud", "sub", "client_id", "iat", "jti"]})
    # RFC 9068: the client the token was issued to is the app, named by its id (also the audience).
    assert claims["client_id"] == app["app_id"] == claims["aud"], claims
    assert jwt.get_unverified_header(token)["typ"] == "at+jwt"
    # Introspection answers what the token says, aal included, with its type.
    answer = introspect(client, app, token).json
    assert (answer["client_id"], answer["aal"]) == (claims["client_id"], claims["aal"]), answer
    assert isinstance(answer["aal"], int) and not isinstance(answer["aal"], bool)


@pytest.mark.parametrize("method", METHODS)
def test_authlib_introspects_refresh_and_access_tokens(client, app, method):
    doc = _metadata(client, app)
    data = client.new_user(app)
    oauth = _session(app, method)
    for token, kind in ((data["access_token"], "Bearer"), (data["refresh_token"], "refresh_token")):
        answer = oauth.introspect_token(doc["introspection_endpoint"], token=token)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert (body["active"], body["token_type"], body["sub"], body["aal"]) == (
            True, kind, data["user"]["uid"], split(data["access_token"])[1]["aal"]), body


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("endpoint", ["introspection_endpoint", "revocation_endpoint"])
def test_a_refused_client_is_oauths_invalid_client(client, app, other_app, method, endpoint):
    doc = _metadata(client, app)
    data = client.new_user(app)
    for oauth in (_session(app, method, secret="sk_" + "x" * 43), _session(app, method, secret=other_app["secret_key"]),
                  OAuth2Session(client_id=other_app["app_id"], client_secret=app["secret_key"],
                                token_endpoint_auth_method=method, revocation_endpoint_auth_method=method)):
        call = oauth.introspect_token if endpoint == "introspection_endpoint" else oauth.revoke_token
        answer = call(doc[endpoint], token=data["refresh_token"])
        assert answer.status_code == 401, answer.text
        assert answer.headers["Content-Type"].split(";")[0] == "application/json"
        assert answer.json()["error"] == "invalid_client", answer.text
        assert answer.headers["WWW-Authenticate"].startswith('Basic realm="'), answer.headers
    # No client at all, on our own client too.
    path = doc[endpoint][len(client.base_url):]
    assert_invalid_client(client.post(path, data="token=x", content_type="application/x-www-form-urlencoded"))
    # Nothing was revoked by the refused calls.
    assert_session_works(client, app, data)


@pytest.mark.parametrize("method", METHODS)
def test_revoking_a_refresh_token_ends_its_session(client, app, method):
    doc = _metadata(client, app)
    data = client.new_user(app)
    other = client.sign_in(app, email=data["user"]["email"])  # the same user's other session
    assert other.status == 200, other
    answer = _session(app, method).revoke_token(doc["revocation_endpoint"], token=data["refresh_token"],
                                                token_type_hint="refresh_token")
    assert answer.status_code == 200, answer.text
    assert answer.headers["Cache-Control"] == "no-store"
    assert_session_ended(client, app, data)
    assert introspect(client, app, data["access_token"]).json == {"active": False}
    assert_session_works(client, app, other.data)


@pytest.mark.parametrize("method", METHODS)
def test_revoking_an_access_token_ends_its_session_at_once(client, app, method, events):
    doc = _metadata(client, app)
    data = client.new_user(app)
    assert client.me(app, data["access_token"]).status == 200
    answer = _session(app, method).revoke_token(doc["revocation_endpoint"], token=data["access_token"])
    assert answer.status_code == 200, answer.text
    # The app's backend hears of it as of any ended session, with why.
    sid = jwt.decode(data["access_token"], options={"verify_signature": False})["sid"]
    ended = events.wait_for("session.revoked", lambda b: b.get("session_id") == sid)
    assert ended.body["reason"] == "revoked_by_client", ended.body
    # Refused on the very next request, as after a sign-out; its refresh token died with it.
    assert_session_ended(client, app, data)
    assert introspect(client, app, data["refresh_token"]).json == {"active": False}


def test_another_apps_tokens_are_not_revoked(client, app, other_app):
    doc = _metadata(client, app)
    theirs = client.new_user(other_app)
    oauth = _session(app, "client_secret_basic")
    for token in (theirs["access_token"], theirs["refresh_token"]):
        answer = oauth.revoke_token(doc["revocation_endpoint"], token=token)
        # RFC 7009: 200 whatever the token; here it names nothing of the caller's app.
        assert answer.status_code == 200, answer.text
    assert_session_works(client, other_app, theirs)


@pytest.mark.parametrize("token", ["rt_unknown", "garbage", "eyJhbGciOiJub25lIn0.e30.", "rt_" + "x" * 200])
def test_an_unknown_token_answers_200_and_ends_nothing(client, app, token):
    doc = _metadata(client, app)
    data = client.new_user(app)
    answer = _session(app, "client_secret_post").revoke_token(doc["revocation_endpoint"], token=token)
    assert answer.status_code == 200 and answer.json() == {}, answer.text
    assert_session_works(client, app, data)


def test_revocation_needs_a_token(client, app):
    resp = introspect(client, app, "", form=True, path="/v1/token/revoke")
    assert resp.status == 422 and resp.json["code"] == "auth/validation-failed", resp
