"""Seed 000's shipped clients, request by request, against an app of profile `standard` with
`path_prefix` `/api/v2` and `apple_nonce` `client` (docs/client-profiles.md): the guide's paths
(`…/api/v2/auth/…`), headers and bodies, and the fields its client code reads (`data.*`,
`code`). Also how a request finds its app without `X-App-Key` (`Host` against `domains`) and
CORS for a web build (preflight and real request, from an allowed and a refused origin)."""

import threading
import secrets
import uuid

import pytest

import db_tools
from identity_client import PASSWORD, assert_problem, unique_email
from mail_flows import MAIL_TIMEOUT
from provider_standin import nonce_claim
from smtp_sink import code_from

PREFIX = "/api/v2"
# What the guide's `call` helper sends with every request.
GUIDE_HEADERS = {"Accept": "application/json"}
USER_FIELDS = ("uid", "email", "email_verified", "first_name", "last_name", "photo_url", "created_at")


@pytest.fixture
def seed000_app(provider_app_factory):
    """An app set up as docs/clients.md's "Profile `standard`" shows."""
    tag = uuid.uuid4().hex[:10]
    app = provider_app_factory(profile="standard", path_prefix=PREFIX, apple_nonce="client",
                               domains=[f"auth-{tag}.example.test", f"localhost:{10000 + int(tag[:6], 16) % 50000}"],
                               allowed_origins=[f"https://web-{tag}.example.test"],
                               # a sign-in code then a reset code to one address within a minute
                               rate_limits={"code_resend_per_address": "10/1m"})
    settings = app["settings"]
    assert settings["profile"] == "standard" and settings["path_prefix"] == PREFIX, settings
    assert settings["apple_nonce"] == "client", settings
    app["host"] = settings["domains"][0]
    app["origin"] = settings["allowed_origins"][0]
    return app


def call(client, app, method, path, body=None, access_token=None, headers=None, by_host=False):
    """The guide's `call` helper: the app key (or, for a build that relies on its custom
    domain, only the Host), Accept and JSON, the bearer when signed in."""
    hdrs = dict(GUIDE_HEADERS, **(headers or {}))
    if by_host:
        hdrs["Host"] = app["host"]
    kwargs = {} if body is None else {"json_body": body}
    return client.request(method, PREFIX + path, app_key=None if by_host else app["app_key"],
                          token=access_token, headers=hdrs, **kwargs)


def assert_tokens(resp, status=200):
    assert resp.status == status, resp
    data = resp.data
    assert data["token_type"] == "Bearer" and isinstance(data["expires_in"], int), data
    assert data["access_token"].count(".") == 2 and data["refresh_token"], data
    for field in USER_FIELDS:
        assert field in data["user"], (field, data["user"])
    return data


# --- email and password ---------------------------------------------------------------------

def test_sign_up_and_its_errors_under_api_v2(client, seed000_app):
    email = unique_email("seed000")
    data = assert_tokens(call(client, seed000_app, "POST", "/auth/sign-up",
                              {"email": email, "password": "correct horse battery", "first_name": "Jane"}), 201)
    assert data["user"]["email"] == email and data["user"]["first_name"] == "Jane"
    assert data["user"]["email_verified"] is False and data["user"]["last_name"] is None

    again = call(client, seed000_app, "POST", "/auth/sign-up", {"email": email, "password": "correct horse battery"})
    assert_problem(again, 409, "auth/email-already-in-use")
    weak = call(client, seed000_app, "POST", "/auth/sign-up", {"email": unique_email(), "password": "short"})
    assert_problem(weak, 422, "auth/weak-password")
    wrong = call(client, seed000_app, "POST", "/auth/sign-in", {"email": email, "password": "not the password"})
    assert_problem(wrong, 401, "auth/invalid-credential")
    right = call(client, seed000_app, "POST", "/auth/sign-in", {"email": email, "password": "correct horse battery"})
    assert assert_tokens(right)["user"]["uid"] == data["user"]["uid"]


def test_prefix_belongs_to_its_app_only(client, seed000_app, app):
    # Another app (no prefix) is not reachable under /api/v2, and /v1 still answers for both.
    other = client.request("POST", PREFIX + "/auth/sign-in", {"email": unique_email(), "password": PASSWORD},
                           app_key=app["app_key"])
    assert_problem(other, 404, "auth/not-found")
    email = unique_email()
    assert_tokens(client.post("/v1/auth/sign-up", {"email": email, "password": PASSWORD},
                              app_key=seed000_app["app_key"]), 201)
    assert_tokens(call(client, seed000_app, "POST", "/auth/sign-in", {"email": email, "password": PASSWORD}))


