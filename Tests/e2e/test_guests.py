"""POST /v1/auth/guest {secret}: the client makes a 256-bit secret once and keeps it; the same
secret always signs in to the same guest user, a new one makes a new guest. Secrets of 32 to
256 characters; only a hash of the secret is stored. Guests of one app are not guests of
another."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import db_tools
from identity_client import (assert_problem, assert_session_works, new_guest_secret, public_user)
from jwt_tools import split

PARALLEL = 20


def _claims(data):
    return split(data["access_token"])[1]


def test_first_call_creates_a_guest(client, app):
    data, secret = client.new_guest(app, is_new_user=True)
    assert len(secret) == 43
    user = data["user"]
    assert user["is_guest"] is True, user
    assert user["email"] is None, user
    assert user["email_verified"] is False, user
    assert user["has_password"] is False, user
    assert user["providers"] == [], user
    claims = _claims(data)
    assert claims["amr"] == ["guest"], claims
    assert claims["is_guest"] is True, claims
    assert claims["sub"] == user["uid"], claims
    me = client.me(app, data["access_token"])
    assert me.status == 200, me
    assert public_user(me.data) == public_user(user), (me.data, user)
    assert_session_works(client, app, data)


def test_same_secret_signs_in_to_the_same_guest(client, app):
    first, secret = client.new_guest(app, is_new_user=True)
    again, _ = client.new_guest(app, secret, is_new_user=False)
    assert again["user"]["uid"] == first["user"]["uid"]
    assert again["session_id"] != first["session_id"]
    assert _claims(again)["amr"] == ["guest"]
    # Both sessions live side by side.
    assert_session_works(client, app, first)
    assert_session_works(client, app, again)


def test_another_secret_makes_another_guest(client, app):
    first, _ = client.new_guest(app, is_new_user=True)
    second, _ = client.new_guest(app, is_new_user=True)
    assert first["user"]["uid"] != second["user"]["uid"]


def test_a_32_digit_hex_secret_is_random_enough(client, app):
    import secrets as random_source
    client.new_guest(app, random_source.token_hex(16), is_new_user=True)


@pytest.mark.parametrize("length", [32, 43, 256])
def test_secrets_of_32_to_256_characters_are_accepted(client, app, length):
    secret = (new_guest_secret() * 7)[:length]
    assert len(secret) == length
    data, _ = client.new_guest(app, secret, is_new_user=True)
    again, _ = client.new_guest(app, secret, is_new_user=False)
    assert again["user"]["uid"] == data["user"]["uid"]


@pytest.mark.parametrize("body", [
    pytest.param({"secret": new_guest_secret()[:31]}, id="31-characters"),
    pytest.param({"secret": ""}, id="empty"),
    pytest.param({"secret": (new_guest_secret() * 7)[:257]}, id="257-characters"),
    pytest.param({}, id="missing"),
    pytest.param({"secret": None}, id="null"),
    pytest.param({"secret": 42}, id="number"),
    # Long enough, but not random (low-entropy secrets are refused).
    pytest.param({"secret": "a" * 43}, id="one-character"),
    pytest.param({"secret": "abcd" * 11}, id="short-block-repeated"),
    pytest.param({"secret": "0123456" * 7}, id="seven-characters"),
    pytest.param({"secret": "0101101001011010011010100110101001" * 2}, id="binary-alphabet"),
])
def test_bad_secrets_are_422(client, app, body):
    resp = client.post("/v1/auth/guest", body, app_key=app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.secret"])
    assert db_tools.value("select count(*) from users "
                          f"where app_id = {db_tools.literal(app['app_id'])}") == "0"


def test_guest_needs_the_app_key(client, app):
    assert_problem(client.post("/v1/auth/guest", {"secret": new_guest_secret()}), 401,
                   "auth/invalid-app-key")


def test_the_secret_is_never_stored(client, app):
    data, secret = client.new_guest(app, is_new_user=True)
    uid = db_tools.literal(data["user"]["uid"])
    app_id = db_tools.literal(app["app_id"])
    assert db_tools.value(f"select count(*) from users where app_id = {app_id} "
                          f"and uid = {uid}") == "1"
    # No text column (nor any other) of the guest's row holds the secret.
    leaks = db_tools.value(f"select count(*) from users u where u.app_id = {app_id} "
                           f"and strpos(u::text, {db_tools.literal(secret)}) > 0")
    assert leaks == "0", "the guest secret is stored in plaintext in users"
    assert db_tools.tables_containing(secret) == [], "the guest secret is stored in plaintext"
    # Still the same guest: looking changed nothing.
    again, _ = client.new_guest(app, secret, is_new_user=False)
    assert again["user"]["uid"] == data["user"]["uid"]


def test_parallel_first_calls_with_one_secret_make_one_guest(client, app):
    secret = new_guest_secret()
    barrier = threading.Barrier(PARALLEL)

    def guest():
        barrier.wait(timeout=30)
        return client.guest(app, secret)

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        answers = [f.result() for f in [pool.submit(guest) for _ in range(PARALLEL)]]
    for resp in answers:
        assert resp.status == 200, resp
        assert resp.data["user"]["is_guest"] is True, resp.data["user"]
    uids = {resp.data["user"]["uid"] for resp in answers}
    assert len(uids) == 1, f"{len(uids)} guests for one secret: {sorted(uids)}"
    created = [resp for resp in answers if resp.data["is_new_user"] is True]
    assert len(created) == 1, f"{len(created)} of {PARALLEL} answers say they created the guest"
    assert db_tools.value("select count(*) from users "
                          f"where app_id = {db_tools.literal(app['app_id'])}") == "1"
    # And every one of those sessions is a working session of that guest.
    for resp in answers[:3]:
        me = client.me(app, resp.data["access_token"])
        assert me.status == 200 and me.data["uid"] in uids, me


def test_same_secret_in_two_apps_is_two_guests(client, app, other_app):
    secret = new_guest_secret()
    in_a, _ = client.new_guest(app, secret, is_new_user=True)
    in_b, _ = client.new_guest(other_app, secret, is_new_user=True)
    assert in_a["user"]["uid"] != in_b["user"]["uid"]
    assert_problem(client.me(other_app, in_a["access_token"]), 401, "auth/invalid-token")
    again, _ = client.new_guest(app, secret, is_new_user=False)
    assert again["user"]["uid"] == in_a["user"]["uid"]
