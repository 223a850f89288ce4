"""Introspection (RFC 7662) at POST /v1/token/introspect: the app's secret key as Bearer, Basic
(client_secret_basic) or the form's client_id and client_secret (client_secret_post), `token`
as a form field or JSON; `active: false` (and nothing else) for
signed-out, expired, unknown, other-app and garbage tokens."""

import time
import uuid

import pytest

import db_tools
from admin_tools import admin, assert_invalid_client, introspect
from identity_client import assert_problem
from jwt_tools import load_signing_key, sign_rs256, split

INACTIVE = {"active": False}


def _assert_active(resp, app, data, token_type):
    assert resp.status == 200, resp
    body = resp.json
    assert body["active"] is True, body
    assert body["sub"] == data["user"]["uid"] and body["sid"] == data["session_id"]
    assert body["aud"] == app["app_id"] and body["client_id"] == app["app_id"]
    assert body["iss"] == app["issuer"] and body["token_type"] == token_type
    # `aal` as the access token carries it: an integer.
    assert body["amr"] == ["pwd"] and body["aal"] == 1 and body["aal"] == split(data["access_token"])[1]["aal"]
    assert isinstance(body["exp"], int) and isinstance(body["iat"], int) and body["exp"] > time.time()
    assert resp.header("Cache-Control") == "no-store"
    return body


@pytest.mark.parametrize("basic,form,post", [(False, False, False), (True, False, False), (False, True, False),
                                             (True, True, False), (False, True, True)],
                         ids=["bearer-json", "basic-json", "bearer-form", "basic-form", "post-form"])
def test_a_live_access_token_is_active(client, app, basic, form, post):
    data = client.new_user(app)
    body = _assert_active(introspect(client, app, data["access_token"], basic=basic, form=form, post=post),
                          app, data, "Bearer")
    assert body["exp"] == split(data["access_token"])[1]["exp"]


def test_a_live_refresh_token_is_active_until_spent(client, app):
    data = client.new_user(app)
    _assert_active(introspect(client, app, data["refresh_token"]), app, data, "refresh_token")
    refreshed = client.refresh(app, data["refresh_token"])
    assert refreshed.status == 200, refreshed
    assert introspect(client, app, data["refresh_token"]).json == INACTIVE
    _assert_active(introspect(client, app, refreshed.data["refresh_token"]), app, data, "refresh_token")


def test_signed_out_tokens_are_inactive_at_once(client, app):
    data = client.new_user(app)
    assert client.sign_out(app, data["access_token"]).status == 204
    for token in (data["access_token"], data["refresh_token"]):
        resp = introspect(client, app, token)
        assert resp.status == 200 and resp.json == INACTIVE, resp


def test_a_disabled_users_tokens_are_inactive(client, app):
    data = client.new_user(app)
    assert admin(client, app, "POST", f"/v1/admin/users/{data['user']['uid']}/disable").status == 200
    for token in (data["access_token"], data["refresh_token"]):
        assert introspect(client, app, token).json == INACTIVE


def test_expired_tokens_are_inactive(client, app):
    data = client.new_user(app)
    kid, key = load_signing_key(app["app_id"])
    claims = split(data["access_token"])[1]
    now = int(time.time())
    expired = sign_rs256({"alg": "RS256", "typ": "at+jwt", "kid": kid},
                         dict(claims, jti=uuid.uuid4().hex, iat=now - 4000, exp=now - 600), key)
    assert introspect(client, app, expired).json == INACTIVE
    # The control: the same minting, unexpired, is active (so the refusal above is the expiry).
    fresh = sign_rs256({"alg": "RS256", "typ": "at+jwt", "kid": kid},
                       dict(claims, jti=uuid.uuid4().hex, iat=now - 5, exp=now + 300), key)
    assert introspect(client, app, fresh).json["active"] is True
    db_tools.value("with aged as (update refresh_tokens set expires_at = now() - interval '1 second' "
                   f"where token_hash = {db_tools.token_hash(data['refresh_token'])} returning 1) "
                   "select count(*) from aged")
    assert introspect(client, app, data["refresh_token"]).json == INACTIVE


def test_other_apps_tokens_are_inactive(client, app, other_app):
    theirs = client.new_user(other_app)
    for token in (theirs["access_token"], theirs["refresh_token"]):
        assert introspect(client, app, token).json == INACTIVE
        assert introspect(client, other_app, token).json["active"] is True


@pytest.mark.parametrize("token", ["garbage", "rt_unknown", "eyJhbGciOiJub25lIn0.e30.", "a.b.c", "rt_" + "x" * 200,
                                   "x" * 8000])
def test_garbage_is_inactive(client, app, token):
    resp = introspect(client, app, token)
    assert resp.status == 200 and resp.json == INACTIVE, resp


def test_introspection_needs_the_secret_key(client, app, other_app):
    data = client.new_user(app)
    # A user's own token, no key, another app's key, Basic or the form with another app's id, a
    # header and a form secret together: all OAuth's 401 invalid_client.
    assert_invalid_client(client.post("/v1/token/introspect", {"token": data["access_token"]},
                                      token=data["access_token"]))
    assert_invalid_client(client.post("/v1/token/introspect", {"token": data["access_token"]}))
    wrong_id = dict(app, app_id=other_app["app_id"])
    assert_invalid_client(introspect(client, wrong_id, data["access_token"], basic=True))
    assert_invalid_client(introspect(client, wrong_id, data["access_token"], post=True))
    assert_invalid_client(introspect(client, app, data["access_token"], key=other_app["secret_key"], post=True))
    both = introspect(client, app, data["access_token"], post=True,
                      headers={"Authorization": f"Bearer {app['secret_key']}"})
    assert_invalid_client(both)
    # The control: the same post, alone, is active.
    assert introspect(client, app, data["access_token"], post=True).json["active"] is True


def test_introspection_body_errors(client, app):
    hdrs = {"Authorization": f"Bearer {app['secret_key']}"}
    assert_problem(client.post("/v1/token/introspect", {}, headers=hdrs), 422, "auth/validation-failed",
                   locations=["body.token"])
    assert_problem(client.post("/v1/token/introspect", data="token=x", headers=hdrs, content_type="text/plain"),
                   415, "auth/unsupported-media-type")
    assert_problem(client.post("/v1/token/introspect", data="{", headers=hdrs, content_type="application/json"),
                   400, "auth/invalid-json")