class Session:
    """The guide's Session helper (Flutter/React Native/iOS/Web alike): the access token in
    memory, the refresh token in "secure storage", one refresh at a time."""

    def __init__(self, client, app):
        self.client, self.app = client, app
        self.access_token = None
        self.storage = {}
        self.lock = threading.Lock()
        self.refresh_calls = 0

    def sign_in(self, email, password):
        resp = call(self.client, self.app, "POST", "/auth/sign-in", {"email": email, "password": password})
        self._keep(assert_tokens(resp))
        return resp.data["user"]

    def authorized(self, method, path, body=None):
        used = self.access_token
        resp = call(self.client, self.app, method, path, body, access_token=used)
        if resp.status == 401 and resp.json.get("code") in ("auth/token-expired", "auth/invalid-token"):
            self.refresh(used)
            resp = call(self.client, self.app, method, path, body, access_token=self.access_token)
        return resp

    def refresh(self, expired):
        # Android's variant: refresh unless another call already did while this one waited.
        with self.lock:
            if self.access_token != expired:
                return
            self.refresh_calls += 1
            resp = call(self.client, self.app, "POST", "/auth/token/refresh",
                        {"refresh_token": self.storage["refresh_token"]})
            if resp.status != 200:
                if resp.json.get("code") == "auth/refresh-token-revoked":
                    self._forget()
                raise AssertionError(f"refresh failed: {resp!r}")
            self._keep(resp.data)

    def sign_out(self):
        try:
            return self.authorized("POST", "/auth/sign-out")
        finally:
            self._forget()

    def _keep(self, tokens):
        self.access_token = tokens["access_token"]
        self.storage["refresh_token"] = tokens["refresh_token"]

    def _forget(self):
        self.access_token = None
        self.storage.pop("refresh_token", None)


def test_session_helper_single_flight_refresh_and_sign_out(client, seed000_app):
    email = unique_email("session")
    assert_tokens(call(client, seed000_app, "POST", "/auth/sign-up", {"email": email, "password": PASSWORD}), 201)
    session = Session(client, seed000_app)
    user = session.sign_in(email, PASSWORD)
    me = session.authorized("GET", "/me")
    assert me.status == 200 and me.data["uid"] == user["uid"], me

    # After a restart the access token is not known: every parallel call gets auth/invalid-token,
    # and exactly one refresh runs for all of them.
    session.access_token = "not-a-token"
    first_refresh_token = session.storage["refresh_token"]
    answers = [None] * 6
    def worker(i):
        answers[i] = session.authorized("GET", "/me")
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(answers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert all(a is not None and a.status == 200 and a.data["uid"] == user["uid"] for a in answers), answers
    assert session.refresh_calls == 1
    assert session.storage["refresh_token"] != first_refresh_token

    # The session is still whole (no parallel refresh spent the token twice).
    session.access_token = "not-a-token"
    assert session.authorized("GET", "/me").status == 200
    assert session.refresh_calls == 2

    old_refresh = session.storage["refresh_token"]
    out = session.sign_out()
    assert out.status == 204, out
    after = call(client, seed000_app, "POST", "/auth/token/refresh", {"refresh_token": old_refresh})
    assert_problem(after, 401, "auth/refresh-token-revoked")


def test_sign_out_all(client, seed000_app):
    email = unique_email()
    first = assert_tokens(call(client, seed000_app, "POST", "/auth/sign-up", {"email": email, "password": PASSWORD}), 201)
    second = assert_tokens(call(client, seed000_app, "POST", "/auth/sign-in", {"email": email, "password": PASSWORD}))
    out = call(client, seed000_app, "POST", "/auth/sign-out-all", access_token=second["access_token"])
    assert out.status == 204, out
    for tokens in (first, second):
        refused = call(client, seed000_app, "POST", "/auth/token/refresh", {"refresh_token": tokens["refresh_token"]})
        assert_problem(refused, 401, "auth/refresh-token-revoked")


# --- email codes, forgotten password ----------------------------------------------------------

def _mail_code(client, smtp_sink, app, path, email):
    mark = smtp_sink.mark()
    resp = call(client, app, "POST", path, {"email": email})
    assert resp.status == 202, resp
    return code_from(smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT))


