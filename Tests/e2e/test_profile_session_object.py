"""Seed 002's shipped clients against an app of profile `session-object` (docs/client-profiles.md),
request by request as the guide's API reference writes them: no `X-App-Key` (the app is found
by `Host`), `POST /v1/auth/apple/nonce`, `POST /v1/auth/apple/token` with the guide's fields
and length limits, `POST /v1/auth/login`, answers `{token, session, user}` with `usr_`/`ses_`
ids, problem+json errors, and `transport: "cookie"`: a `__Host-` HttpOnly cookie, state-changing
calls accepted only from an allowed origin, cleared by sign-out."""

import hashlib
import secrets
import uuid

import pytest

import db_tools
from identity_client import PASSWORD, TIMESTAMP_RE, assert_problem, unique_email

COOKIE = "__Host-session"
DEVICE_COOKIE = "__Host-device"
SESSION_KEYS = {"id", "created_at", "expires_at", "last_seen_at", "current", "mfa_verified", "ip", "user_agent"}
USER_KEYS = {"id", "email", "email_verified", "has_password", "roles", "created_at"}


@pytest.fixture
def seed002_app(provider_app_factory):
    """An app set up as docs/clients.md's "Profile `session-object`" shows."""
    tag = uuid.uuid4().hex[:10]
    app = provider_app_factory(profile="session-object", domains=[f"api-{tag}.example.test"],
                               allowed_origins=[f"https://app-{tag}.example.test"])
    app["host"] = app["settings"]["domains"][0]
    app["origin"] = app["settings"]["allowed_origins"][0]
    return app


def api(client, app, method, path, body=None, headers=None, bearer=None):
    """The guide's fetch: Content-Type JSON, no app key; the browser adds Host (and Origin)."""
    hdrs = {"Host": app["host"], "User-Agent": "seed002-tests/1.0"}
    hdrs.update(headers or {})
    kwargs = {} if body is None else {"json_body": body}
    return client.request(method, path, token=bearer, headers=hdrs, **kwargs)


def apple_nonce(client, app):
    resp = api(client, app, "POST", "/v1/auth/apple/nonce", {})
    assert resp.status == 200, resp
    body = resp.json
    assert set(body) == {"nonce", "expires_at"} and TIMESTAMP_RE.match(body["expires_at"]), body
    return body["nonce"]


def apple_token_body(client, providers, app, transport=None, **claims):
    nonce = apple_nonce(client, app)
    token, claims = providers.apple_token(nonce=nonce, **claims)
    body = {"id_token": token, "nonce": nonce, "authorization_code": f"c_{secrets.token_hex(16)}",
            "name": "Ada Lovelace"}
    if transport:
        body["transport"] = transport
    return body, claims


def assert_session_answer(resp, with_token=True):
    assert resp.status == 200, resp
    body = resp.json
    assert set(body) == ({"token", "session", "user"} if with_token else {"session", "user"}), body
    assert SESSION_KEYS == set(body["session"]) and USER_KEYS == set(body["user"]), body
    assert body["session"]["id"].startswith("ses_") and body["user"]["id"].startswith("usr_"), body
    assert body["session"]["current"] is True and body["session"]["mfa_verified"] is False
    assert body["session"]["user_agent"] == "seed002-tests/1.0"
    for stamp in ("created_at", "expires_at", "last_seen_at"):
        assert TIMESTAMP_RE.match(body["session"][stamp]), body["session"]
    if with_token:
        assert body["token"].startswith("st_") and len(body["token"]) >= 40, body
    return body


def set_cookies(resp):
    """Every Set-Cookie of an answer: name -> (value, attributes)."""
    out = {}
    for key, header in resp.headers.items():
        if key.lower() == "set-cookie":
            name, _, rest = header.partition("=")
            value, *attributes = [part.strip() for part in rest.split(";")]
            assert name not in out, resp.headers
            out[name] = (value, attributes)
    return out


def session_cookie(resp):
    cookies = set_cookies(resp)
    assert COOKIE in cookies and set(cookies) <= {COOKIE, DEVICE_COOKIE}, cookies
    return (COOKIE, *cookies[COOKIE])


# --- bearer ----------------------------------------------------------------------------------

