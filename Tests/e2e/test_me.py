"""GET and PATCH /v1/me: the signed-in user's own profile."""

import json

import pytest

from identity_client import assert_problem, assert_user_shape, public_user, unique_username
from jwt_tools import b64url_decode, b64url_encode, tamper_segment


def test_get_me_returns_the_signed_up_user(client, app):
    signed_up = client.new_user(app, first_name="Jane", last_name="Doe")
    resp = client.me(app, signed_up["access_token"])
    assert resp.status == 200, resp
    assert_user_shape(resp.data)
    assert public_user(resp.data) == public_user(signed_up["user"])


def test_get_me_with_a_sign_in_token(client, app):
    signed_up = client.new_user(app)
    signed_in = client.sign_in(app, email=signed_up["user"]["email"])
    assert signed_in.status == 200, signed_in
    resp = client.me(app, signed_in.data["access_token"])
    assert resp.status == 200, resp
    assert resp.data["uid"] == signed_up["user"]["uid"]


def _payload_with_admin_role(token):
    # Re-encode the payload with an extra role but keep the original signature: a classic
    # privilege-escalation attempt that only signature checking stops.
    head, body, sig = token.split(".")
    claims = json.loads(b64url_decode(body))
    claims["roles"] = ["admin"]
    return ".".join([head, b64url_encode(json.dumps(claims).encode()), sig])


@pytest.mark.parametrize("make_auth", [
    pytest.param(lambda t: None, id="no-authorization"),
    pytest.param(lambda t: "Bearer garbage", id="garbage"),
    pytest.param(lambda t: "Bearer ", id="empty-bearer"),
    pytest.param(lambda t: f"Basic {t}", id="wrong-scheme"),
    pytest.param(lambda t: f"Bearer {tamper_segment(t, 2)}", id="signature-altered"),
    pytest.param(lambda t: f"Bearer {_payload_with_admin_role(t)}", id="payload-altered"),
    pytest.param(lambda t: f"Bearer {t.rsplit('.', 1)[0]}.", id="signature-stripped"),
])
def test_get_me_without_a_valid_token_is_401_invalid_token(client, app, make_auth):
    token = client.new_user(app)["access_token"]
    auth = make_auth(token)
    headers = {"Authorization": auth} if auth is not None else {}
    resp = client.get("/v1/me", app_key=app["app_key"], headers=headers)
    assert_problem(resp, 401, "auth/invalid-token")


def test_patch_me_changes_fields_and_get_sees_them(client, app):
    signed_up = client.new_user(app, first_name="Jane")
    token = signed_up["access_token"]
    username = unique_username()
    change = {"first_name": "Ann", "last_name": "Lee", "photo_url": "https://example.com/a.png",
              "username": username}
    resp = client.patch_me(app, token, change)
    assert resp.status == 200, resp
    assert_user_shape(resp.data)
    for key, value in change.items():
        assert resp.data[key] == value, (key, resp.data)
    after = client.me(app, token)
    assert after.status == 200, after
    assert public_user(after.data) == public_user(resp.data)
    # What PATCH does not name stays as it was.
    for key in ("uid", "email", "created_at", "email_verified", "providers"):
        assert after.data[key] == signed_up["user"][key], key


def test_patch_me_null_clears_and_absent_keeps(client, app):
    username = unique_username()
    token = client.new_user(app, first_name="Jane", last_name="Doe", username=username)["access_token"]
    resp = client.patch_me(app, token, {"first_name": None})
    assert resp.status == 200, resp
    after = client.me(app, token).data
    assert after["first_name"] is None
    assert after["last_name"] == "Doe"
    assert after["username"] == username
    resp = client.patch_me(app, token, {"username": None})
    assert resp.status == 200, resp
    assert client.me(app, token).data["username"] is None


def test_patch_me_empty_body_changes_nothing(client, app):
    signed_up = client.new_user(app, first_name="Jane")
    resp = client.patch_me(app, signed_up["access_token"], {})
    assert resp.status == 200, resp
    assert public_user(resp.data) == public_user(signed_up["user"])


def test_patch_me_username_taken_in_same_app_is_409(client, app):
    username = unique_username()
    client.new_user(app, username=username)
    token = client.new_user(app)["access_token"]
    assert_problem(client.patch_me(app, token, {"username": username}), 409, "auth/username-taken")
    assert_problem(client.patch_me(app, token, {"username": username.upper()}), 409,
                   "auth/username-taken")
    assert client.me(app, token).data["username"] is None


def test_patch_me_to_own_username_is_fine(client, app):
    username = unique_username()
    token = client.new_user(app, username=username)["access_token"]
    resp = client.patch_me(app, token, {"username": username})
    assert resp.status == 200, resp
    assert resp.data["username"] == username


def test_patch_me_username_of_another_app_is_fine(client, app, other_app):
    username = unique_username()
    client.new_user(other_app, username=username)
    token = client.new_user(app)["access_token"]
    resp = client.patch_me(app, token, {"username": username})
    assert resp.status == 200, resp
    assert resp.data["username"] == username


@pytest.mark.parametrize("body, location", [
    ({"first_name": 5}, "body.first_name"),
    ({"last_name": []}, "body.last_name"),
    ({"username": {}}, "body.username"),
    ({"username": "a b"}, "body.username"),
    ({"username": "ab"}, "body.username"),
    ({"photo_url": 7}, "body.photo_url"),
])
def test_patch_me_bad_values_are_422(client, app, body, location):
    token = client.new_user(app)["access_token"]
    assert_problem(client.patch_me(app, token, body), 422, "auth/validation-failed",
                   locations=[location])


@pytest.mark.parametrize("url", ["not a url", "ftp://example.com/a.png", "javascript:alert(1)",
                                 "example.com/a.png"])
def test_patch_me_photo_url_must_be_http(client, app, url):
    token = client.new_user(app)["access_token"]
    resp = client.patch_me(app, token, {"photo_url": url})
    assert resp.status == 422, resp
    # The brief fixes the status and the location, not the code (validation-failed or a
    # more specific one): check the problem shape with whatever code came back.
    assert_problem(resp, 422, resp.json["code"], locations=["body.photo_url"])
    assert client.me(app, token).data["photo_url"] is None


def test_patch_me_accepts_http_photo_url(client, app):
    token = client.new_user(app)["access_token"]
    resp = client.patch_me(app, token, {"photo_url": "http://example.com/p.jpg"})
    assert resp.status == 200, resp
    assert resp.data["photo_url"] == "http://example.com/p.jpg"


def test_patch_me_without_token_is_401(client, app):
    resp = client.patch("/v1/me", {"first_name": "X"}, app_key=app["app_key"])
    assert_problem(resp, 401, "auth/invalid-token")