def test_email_code_and_password_reset_under_api_v2(client, smtp_sink, seed000_app):
    email = unique_email("code")
    code = _mail_code(client, smtp_sink, seed000_app, "/auth/email-code/send", email)
    data = assert_tokens(call(client, seed000_app, "POST", "/auth/email-code/verify",
                              {"email": email, "code": code, "first_name": "Ada", "last_name": "L"}))
    assert data["user"]["email_verified"] is True and data["user"]["first_name"] == "Ada"

    code = _mail_code(client, smtp_sink, seed000_app, "/auth/password/forgot", email)
    reset = call(client, seed000_app, "POST", "/auth/password/reset",
                 {"email": email, "code": code, "password": "a brand new passphrase"})
    assert reset.status == 204, reset
    refused = call(client, seed000_app, "POST", "/auth/token/refresh", {"refresh_token": data["refresh_token"]})
    assert_problem(refused, 401, "auth/refresh-token-revoked")
    assert_tokens(call(client, seed000_app, "POST", "/auth/sign-in", {"email": email, "password": "a brand new passphrase"}))


# --- Google and Apple -------------------------------------------------------------------------

def test_google_under_api_v2(client, providers, seed000_app):
    nonce = secrets.token_urlsafe(16)
    token, claims = providers.google_token(nonce=nonce)
    data = assert_tokens(call(client, seed000_app, "POST", "/auth/google", {"id_token": token, "nonce": nonce}))
    assert data["is_new_user"] is True and data["user"]["email"] == claims["email"]
    token, _ = providers.google_token(nonce=nonce, sub=claims["sub"], email=claims["email"])
    again = assert_tokens(call(client, seed000_app, "POST", "/auth/google", {"id_token": token, "nonce": nonce}))
    assert again["is_new_user"] is False and again["user"]["uid"] == data["user"]["uid"]


def _apple_body(providers, raw_nonce, **claims):
    token, claims = providers.apple_token(nonce=raw_nonce, **claims)
    return {"identity_token": token, "authorization_code": f"c_{secrets.token_hex(16)}", "nonce": raw_nonce,
            "first_name": "Jane", "last_name": "Appleseed"}, claims


def test_apple_with_a_client_made_nonce_is_single_use(client, providers, seed000_app):
    raw = secrets.token_urlsafe(32)  # the client's own nonce; its SHA-256 went to Apple
    body, claims = _apple_body(providers, raw)
    data = assert_tokens(call(client, seed000_app, "POST", "/auth/apple", body))
    assert data["user"]["first_name"] == "Jane" and data["user"]["last_name"] == "Appleseed"
    assert data["user"]["email"] == claims["email"]

    # Remembered until the identity token expires, spent by the sign-in.
    row = db_tools.rows(
        "select extract(epoch from expires_at)::bigint, spent_at is not null from auth_nonces "
        f"where app_id={db_tools.literal(seed000_app['app_id'])} "
        f"and nonce_hash=sha256(convert_to({db_tools.literal(raw)}, 'UTF8'))")
    assert len(row) == 1 and int(row[0][0]) == claims["exp"] and row[0][1] in ("t", True), row

    replay = call(client, seed000_app, "POST", "/auth/apple", body)
    assert_problem(replay, 401, "auth/invalid-apple-token")
    fresh_token_same_nonce, _ = _apple_body(providers, raw, sub=claims["sub"], email=claims["email"])
    assert_problem(call(client, seed000_app, "POST", "/auth/apple", fresh_token_same_nonce), 401,
                   "auth/invalid-apple-token")
    # A nonce that is not the token's is refused before anything is remembered.
    other, _ = _apple_body(providers, secrets.token_urlsafe(32))
    other["nonce"] = secrets.token_urlsafe(32)
    assert_problem(call(client, seed000_app, "POST", "/auth/apple", other), 401, "auth/invalid-apple-token")

    again, _ = _apple_body(providers, secrets.token_urlsafe(32), sub=claims["sub"], email=claims["email"])
    assert assert_tokens(call(client, seed000_app, "POST", "/auth/apple", again))["user"]["uid"] == data["user"]["uid"]


def test_issued_nonce_apps_still_refuse_a_client_nonce(client, providers, provider_app):
    token, _ = providers.apple_token(nonce=secrets.token_urlsafe(32))
    resp = client.post("/v1/auth/apple", {"identity_token": token, "nonce": "whatever-the-client-made"},
                       app_key=provider_app["app_key"])
    assert_problem(resp, 401, "auth/invalid-apple-token")
    raw = secrets.token_urlsafe(32)
    token, _ = providers.apple_token(nonce=raw)
    resp = client.post("/v1/auth/apple", {"identity_token": token, "nonce": raw}, app_key=provider_app["app_key"])
    assert_problem(resp, 401, "auth/invalid-apple-token")


