"""A tiny HTTP client for the identity service, plus the assertions every test shares.

http.client rather than urllib: urllib raises on 4xx/5xx, and most of these tests are about
exactly those answers.
"""

import http.client
import json
import re
import secrets
import socket
import time
import uuid
from urllib.parse import urlsplit

# Strong enough to pass any "common password" list, and cheap to type in a failure message.
PASSWORD = "Tangerine-Walrus-42!"

REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
ULID_RE = re.compile(r"^[0-7][0-9a-hjkmnp-tv-z]{25}$")  # lower-case Crockford, no i l o u
TIMESTAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

USER_KEYS = (
    "uid", "email", "email_verified", "phone", "username", "first_name", "last_name",
    "photo_url", "is_guest", "has_password", "providers", "roles", "mfa_enabled", "created_at",
)
TOKEN_RESPONSE_KEYS = (
    "access_token", "token_type", "expires_in", "refresh_token", "session_id", "is_new_user", "user",
)

_NO_BODY = object()  # distinguishes "no body" from a JSON null body


def unique_email(tag="user"):
    # Every test makes its own users so tests never collide, even within one app.
    return f"{tag}-{uuid.uuid4().hex[:12]}@example.com"


def unique_username(tag="u"):
    return f"{tag}_{uuid.uuid4().hex[:12]}"


def new_guest_secret():
    """A guest secret as a client makes it once and keeps: 256 random bits, 43 base64url
    characters."""
    return secrets.token_urlsafe(32)


def unique_push_token():
    # The shape of an APNs device token (64 hex digits); FCM tokens are longer, any text will do.
    return secrets.token_hex(32)


class Response:
    def __init__(self, status, headers, body, elapsed):
        self.status = status
        self.headers = headers  # http.client.HTTPMessage: case-insensitive .get()
        self.body = body
        self.elapsed = elapsed
        self._json = _NO_BODY

    def header(self, name):
        return self.headers.get(name)

    @property
    def json(self):
        if self._json is _NO_BODY:
            try:
                self._json = json.loads(self.body.decode("utf-8"))
            except ValueError as exc:
                raise AssertionError(f"body is not JSON ({exc}): {self.body[:500]!r}") from None
        return self._json

    @property
    def data(self):
        body = self.json
        assert isinstance(body, dict) and "data" in body, f"no 'data' envelope: {body!r}"
        return body["data"]

    def __repr__(self):
        return f"<Response {self.status} {self.body[:800]!r}>"


def random_client_ip():
    """A made-up client address in 10.0.0.0/8, as a trusted proxy would forward it."""
    return f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"


