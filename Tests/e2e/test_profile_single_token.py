"""Seed 001's Flutter client against an app of profile `single-token` (docs/client-profiles.md),
request by request as the guide writes them: the base URL `http://localhost:3100` (the app is
found by `Host`, no `X-App-Key`), paths without `/v1`, camelCase bodies, `{token, user}` answers
with one opaque token that lasts a year and is checked on every request, `{"error": {"code",
"message"}}` errors, and the guide's order: launch → guest → /me → Apple upgrade → 401 handling →
Google → ACCOUNT_EXISTS and the switch → delete with each kind of proof."""

import base64
import json
import hashlib
import secrets
import uuid

import pytest

import db_tools
from provider_standin import unique_apple_sub


@pytest.fixture
def seed001_app(provider_app_factory):
    """An app set up as docs/clients.md's "Profile `single-token`" shows (a host of its own per
    test: localhost:3100 is what the guide's dev build calls)."""
    host = f"localhost-{uuid.uuid4().hex[:8]}.test:3100"
    app = provider_app_factory(profile="single-token", domains=[host], default_metadata=json.dumps(
        {"app_metadata": {"plan": "FREE", "planExpiresAt": None, "unitSystem": "US"}}))
    app["host"] = host
    return app


def dio(client, app, method, path, body=None, token=None):
    """The guide's dio client: base URL, JSON, `Authorization: Bearer <token>` when kept."""
    kwargs = {} if body is None else {"json_body": body}
    return client.request(method, path, token=token, headers={"Host": app["host"]}, **kwargs)


def new_guest_secret():
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")


def assert_error(resp, status, code):
    assert resp.status == status, resp
    body = resp.json
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["code"] == code, body
    return body


def assert_signed_in(resp, is_guest):
    assert resp.status == 200, resp
    body = resp.json
    assert set(body) == {"token", "user"}, body
    assert body["token"].startswith("st_"), body
    assert {"id", "isGuest", "email", "name"} <= set(body["user"]), body
    assert body["user"]["isGuest"] is is_guest, body
    return body


def apple_sheet(client, providers, app, **claims):
    """appleSheet(): a fresh nonce from GET /auth/nonce, its SHA-256 to Apple, the raw one back."""
    resp = dio(client, app, "GET", "/auth/nonce")
    assert resp.status == 200 and set(resp.json) == {"nonce"}, resp
    raw = resp.json["nonce"]
    token, claims = providers.apple_token(nonce=raw, **claims)
    return {"identityToken": token, "authorizationCode": f"c_{secrets.token_hex(16)}", "nonce": raw}, claims


def test_guest_me_apple_upgrade_and_401(client, providers, seed001_app):
    # 2. Guest login: the same secret always gives the same user.
    secret = new_guest_secret()
    guest = assert_signed_in(dio(client, seed001_app, "POST", "/auth/guest", {"secret": secret}), is_guest=True)
    assert guest["user"]["email"] is None and guest["user"]["name"] is None
    again = assert_signed_in(dio(client, seed001_app, "POST", "/auth/guest", {"secret": secret}), is_guest=True)
    assert again["user"]["id"] == guest["user"]["id"]
    # Only the token's hash is kept.
    assert db_tools.tables_containing(guest["token"]) == []
    digest = hashlib.sha256(guest["token"].encode()).hexdigest()
    assert db_tools.value(f"select count(*) from sessions where session_token_hash = '\\x{digest}'::bytea") == "1"

    # 5. GET /me
    me = dio(client, seed001_app, "GET", "/me", token=guest["token"])
    assert me.status == 200 and me.json["id"] == guest["user"]["id"] and me.json["isGuest"] is True, me

    # 3. Apple with the guest token: the guest becomes the Apple account; the name is kept.
    body, claims = apple_sheet(client, providers, seed001_app)
    body["fullName"] = "Sam Lee"
    upgraded = assert_signed_in(dio(client, seed001_app, "POST", "/auth/apple", body, token=guest["token"]),
                                is_guest=False)
    assert upgraded["user"]["id"] == guest["user"]["id"], upgraded
    assert upgraded["user"]["name"] == "Sam Lee" and upgraded["user"]["email"] == claims["email"]
    me = dio(client, seed001_app, "GET", "/me", token=upgraded["token"])
    assert me.status == 200 and me.json["isGuest"] is False and me.json["name"] == "Sam Lee", me

    # 6. 401: an unknown token is UNAUTHORIZED in the guide's shape.
    assert_error(dio(client, seed001_app, "GET", "/me", token="st_" + secrets.token_urlsafe(32)), 401, "UNAUTHORIZED")
    assert_error(dio(client, seed001_app, "GET", "/me"), 401, "UNAUTHORIZED")