def test_apple_token_bearer_then_me_and_sign_out(client, providers, seed002_app):
    body, claims = apple_token_body(client, providers, seed002_app, transport="bearer")
    answer = assert_session_answer(api(client, seed002_app, "POST", "/v1/auth/apple/token", body))
    assert answer["user"]["email"] == claims["email"] and answer["user"]["has_password"] is False
    token = answer["token"]

    me = api(client, seed002_app, "GET", "/v1/me", bearer=token)
    assert me.status == 200 and "usr_" + me.data["uid"] == answer["user"]["id"], me
    assert me.data["first_name"] == "Ada" and me.data["last_name"] == "Lovelace", me.data

    # Only the token's hash is stored, on its session.
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert db_tools.value(f"select count(*) from sessions where session_token_hash = '\\x{digest}'::bytea") == "1"
    assert db_tools.tables_containing(token) == []

    # The token is the app's own.
    out = api(client, seed002_app, "POST", "/v1/auth/sign-out", bearer=token)
    assert out.status == 204, out
    assert_problem(api(client, seed002_app, "GET", "/v1/me", bearer=token), 401, "auth/invalid-token")


def test_session_token_is_refused_by_another_app(client, providers, seed002_app, provider_app_factory):
    body, _ = apple_token_body(client, providers, seed002_app)
    token = assert_session_answer(api(client, seed002_app, "POST", "/v1/auth/apple/token", body))["token"]
    other = provider_app_factory(profile="session-object", domains=[f"other-{uuid.uuid4().hex[:8]}.example.test"])
    resp = client.request("GET", "/v1/me", token=token, headers={"Host": other["settings"]["domains"][0]})
    assert_problem(resp, 401, "auth/invalid-token")
    assert_problem(client.get("/v1/me", token=token + "x", headers={"Host": seed002_app["host"]}), 401, "auth/invalid-token")


def test_login_and_its_errors(client, seed002_app):
    email = unique_email("seed002")
    signed_up = api(client, seed002_app, "POST", "/v1/auth/sign-up", {"email": email, "password": PASSWORD})
    assert signed_up.status == 201, signed_up
    answer = assert_session_answer(api(client, seed002_app, "POST", "/v1/auth/login",
                                       {"email": email, "password": PASSWORD}))
    assert answer["user"]["email"] == email and answer["user"]["has_password"] is True
    wrong = api(client, seed002_app, "POST", "/v1/auth/login", {"email": email, "password": "not the password"})
    assert_problem(wrong, 401, "auth/invalid-credential")
    missing = api(client, seed002_app, "POST", "/v1/auth/login", {"email": email})
    assert_problem(missing, 422, "auth/validation-failed")
    assert [e["location"] for e in missing.json["errors"]] == ["body.password"]


@pytest.mark.parametrize("change, location", [
    ({"name": ""}, "body.name"),
    ({"name": "x" * 201}, "body.name"),
    ({"id_token": "x" * 16385}, "body.id_token"),
    ({"nonce": "n" * 257}, "body.nonce"),
    ({"authorization_code": "c" * 4097}, "body.authorization_code"),
    ({"transport": "carrier-pigeon"}, "body.transport"),
    ({"nonce": None}, "body.nonce"),
])
def test_apple_token_length_limits(client, providers, seed002_app, change, location):
    body, _ = apple_token_body(client, providers, seed002_app)
    body.update(change)
    body = {k: v for k, v in body.items() if v is not None}
    resp = api(client, seed002_app, "POST", "/v1/auth/apple/token", body)
    assert_problem(resp, 422, "auth/validation-failed")
    assert location in [e["location"] for e in resp.json["errors"]], resp.json


def test_apple_token_errors_are_problem_json(client, providers, seed002_app):
    body, _ = apple_token_body(client, providers, seed002_app)
    body["nonce"] = secrets.token_urlsafe(32)  # not the token's
    assert_problem(api(client, seed002_app, "POST", "/v1/auth/apple/token", body), 401, "auth/invalid-apple-token")


# --- cookie ----------------------------------------------------------------------------------