class Client:
    """One connection per request: simple, and a server that closes a connection early (413)
    cannot poison the next request.

    The test gateway trusts 127.0.0.1 as a proxy (IDENTITY_TRUSTED_PROXIES), and every request
    comes "through" it from a random client address (`X-Forwarded-For`), so the per-IP rate
    limits count each request on its own, as they would count a crowd of real users. A test of
    the per-IP limits sends its own `X-Forwarded-For`; `Client(..., forwarded_for=None)` sends
    none (the socket peer counts)."""

    def __init__(self, base_url, timeout=15.0, forwarded_for=random_client_ip):
        self.forwarded_for = forwarded_for
        parts = urlsplit(base_url)
        self.base_url = base_url.rstrip("/")
        self.host = parts.hostname
        self.port = parts.port
        self.timeout = timeout

    def request(self, method, path, json_body=_NO_BODY, *, data=None, headers=None,
                app_key=None, token=None, content_type=None, request_id=None, timeout=None):
        hdrs = {}
        if json_body is not _NO_BODY:
            data = json.dumps(json_body).encode("utf-8")
            hdrs["Content-Type"] = "application/json"
        elif data is not None and isinstance(data, str):
            data = data.encode("utf-8")
        if content_type is not None:
            hdrs["Content-Type"] = content_type
        if app_key is not None:
            hdrs["X-App-Key"] = app_key
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        if request_id is not None:
            hdrs["X-Request-Id"] = request_id
        hdrs.update(headers or {})
        if self.forwarded_for is not None and not any(k.lower() == "x-forwarded-for" for k in hdrs):
            hdrs["X-Forwarded-For"] = self.forwarded_for()
        if data is not None:
            hdrs["Content-Length"] = str(len(data))

        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout or self.timeout)
        started = time.monotonic()
        try:
            try:
                conn.request(method, path, body=data, headers=hdrs)
            except (BrokenPipeError, ConnectionResetError):
                # A server may answer 413 and close before reading a large body; the answer
                # is still waiting in our receive buffer.
                pass
            resp = conn.getresponse()
            body = resp.read()
            return Response(resp.status, resp.headers, body, time.monotonic() - started)
        finally:
            conn.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, json_body=_NO_BODY, **kw):
        return self.request("POST", path, json_body, **kw)

    def patch(self, path, json_body=_NO_BODY, **kw):
        return self.request("PATCH", path, json_body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    # --- flows ---------------------------------------------------------------------------

    # Keyword arguments other than timeout, headers and token become JSON fields of the body.
    # `token` (a Bearer access token) is for calls made signed in: a guest's token upgrades
    # that guest.
    def sign_up(self, app, email=None, password=PASSWORD, timeout=None, headers=None, token=None,
                **fields):
        body = {"email": email or unique_email(), "password": password, **fields}
        return self.post("/v1/auth/sign-up", body, app_key=app["app_key"], token=token,
                         timeout=timeout, headers=headers)

    def sign_in(self, app, password=PASSWORD, timeout=None, headers=None, token=None, **fields):
        return self.post("/v1/auth/sign-in", {**fields, "password": password},
                         app_key=app["app_key"], token=token, timeout=timeout, headers=headers)

    def guest(self, app, secret, **kw):
        return self.post("/v1/auth/guest", {"secret": secret}, app_key=app["app_key"], **kw)

    def refresh(self, app, refresh_token, **kw):
        return self.post("/v1/auth/token/refresh", {"refresh_token": refresh_token},
                         app_key=app["app_key"], **kw)

    def sign_out(self, app, token, **kw):
        # No body at all: the Bearer token says which session ends.
        return self.post("/v1/auth/sign-out", app_key=app["app_key"], token=token, **kw)

    def sign_out_all(self, app, token, **kw):
        return self.post("/v1/auth/sign-out-all", app_key=app["app_key"], token=token, **kw)

    def sessions(self, app, token, **kw):
        return self.get("/v1/me/sessions", app_key=app["app_key"], token=token, **kw)

    def end_session(self, app, token, session_id, **kw):
        return self.delete(f"/v1/me/sessions/{session_id}", app_key=app["app_key"], token=token,
                           **kw)

    def me(self, app, token, **kw):
        return self.get("/v1/me", app_key=app["app_key"], token=token, **kw)

    def patch_me(self, app, token, body, **kw):
        return self.patch("/v1/me", body, app_key=app["app_key"], token=token, **kw)

    def delete_me(self, app, token, body=_NO_BODY, **kw):
        """DELETE /v1/me with the proof as JSON body ({password}, {secret}, {id_token} or
        {identity_token, authorization_code, nonce}); no body at all when none is given."""
        return self.delete("/v1/me", json_body=body, app_key=app["app_key"], token=token, **kw)

    # --- push devices ------------------------------------------------------------------------

    def register_device(self, app, token, push_token, platform="ios", kind="apns", **fields):
        """POST /v1/me/devices {token: push_token, platform, kind, **fields (device_name)}."""
        body = {"token": push_token, "platform": platform, "kind": kind, **fields}
        return self.post("/v1/me/devices", body, app_key=app["app_key"], token=token)

    def devices(self, app, token, **kw):
        return self.get("/v1/me/devices", app_key=app["app_key"], token=token, **kw)

    def unregister_device(self, app, token, device_id, **kw):
        return self.delete(f"/v1/me/devices/{device_id}", app_key=app["app_key"], token=token,
                           **kw)

    # --- providers (Apple, Google, Firebase) -----------------------------------------------
    # `token` (a Bearer access token) is for calls made signed in (guest upgrade).

    def auth_nonce(self, app, **kw):
        return self.get("/v1/auth/nonce", app_key=app["app_key"], **kw)

    def new_nonce(self, app):
        """A fresh raw nonce from GET /v1/auth/nonce (asserting 200)."""
        resp = self.auth_nonce(app)
        assert resp.status == 200, resp
        return resp.data["nonce"]

    def apple_sign_in(self, app, timeout=None, headers=None, token=None, **fields):
        return self.post("/v1/auth/apple", fields, app_key=app["app_key"], token=token,
                         timeout=timeout, headers=headers)

    def google_sign_in(self, app, timeout=None, headers=None, token=None, **fields):
        return self.post("/v1/auth/google", fields, app_key=app["app_key"], token=token,
                         timeout=timeout, headers=headers)

    def id_token_sign_in(self, app, timeout=None, headers=None, token=None, **fields):
        return self.post("/v1/auth/id-token", fields, app_key=app["app_key"], token=token,
                         timeout=timeout, headers=headers)

    def link_identity(self, app, token, provider, body, **kw):
        return self.post(f"/v1/me/identities/{provider}", body, app_key=app["app_key"],
                         token=token, **kw)

    def unlink_identity(self, app, token, provider, **kw):
        return self.delete(f"/v1/me/identities/{provider}", app_key=app["app_key"], token=token,
                           **kw)

    # --- email codes, passwords, email verification -----------------------------------------

    def email_code_send(self, app, email, **kw):
        return self.post("/v1/auth/email-code/send", {"email": email}, app_key=app["app_key"],
                         **kw)

    def email_code_verify(self, app, timeout=None, headers=None, token=None, **fields):
        """fields: email, code, first_name?, last_name?"""
        return self.post("/v1/auth/email-code/verify", fields, app_key=app["app_key"],
                         token=token, timeout=timeout, headers=headers)

    def password_forgot(self, app, email, **kw):
        return self.post("/v1/auth/password/forgot", {"email": email}, app_key=app["app_key"],
                         **kw)

    def password_verify_code(self, app, email, code, **kw):
        return self.post("/v1/auth/password/verify-code", {"email": email, "code": code},
                         app_key=app["app_key"], **kw)

    def password_reset(self, app, email, code, password, **kw):
        return self.post("/v1/auth/password/reset",
                         {"email": email, "code": code, "password": password},
                         app_key=app["app_key"], **kw)

    def change_password(self, app, token, current_password, new_password, **kw):
        return self.post("/v1/me/password", {"current_password": current_password,
                                             "new_password": new_password},
                         app_key=app["app_key"], token=token, **kw)

    def request_email_verification(self, app, token, **kw):
        # No body: the Bearer token says whose email.
        return self.post("/v1/me/email/verification", app_key=app["app_key"], token=token, **kw)

    def verify_email(self, app, email, code, **kw):
        return self.post("/v1/auth/email/verify", {"email": email, "code": code},
                         app_key=app["app_key"], **kw)

    def new_user(self, app, **fields):
        """Signs up a fresh user and returns the token response's data (asserting 201)."""
        resp = self.sign_up(app, **fields)
        assert resp.status == 201, resp
        return resp.data

    def new_guest(self, app, secret=None, is_new_user=None):
        """POST /v1/auth/guest with `secret` (a fresh one when None), asserting the 200 token
        response of a guest (is_new_user as given, when given). Returns (data, secret)."""
        secret = secret or new_guest_secret()
        resp = self.guest(app, secret)
        assert resp.status == 200, resp
        data = resp.data
        if is_new_user is None:
            is_new_user = data.get("is_new_user")
        assert_token_response(data, is_new_user=is_new_user, expires_in=app["access_token_ttl"])
        assert data["user"]["is_guest"] is True, data["user"]
        return data, secret

    def new_device(self, app, token, push_token=None, platform="ios", kind="apns", **fields):
        """Registers a push device (a fresh push token when None), asserting 201; returns the
        device (the answer's data)."""
        resp = self.register_device(app, token, push_token or unique_push_token(), platform,
                                    kind, **fields)
        assert resp.status == 201, resp
        return resp.data

    def wait_for(self, predicate, timeout, interval=0.5):
        """Retries predicate() until it returns a truthy value; returns the last value."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = predicate()
            except (OSError, socket.timeout, http.client.HTTPException):
                value = None
            if value or time.monotonic() >= deadline:
                return value
            time.sleep(interval)


def assert_problem(resp, status, code, locations=()):
    """An RFC 9457 problem with the stable `code`, whose request_id matches the header."""
    assert resp.status == status, f"expected {status} {code}, got {resp!r}"
    ctype = resp.header("Content-Type") or ""
    assert ctype.split(";")[0].strip().lower() == "application/problem+json", ctype
    body = resp.json
    assert isinstance(body, dict), body
    for key in ("type", "title", "status", "code", "detail", "request_id"):
        assert key in body, f"problem lacks {key!r}: {body!r}"
    assert body["code"] == code, body
    assert body["status"] == status, body
    assert isinstance(body["type"], str) and isinstance(body["title"], str), body
    assert body["request_id"] == resp.header("X-Request-Id"), (body, resp.header("X-Request-Id"))
    if code == "auth/validation-failed" or locations:
        errors = body.get("errors")
        assert isinstance(errors, list) and errors, f"no errors[]: {body!r}"
        for err in errors:
            assert isinstance(err, dict) and isinstance(err.get("location"), str), body
            assert isinstance(err.get("message"), str), body
        found = {err["location"] for err in errors}
        missing = set(locations) - found
        assert not missing, f"errors[] lacks {sorted(missing)}: {body!r}"
    return body


def assert_user_shape(user):
    missing = [k for k in USER_KEYS if k not in user]
    assert not missing, f"user lacks {missing}: {user!r}"
    assert ULID_RE.match(user["uid"]), user["uid"]
    assert TIMESTAMP_RE.match(user["created_at"]), user["created_at"]


def public_user(user):
    """The documented user fields only, so comparisons survive extra fields added later."""
    return {key: user.get(key) for key in USER_KEYS}


def assert_token_response(data, *, is_new_user, expires_in):
    missing = [k for k in TOKEN_RESPONSE_KEYS if k not in data]
    assert not missing, f"token response lacks {missing}: {data!r}"
    assert data["token_type"] == "Bearer"
    assert data["expires_in"] == expires_in
    assert data["is_new_user"] is is_new_user
    assert isinstance(data["access_token"], str) and data["access_token"].count(".") == 2
    # rt_ + 256 random bits: at least 43 base64url characters after the prefix.
    assert data["refresh_token"].startswith("rt_") and len(data["refresh_token"]) >= 46
    assert data["session_id"].startswith("ses_") and len(data["session_id"]) > 4
    assert_user_shape(data["user"])


def assert_no_content(resp):
    assert resp.status == 204, f"expected 204, got {resp!r}"
    assert resp.body == b"", f"a 204 with a body: {resp.body[:300]!r}"


def assert_session_works(client, app, tokens):
    """The session behind a token response (or refresh answer) still lives: its access token is
    accepted and its refresh token rotates. Returns the refresh answer's data: the session's
    tokens from now on (the old refresh token is spent)."""
    me = client.me(app, tokens["access_token"])
    assert me.status == 200, f"access token of live session {tokens['session_id']} refused: {me!r}"
    resp = client.refresh(app, tokens["refresh_token"])
    assert resp.status == 200, f"refresh of live session {tokens['session_id']} refused: {resp!r}"
    assert resp.data["session_id"] == tokens["session_id"], resp.data
    return resp.data


def assert_session_ended(client, app, tokens):
    """The session behind a token response has ended: its access token is refused at once (not
    only at exp) and its refresh token is revoked."""
    assert_problem(client.me(app, tokens["access_token"]), 401, "auth/invalid-token")
    assert_problem(client.refresh(app, tokens["refresh_token"]), 401, "auth/refresh-token-revoked")