def test_errors_in_the_guides_shape(client, providers, seed001_app):
    assert_error(dio(client, seed001_app, "POST", "/auth/guest", {}), 400, "VALIDATION_ERROR")
    body, _ = apple_sheet(client, providers, seed001_app)
    body["nonce"] = secrets.token_urlsafe(16)
    assert_error(dio(client, seed001_app, "POST", "/auth/apple", body), 401, "INVALID_APPLE_TOKEN")
    token, _ = providers.google_token(iat=int(__import__("time").time()) - 600)
    assert_error(dio(client, seed001_app, "POST", "/auth/google", {"idToken": token}), 401, "INVALID_GOOGLE_TOKEN")


def test_google_account_exists_and_the_switch(client, providers, seed001_app):
    # Someone already has an account with this Google identity.
    first, claims = providers.google_token()
    owner = assert_signed_in(dio(client, seed001_app, "POST", "/auth/google", {"idToken": first}), is_guest=False)

    guest = assert_signed_in(dio(client, seed001_app, "POST", "/auth/guest", {"secret": new_guest_secret()}),
                             is_guest=True)
    token, _ = providers.google_token(sub=claims["sub"], email=claims["email"])
    assert_error(dio(client, seed001_app, "POST", "/auth/google", {"idToken": token}, token=guest["token"]),
                 409, "ACCOUNT_EXISTS")
    # "Switch to it?" yes: the same idToken, without the guest token.
    switched = assert_signed_in(dio(client, seed001_app, "POST", "/auth/google", {"idToken": token}), is_guest=False)
    assert switched["user"]["id"] == owner["user"]["id"]
    # The guest account stays, for the guest secret.
    assert dio(client, seed001_app, "GET", "/me", token=guest["token"]).status == 200


def test_apple_account_exists_and_the_switch(client, providers, seed001_app):
    sub = unique_apple_sub()
    body, claims = apple_sheet(client, providers, seed001_app, sub=sub)
    owner = assert_signed_in(dio(client, seed001_app, "POST", "/auth/apple", body), is_guest=False)
    guest = assert_signed_in(dio(client, seed001_app, "POST", "/auth/guest", {"secret": new_guest_secret()}),
                             is_guest=True)
    body, _ = apple_sheet(client, providers, seed001_app, sub=sub, email=claims["email"])
    assert_error(dio(client, seed001_app, "POST", "/auth/apple", body, token=guest["token"]), 409, "ACCOUNT_EXISTS")
    switched = assert_signed_in(dio(client, seed001_app, "POST", "/auth/apple", body), is_guest=False)
    assert switched["user"]["id"] == owner["user"]["id"]