def test_cookie_session_from_an_allowed_and_a_refused_origin(client, providers, seed002_app):
    origin = {"Origin": seed002_app["origin"]}
    body, _ = apple_token_body(client, providers, seed002_app, transport="cookie")
    resp = api(client, seed002_app, "POST", "/v1/auth/apple/token", body, headers=origin)
    assert_session_answer(resp, with_token=False)
    assert resp.header("Access-Control-Allow-Origin") == seed002_app["origin"]
    assert resp.header("Access-Control-Allow-Credentials") == "true"
    name, value, attributes = session_cookie(resp)
    assert name == COOKIE and value.startswith("st_"), (name, value)
    assert {"HttpOnly", "Secure", "SameSite=Lax", "Path=/"} <= set(attributes), attributes
    assert not any(a.lower().startswith("domain=") for a in attributes), attributes
    cookie = {"Cookie": f"theme=dark; {COOKIE}={value}"}

    me = api(client, seed002_app, "GET", "/v1/me", headers=cookie)
    assert me.status == 200, me

    # State-changing calls with the cookie: only from an allowed origin.
    for refused in ({"Origin": "https://evil.example.test"}, {}, {"Origin": "null"}):
        resp = api(client, seed002_app, "POST", "/v1/auth/sign-out", headers=dict(cookie, **refused))
        assert_problem(resp, 403, "auth/origin-not-allowed")
    assert api(client, seed002_app, "GET", "/v1/me", headers=cookie).status == 200

    out = api(client, seed002_app, "POST", "/v1/auth/sign-out", headers=dict(cookie, **origin))
    assert out.status == 204, out
    name, value, attributes = session_cookie(out)
    assert name == COOKIE and value == "" and "Max-Age=0" in attributes, (name, value, attributes)
    assert_problem(api(client, seed002_app, "GET", "/v1/me", headers=cookie), 401, "auth/invalid-token")


def test_login_with_cookie_transport(client, seed002_app):
    email = unique_email("cookie")
    assert api(client, seed002_app, "POST", "/v1/auth/sign-up", {"email": email, "password": PASSWORD}).status == 201
    # A cookie sign-in from another page (or with no Origin) is refused before the password is
    # checked, though the browser holds no cookie yet: no page may sign a visitor in to an
    # account of its choosing (login CSRF).
    for refused in ({"Origin": "https://evil.example.test"}, {}, {"Origin": "null"}):
        resp = api(client, seed002_app, "POST", "/v1/auth/login",
                   {"email": email, "password": PASSWORD, "transport": "cookie"}, headers=refused)
        assert_problem(resp, 403, "auth/origin-not-allowed")
        assert not [v for k, v in resp.headers.items() if k.lower() == "set-cookie"], resp.headers
    resp = api(client, seed002_app, "POST", "/v1/auth/login",
               {"email": email, "password": PASSWORD, "transport": "cookie"}, headers={"Origin": seed002_app["origin"]})
    assert_session_answer(resp, with_token=False)
    assert session_cookie(resp)[0] == COOKIE
    # The bearer transport (native clients, which send no Origin) is not affected.
    assert api(client, seed002_app, "POST", "/v1/auth/login", {"email": email, "password": PASSWORD}).status == 200


