"""Email + password sign-up and sign-in: the token response, and every validation answer."""

import base64
import datetime
import hashlib
import hmac
import json
import os

import pytest
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id

import db_tools
from conftest import mail_payload_key
from identity_client import (PASSWORD, assert_problem, assert_token_response, public_user,
                             unique_email, unique_username)


def test_sign_up_returns_201_and_a_complete_token_response(client, app):
    email = unique_email()
    username = unique_username()
    resp = client.sign_up(app, email=email, first_name="Jane", username=username)
    assert resp.status == 201, resp
    assert resp.header("Content-Type").split(";")[0].strip() == "application/json"
    data = resp.data
    assert_token_response(data, is_new_user=True, expires_in=app["access_token_ttl"])
    user = data["user"]
    assert user["email"] == email
    assert user["username"] == username
    assert user["first_name"] == "Jane"
    # Absent optional fields are present as null, not left out.
    assert user["last_name"] is None
    assert user["phone"] is None
    assert user["photo_url"] is None
    assert user["email_verified"] is False
    assert user["is_guest"] is False
    assert user["has_password"] is True
    assert user["providers"] == ["password"]
    assert user["roles"] == []
    assert user["mfa_enabled"] is False
    created = datetime.datetime.strptime(user["created_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert abs((now - created).total_seconds()) < 300, user["created_at"]


def test_sign_up_without_username_has_null_username(client, app):
    user = client.new_user(app)["user"]
    assert user["username"] is None and user["first_name"] is None


def test_two_sign_ups_make_different_users(client, app):
    a = client.new_user(app)
    b = client.new_user(app)
    assert a["user"]["uid"] != b["user"]["uid"]
    assert a["session_id"] != b["session_id"]
    assert a["refresh_token"] != b["refresh_token"]


def test_duplicate_email_in_any_case_is_409(client, app):
    local = unique_email("jane").split("@")[0]
    assert client.sign_up(app, email=f"{local}@example.com").status == 201
    for variant in (f"{local}@example.com", f"{local.upper()}@EXAMPLE.COM", f"{local}@Example.com"):
        assert_problem(client.sign_up(app, email=variant), 409, "auth/email-already-in-use")


def test_duplicate_username_case_insensitive_is_409(client, app):
    username = unique_username()
    client.new_user(app, username=username)
    assert_problem(client.sign_up(app, username=username), 409, "auth/username-taken")
    assert_problem(client.sign_up(app, username=username.upper()), 409, "auth/username-taken")


@pytest.mark.parametrize("password", [
    "Sh0rt!x",            # 7 characters
    "Q" * 257,            # one over the maximum
    "password123",        # common
    "12345678",           # common
    "swetlana",           # rank 5,000 of the breached list (tools/breachgen.py)
    "Felicidade",         # rank 10,000, in another case
])
def test_weak_password_is_422(client, app, password):
    body = assert_problem(client.sign_up(app, password=password), 422, "auth/weak-password",
                          locations=["body.password"])
    assert body["errors"][0]["location"] == "body.password"


@pytest.mark.parametrize("password", ["Zq8#mK2v", "kX9!" * 64])  # exactly 8 and exactly 256
def test_password_length_bounds_are_inclusive(client, app, password):
    assert len(password) in (8, 256)
    assert client.sign_up(app, password=password).status == 201


@pytest.mark.parametrize("email", ["not-an-email", "a@b", "a b@c.com"])
def test_malformed_email_is_422_invalid_email(client, app, email):
    assert_problem(client.sign_up(app, email=email), 422, "auth/invalid-email",
                   locations=["body.email"])


@pytest.mark.parametrize("body, locations", [
    ({"email": "EMAIL"}, ["body.password"]),
    ({"password": PASSWORD}, ["body.email"]),
    ({"email": 5, "password": PASSWORD}, ["body.email"]),
    ({"email": "EMAIL", "password": 12345678}, ["body.password"]),
    ({"email": "EMAIL", "password": PASSWORD, "first_name": []}, ["body.first_name"]),
    ({"email": "EMAIL", "password": PASSWORD, "last_name": {}}, ["body.last_name"]),
    ({"email": "EMAIL", "password": PASSWORD, "username": 42}, ["body.username"]),
    # Several bad fields at once: each one is named, not only the first.
    ({"email": "EMAIL", "first_name": []}, ["body.password", "body.first_name"]),
])
def test_missing_fields_and_wrong_types_are_422_validation_failed(client, app, body, locations):
    body = {k: (unique_email() if v == "EMAIL" else v) for k, v in body.items()}
    resp = client.post("/v1/auth/sign-up", body, app_key=app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed", locations=locations)


@pytest.mark.parametrize("username", ["ab", "a" * 33, "bad name", "bad-name", "ünïcode"])
def test_bad_username_is_422_validation_failed(client, app, username):
    assert_problem(client.sign_up(app, username=username), 422, "auth/validation-failed",
                   locations=["body.username"])


@pytest.mark.parametrize("username", ["abc", "A_b.9", "z" * 32])
def test_good_usernames_are_accepted(client, app, username):
    # Fixed names are safe: each test gets a fresh app, and usernames are unique per app.
    assert client.sign_up(app, username=username).status == 201


def test_body_that_is_not_json_is_400(client, app):
    resp = client.post("/v1/auth/sign-up", data=b'{"email": "x@example.com", "password": ',
                       content_type="application/json", app_key=app["app_key"])
    assert_problem(resp, 400, "auth/invalid-json")


@pytest.mark.parametrize("raw", [b"[]", b'"hello"', b"42", b"null"])
def test_json_that_is_not_an_object_is_422(client, app, raw):
    resp = client.post("/v1/auth/sign-up", data=raw, content_type="application/json",
                       app_key=app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed")


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded"])
def test_non_json_content_type_is_415(client, app, ctype):
    raw = json.dumps({"email": unique_email(), "password": PASSWORD})
    resp = client.post("/v1/auth/sign-up", data=raw, content_type=ctype, app_key=app["app_key"])
    assert_problem(resp, 415, "auth/unsupported-media-type")


def test_json_with_charset_is_accepted(client, app):
    raw = json.dumps({"email": unique_email(), "password": PASSWORD})
    resp = client.post("/v1/auth/sign-up", data=raw, content_type="application/json; charset=utf-8",
                       app_key=app["app_key"])
    assert resp.status == 201, resp


def test_body_over_64_kib_is_413(client, app):
    raw = json.dumps({"email": unique_email(), "password": PASSWORD, "first_name": "a" * 70_000})
    assert len(raw) > 70_000
    resp = client.post("/v1/auth/sign-up", data=raw, content_type="application/json",
                       app_key=app["app_key"])
    assert_problem(resp, 413, "auth/payload-too-large")


def test_body_just_under_64_kib_is_not_413(client, app):
    # The limit is on the body, not on a smaller internal buffer: 60 000 bytes must be read
    # (a long first_name may still be refused as a field, but not as a payload).
    raw = json.dumps({"email": unique_email(), "password": PASSWORD, "first_name": "a" * 60_000})
    resp = client.post("/v1/auth/sign-up", data=raw, content_type="application/json",
                       app_key=app["app_key"])
    assert resp.status != 413, resp
    assert resp.status in (201, 422), resp


def test_unknown_fields_are_ignored(client, app):
    resp = client.sign_up(app, favourite_colour="teal", is_admin=True, roles=["admin"])
    assert resp.status == 201, resp
    # Unknown fields must not smuggle privileges in.
    assert resp.data["user"]["roles"] == []


# --- sign-in -------------------------------------------------------------------------------


def test_sign_in_with_email_returns_200_and_a_new_session(client, app):
    email = unique_email()
    signed_up = client.new_user(app, email=email, first_name="Jo")
    first = client.sign_in(app, email=email)
    second = client.sign_in(app, email=email)
    for resp in (first, second):
        assert resp.status == 200, resp
        assert_token_response(resp.data, is_new_user=False, expires_in=app["access_token_ttl"])
        assert public_user(resp.data["user"]) == public_user(signed_up["user"])
    sessions = {signed_up["session_id"], first.data["session_id"], second.data["session_id"]}
    assert len(sessions) == 3, "each sign-in makes a new session"
    assert first.data["refresh_token"] != second.data["refresh_token"]
    assert first.data["access_token"] != second.data["access_token"]


def stored_hash(app, uid):
    return db_tools.value(f"select password_hash from users where app_id = {db_tools.literal(app['app_id'])} "
                          f"and uid = {db_tools.literal(uid)}")


def b64decode_unpadded(text):
    return base64.b64decode(text + "=" * (-len(text) % 4))


def argon2id_matches(phc, secret):
    """An independent Argon2id check (the cryptography package) of a PHC string."""
    _, algorithm, version, parameters, salt, digest = phc.split("$")
    assert algorithm == "argon2id" and version == "v=19", phc
    cost = dict(pair.split("=") for pair in parameters.split(","))
    derived = Argon2id(salt=b64decode_unpadded(salt), length=len(b64decode_unpadded(digest)),
                       iterations=int(cost["t"]), lanes=int(cost["p"]), memory_cost=int(cost["m"])).derive(secret)
    return hmac.compare_digest(derived, b64decode_unpadded(digest))


# An unpeppered Argon2id of "password", as stored before the pepper (Tests/e2e/test_user_import.py).
UNPEPPERED = "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"


def test_a_stored_password_hash_is_peppered_and_an_old_one_is_replaced_at_sign_in(client, app):
    """ASVS 2.4.5: the stored form is `$pepper-v1` and the Argon2id PHC string of
    HMAC-SHA-256(pepper, password), the pepper being the master key's sub-key
    "password-pepper-v1" (checked here independently of the service); a hash stored before the
    pepper still signs in, and that sign-in replaces it with a peppered one."""
    email = unique_email()
    uid = client.new_user(app, email=email)["user"]["uid"]
    stored = stored_hash(app, uid)
    assert stored.startswith("$pepper-v1$argon2id$v=19$"), stored
    pepper = bytes.fromhex(mail_payload_key(os.environ["IDENTITY_MASTER_KEY"], b"password-pepper-v1"))
    inner = stored[len("$pepper-v1"):]
    assert argon2id_matches(inner, hmac.new(pepper, PASSWORD.encode(), hashlib.sha256).digest())
    assert not argon2id_matches(inner, PASSWORD.encode()), "the password itself is not what Argon2id hashed"
    assert client.sign_in(app, email=email).status == 200
    assert_problem(client.sign_in(app, email=email, password=PASSWORD + "x"), 401, "auth/invalid-credential")
    assert stored_hash(app, uid) == stored

    db_tools.value(f"update users set password_hash = {db_tools.literal(UNPEPPERED)} "
                   f"where app_id = {db_tools.literal(app['app_id'])} and uid = {db_tools.literal(uid)} returning 1")
    assert_problem(client.sign_in(app, email=email, password="passwore"), 401, "auth/invalid-credential")
    assert stored_hash(app, uid) == UNPEPPERED
    # The sign-in contract holds for any right password, even one a new password may not be.
    assert client.sign_in(app, email=email, password="password").status == 200
    upgraded = stored_hash(app, uid)
    assert upgraded.startswith("$pepper-v1$argon2id$v=19$") and upgraded != UNPEPPERED, upgraded
    assert client.sign_in(app, email=email, password="password").status == 200
    assert stored_hash(app, uid) == upgraded


def test_sign_in_with_identifier_email_or_username_case_insensitive(client, app):
    email = unique_email()
    username = unique_username()
    uid = client.new_user(app, email=email, username=username)["user"]["uid"]
    for identifier in (email, email.upper(), username, username.upper()):
        resp = client.sign_in(app, identifier=identifier)
        assert resp.status == 200, (identifier, resp)
        assert resp.data["user"]["uid"] == uid


def test_wrong_password_and_unknown_email_answer_identically(client, app):
    email = unique_email()
    client.new_user(app, email=email)
    wrong = assert_problem(client.sign_in(app, email=email, password="Not-The-Password-1"),
                           401, "auth/invalid-credential")
    unknown = assert_problem(client.sign_in(app, email=unique_email()),
                             401, "auth/invalid-credential")
    wrong.pop("request_id")
    unknown.pop("request_id")
    # Anything that differs would tell an attacker which emails have accounts.
    assert wrong == unknown


def test_sign_in_with_unknown_username_is_invalid_credential(client, app):
    assert_problem(client.sign_in(app, identifier=unique_username()), 401, "auth/invalid-credential")


def test_sign_in_without_email_or_identifier_is_422(client, app):
    assert_problem(client.sign_in(app), 422, "auth/validation-failed")


def test_sign_in_without_password_is_422(client, app):
    resp = client.post("/v1/auth/sign-in", {"email": unique_email()}, app_key=app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.password"])