def test_delete_with_each_proof(client, providers, seed001_app):
    # Guest: {secret}; a wrong one is REAUTH_REQUIRED and deletes nothing.
    secret = new_guest_secret()
    guest = assert_signed_in(dio(client, seed001_app, "POST", "/auth/guest", {"secret": secret}), is_guest=True)
    assert_error(dio(client, seed001_app, "DELETE", "/me", {"secret": new_guest_secret()}, token=guest["token"]),
                 403, "REAUTH_REQUIRED")
    done = dio(client, seed001_app, "DELETE", "/me", {"secret": secret}, token=guest["token"])
    assert done.status == 204, done
    # The token ends with the account, at once.
    assert_error(dio(client, seed001_app, "GET", "/me", token=guest["token"]), 401, "UNAUTHORIZED")

    # Apple: a new sheet's identityToken, authorizationCode and nonce.
    body, claims = apple_sheet(client, providers, seed001_app)
    apple = assert_signed_in(dio(client, seed001_app, "POST", "/auth/apple", body), is_guest=False)
    other, _ = apple_sheet(client, providers, seed001_app)  # another Apple ID
    assert_error(dio(client, seed001_app, "DELETE", "/me", other, token=apple["token"]), 403, "REAUTH_REQUIRED")
    proof, _ = apple_sheet(client, providers, seed001_app, sub=claims["sub"], email=claims["email"])
    done = dio(client, seed001_app, "DELETE", "/me", proof, token=apple["token"])
    assert done.status == 204, done
    assert_error(dio(client, seed001_app, "GET", "/me", token=apple["token"]), 401, "UNAUTHORIZED")

    # Google: {identityToken} holding a new Google id token.
    first, claims = providers.google_token()
    google = assert_signed_in(dio(client, seed001_app, "POST", "/auth/google", {"idToken": first}), is_guest=False)
    stranger, _ = providers.google_token()
    assert_error(dio(client, seed001_app, "DELETE", "/me", {"identityToken": stranger}, token=google["token"]),
                 403, "REAUTH_REQUIRED")
    fresh, _ = providers.google_token(sub=claims["sub"], email=claims["email"])
    done = dio(client, seed001_app, "DELETE", "/me", {"identityToken": fresh}, token=google["token"])
    assert done.status == 204, done
    assert_error(dio(client, seed001_app, "GET", "/me", token=google["token"]), 401, "UNAUTHORIZED")


def test_the_profiles_openapi_document(client):
    resp = client.get("/api/docs/profiles/single-token/openapi.json")
    assert resp.status == 200, resp
    paths = resp.json["paths"]
    assert set(paths) == {"/auth/guest", "/auth/nonce", "/auth/apple", "/auth/google", "/me"}, set(paths)
    assert set(paths["/me"]) == {"get", "delete"}
    apple = paths["/auth/apple"]["post"]
    assert "INVALID_APPLE_TOKEN" in apple["responses"]["401"]["x-error-codes"]
    assert "ACCOUNT_EXISTS" in apple["responses"]["409"]["x-error-codes"]
    assert "VALIDATION_ERROR" in apple["responses"]["400"]["x-error-codes"]
    assert "REAUTH_REQUIRED" in paths["/me"]["delete"]["responses"]["403"]["x-error-codes"]
    assert "fullName" in apple["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert client.get("/api/docs/profiles/graphql/openapi.json").status == 404


def test_disabling_the_user_ends_the_token_at_once(client, seed001_app):
    guest = assert_signed_in(dio(client, seed001_app, "POST", "/auth/guest", {"secret": new_guest_secret()}),
                             is_guest=True)
    assert dio(client, seed001_app, "GET", "/me", token=guest["token"]).status == 200
    db_tools.rows(f"update users set disabled = true where app_id = {db_tools.literal(seed001_app['app_id'])} "
                  f"and uid = {db_tools.literal(guest['user']['id'])}")
    assert_error(dio(client, seed001_app, "GET", "/me", token=guest["token"]), 401, "UNAUTHORIZED")


def test_the_user_object_carries_the_apps_fields_with_their_defaults(client, seed001_app):
    """The guide's user has `plan`, `planExpiresAt` and `unitSystem`: the app's default_metadata
    gives them to every new user, and the app's backend changes them per user (admin API)."""
    from admin_tools import admin
    guest = assert_signed_in(dio(client, seed001_app, "POST", "/auth/guest", {"secret": new_guest_secret()}),
                             is_guest=True)
    assert guest["user"]["plan"] == "FREE" and guest["user"]["planExpiresAt"] is None, guest
    assert guest["user"]["unitSystem"] == "US", guest
    uid = guest["user"]["id"]
    resp = admin(client, seed001_app, "PATCH", f"/v1/admin/users/{uid}",
                 {"app_metadata": {"plan": "PRO", "planExpiresAt": "2027-01-01T00:00:00Z", "unitSystem": "US"}})
    assert resp.status == 200, resp
    me = dio(client, seed001_app, "GET", "/me", token=guest["token"])
    assert me.status == 200 and me.json["plan"] == "PRO" and me.json["planExpiresAt"] == "2027-01-01T00:00:00Z", me