# --- how a request finds its app --------------------------------------------------------------

def test_host_selects_the_app_without_app_key(client, seed000_app):
    email = unique_email("host")
    data = assert_tokens(call(client, seed000_app, "POST", "/auth/sign-up", {"email": email, "password": PASSWORD},
                              by_host=True), 201)
    # The account is the app's own: signing in with the app key finds it.
    assert assert_tokens(call(client, seed000_app, "POST", "/auth/sign-in",
                              {"email": email, "password": PASSWORD}))["user"]["uid"] == data["user"]["uid"]
    # host:port as configured, case-insensitively.
    resp = client.post("/v1/auth/sign-in", {"email": email, "password": PASSWORD},
                       headers={"Host": seed000_app["settings"]["domains"][1].upper()})
    assert assert_tokens(resp)["user"]["uid"] == data["user"]["uid"]
    me = client.get("/v1/me", token=data["access_token"], headers={"Host": seed000_app["host"]})
    assert me.status == 200 and me.data["uid"] == data["user"]["uid"], me


def test_unknown_host_or_wrong_key_is_invalid_app_key(client, seed000_app):
    body = {"email": unique_email(), "password": PASSWORD}
    assert_problem(client.post("/v1/auth/sign-in", body, headers={"Host": "nobody.example.test"}),
                   401, "auth/invalid-app-key")
    # A key that is sent decides, even next to a host that would select an app.
    assert_problem(client.post("/v1/auth/sign-in", body, app_key="ak_wrong", headers={"Host": seed000_app["host"]}),
                   401, "auth/invalid-app-key")


def test_a_domain_belongs_to_one_app(stack, seed000_app, app):
    done = stack.ctl("apps", "settings", app["app_id"], "--domains", seed000_app["host"])
    assert done.returncode != 0 and "another app" in done.stderr, done
    for bad in (["--allowed-origins", "*"], ["--allowed-origins", "https://a.example/path"],
                ["--path-prefix", "/v1/x"], ["--profile", "graphql"], ["--apple-nonce", "maybe"],
                ["--domains", "evil.example/x"]):
        done = stack.ctl("apps", "settings", app["app_id"], *bad)
        assert done.returncode != 0, (bad, done.stdout)


# --- CORS ------------------------------------------------------------------------------------

def _preflight(client, origin):
    return client.request("OPTIONS", PREFIX + "/auth/sign-in", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, x-app-key"})


def test_preflight_from_an_allowed_and_a_refused_origin(client, seed000_app):
    allowed = _preflight(client, seed000_app["origin"])
    assert allowed.status == 204, allowed
    assert allowed.header("Access-Control-Allow-Origin") == seed000_app["origin"]
    assert "POST" in allowed.header("Access-Control-Allow-Methods")
    assert "x-app-key" in allowed.header("Access-Control-Allow-Headers").lower()
    assert "content-type" in allowed.header("Access-Control-Allow-Headers").lower()
    # Tokens, not cookies: no credentials for a standard app, and never a wildcard.
    assert allowed.header("Access-Control-Allow-Credentials") is None
    assert "Origin" in allowed.header("Vary")

    refused = _preflight(client, "https://evil.example.test")
    assert refused.header("Access-Control-Allow-Origin") is None, refused


def test_real_cross_origin_requests(client, seed000_app):
    email = unique_email("cors")
    resp = call(client, seed000_app, "POST", "/auth/sign-up", {"email": email, "password": PASSWORD},
                headers={"Origin": seed000_app["origin"]})
    assert_tokens(resp, 201)
    assert resp.header("Access-Control-Allow-Origin") == seed000_app["origin"]
    assert "X-Request-Id" in resp.header("Access-Control-Expose-Headers")
    assert resp.header("Access-Control-Allow-Credentials") is None

    # An error answer carries them too, so the web build can read `code`.
    wrong = call(client, seed000_app, "POST", "/auth/sign-in", {"email": email, "password": "wrong password!"},
                 headers={"Origin": seed000_app["origin"]})
    assert_problem(wrong, 401, "auth/invalid-credential")
    assert wrong.header("Access-Control-Allow-Origin") == seed000_app["origin"]

    # Another site's page: the service answers, the browser may not read it.
    evil = call(client, seed000_app, "POST", "/auth/sign-in", {"email": email, "password": PASSWORD},
                headers={"Origin": "https://evil.example.test"})
    assert evil.header("Access-Control-Allow-Origin") is None and "Origin" in evil.header("Vary")