def test_preflight_allows_credentials_for_the_cookie_app(client, seed002_app):
    resp = client.request("OPTIONS", "/v1/auth/apple/token", headers={
        "Origin": seed002_app["origin"], "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    assert resp.status == 204, resp
    assert resp.header("Access-Control-Allow-Origin") == seed002_app["origin"]
    assert resp.header("Access-Control-Allow-Credentials") == "true"
    refused = client.request("OPTIONS", "/v1/auth/apple/token", headers={
        "Origin": "https://evil.example.test", "Access-Control-Request-Method": "POST"})
    assert refused.header("Access-Control-Allow-Origin") is None
    assert refused.header("Access-Control-Allow-Credentials") is None


def test_the_profiles_openapi_document(client):
    resp = client.get("/api/docs/profiles/session-object/openapi.json")
    assert resp.status == 200, resp
    paths = resp.json["paths"]
    assert set(paths) == {"/v1/auth/login", "/v1/auth/apple/nonce", "/v1/auth/apple/token"}, set(paths)
    token = paths["/v1/auth/apple/token"]["post"]
    schema = token["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["id_token"]["maxLength"] == 16384 and schema["properties"]["name"]["maxLength"] == 200
    assert "auth/invalid-apple-token" in token["responses"]["401"]["x-error-codes"]
    assert "auth/validation-failed" in token["responses"]["422"]["x-error-codes"]
    assert "application/problem+json" in token["responses"]["401"]["content"]


def test_an_mfa_user_gets_the_guides_202_challenge_then_a_session(client, seed002_app):
    """Seed 002's client reads `mfa` from a 202 (`{"mfa": {challenge_token, expires_at,
    methods}}`) and completes it with POST /v1/auth/mfa/verify."""
    from test_mfa import code_at, enrol_totp
    email = unique_email("seed002-mfa")
    user = client.new_user(seed002_app, email=email)
    secret, _ = enrol_totp(client, seed002_app, user["access_token"])
    resp = api(client, seed002_app, "POST", "/v1/auth/login", {"email": email, "password": PASSWORD})
    assert resp.status == 202 and set(resp.json) == {"mfa"}, resp
    mfa = resp.json["mfa"]
    assert set(mfa) >= {"challenge_token", "expires_at", "methods"} and "totp" in mfa["methods"], mfa
    done = api(client, seed002_app, "POST", "/v1/auth/mfa/verify",
               {"challenge_token": mfa["challenge_token"], "code": code_at(secret, 1)})  # the enrolment spent this step
    assert done.status == 200, done


def test_a_passkey_sign_in_answers_the_same_session(client, stack, seed002_app):
    """POST /v1/auth/passkey/verify takes `transport` like /v1/auth/mfa/verify: a session
    answer with the token in the body, or with `transport: "cookie"` in the cookie."""
    import webauthn_authenticator as wa
    from test_passkeys import ORIGIN, RP_ID, _registered
    stack.configure_app(seed002_app["app_id"], webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN])
    user = client.new_user(seed002_app, email=unique_email("seed002-passkey"))
    cred, _ = _registered(client, seed002_app, user["access_token"])
    for transport in (None, "cookie"):
        started = api(client, seed002_app, "POST", "/v1/auth/passkey/options", {})
        assert started.status == 200, started
        body = {"flow_id": started.data["flow_id"], "response": wa.get(cred, started.data["options"], ORIGIN)}
        if transport:
            body["transport"] = transport
        resp = api(client, seed002_app, "POST", "/v1/auth/passkey/verify", body, headers={"Origin": seed002_app["origin"]})
        assert resp.status == 200 and set(resp.json) == ({"session", "user"} if transport else {"token", "session", "user"}), resp
        assert resp.json["session"]["mfa_verified"] is True, resp.json  # a passkey with user verification
        assert resp.json["user"]["id"].endswith(user["user"]["uid"]), resp.json
        assert (session_cookie(resp)[0] == COOKIE) if transport else resp.json["token"].startswith("st_"), resp


def test_a_cookie_browser_keeps_its_own_sign_in_budget(client, seed002_app):
    """docs/flows.md, "The owner is not locked out", for the cookie transport: the password
    sign-in's device token travels in a `__Host-device` cookie, so once a guesser elsewhere has
    spent the identifier's budget the owner's browser still signs in (and gets a new one)."""
    email = unique_email("device")
    assert api(client, seed002_app, "POST", "/v1/auth/sign-up", {"email": email, "password": PASSWORD}).status == 201
    origin = {"Origin": seed002_app["origin"]}

    def login(password=PASSWORD, cookie=None):
        headers = dict(origin, **{"X-Forwarded-For": f"198.18.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"})
        if cookie:
            headers["Cookie"] = cookie
        return api(client, seed002_app, "POST", "/v1/auth/login",
                   {"email": email, "password": password, "transport": "cookie"}, headers=headers)

    first = login()
    assert first.status == 200, first
    device, attributes = set_cookies(first)[DEVICE_COOKIE]
    assert device.startswith("dt_") and len(device) >= 40, device
    assert {"Path=/", "HttpOnly", "Secure", "SameSite=Strict"} <= set(attributes), attributes
    assert f"Max-Age={90 * 86400}" in attributes, attributes
    for _ in range(12):
        if login("not-the-password-1").status == 429:
            break
    # Another browser (no device cookie) is refused like the guesses...
    assert_problem(login(), 429, "auth/rate-limited")
    # ... the owner's, with its device cookie, signs in and gets a new device token.
    resp = login(cookie=f"theme=dark; {DEVICE_COOKIE}={device}")
    assert resp.status == 200, resp
    renewed = set_cookies(resp)[DEVICE_COOKIE][0]
    assert renewed != device and renewed.startswith("dt_")
    # A cookie that is no device token unlocks nothing.
    assert_problem(login(cookie=f"{DEVICE_COOKIE}=dt_forged"), 429, "auth/rate-limited")
