"""Cross-cutting answers: app keys, request ids, routing errors, health checks."""

import pytest

from identity_client import PASSWORD, REQUEST_ID_RE, assert_problem, unique_email


# --- X-App-Key ---------------------------------------------------------------------------


def _app_scoped_calls():
    body = {"email": unique_email(), "password": PASSWORD}
    return [("POST", "/v1/auth/sign-up", body), ("POST", "/v1/auth/sign-in", body),
            ("GET", "/v1/me", None), ("PATCH", "/v1/me", {"first_name": "X"})]


@pytest.mark.parametrize("app_key", [None, "ak_doesnotexist", ""])
def test_missing_or_unknown_app_key_is_401(client, app, app_key):
    # A real token, so that only the app key can be the reason for the 401.
    token = client.new_user(app)["access_token"]
    for method, path, body in _app_scoped_calls():
        kw = {} if body is None else {"json_body": body}
        headers = {"X-App-Key": app_key} if app_key is not None else {}
        resp = client.request(method, path, headers=headers, token=token, **kw)
        assert_problem(resp, 401, "auth/invalid-app-key")


def test_secret_key_is_not_an_app_key(client, app):
    # The secret key belongs on the app's backend; it must not stand in for the public key.
    resp = client.sign_up({"app_key": app["secret_key"]})
    assert_problem(resp, 401, "auth/invalid-app-key")


# --- X-Request-Id ------------------------------------------------------------------------


@pytest.mark.parametrize("rid", ["test-req-123", "a.b_c:d-E9", "r" * 128])
def test_sane_request_id_is_echoed_on_success_and_errors(client, app, rid):
    ok = client.get("/healthz", request_id=rid)
    assert ok.status == 200 and ok.header("X-Request-Id") == rid, ok.headers
    created = client.post("/v1/auth/sign-up", {"email": unique_email(), "password": PASSWORD},
                          app_key=app["app_key"], request_id=rid)
    assert created.status == 201 and created.header("X-Request-Id") == rid
    for resp in (client.get("/v1/nope", request_id=rid),
                 client.get("/v1/auth/sign-in", app_key=app["app_key"], request_id=rid),
                 client.get("/v1/me", request_id=rid)):
        assert resp.header("X-Request-Id") == rid
        assert resp.json["request_id"] == rid


@pytest.mark.parametrize("rid", ["r" * 129, "x" * 300, "has spaces in it", "<script>", ""])
def test_insane_request_id_is_replaced(client, rid):
    resp = client.get("/v1/nope", request_id=rid)
    assert_problem(resp, 404, "auth/not-found")
    generated = resp.header("X-Request-Id")
    assert generated and generated != rid
    assert REQUEST_ID_RE.match(generated), generated
    health = client.get("/healthz", request_id=rid)
    assert health.header("X-Request-Id") and health.header("X-Request-Id") != rid


def test_request_id_is_generated_and_unique_when_absent(client, app):
    seen = set()
    for resp in (client.get("/healthz"), client.get("/healthz"), client.get("/v1/nope"),
                 client.sign_up(app), client.get("/v1/me", app_key=app["app_key"])):
        rid = resp.header("X-Request-Id")
        assert rid and REQUEST_ID_RE.match(rid), (resp, rid)
        seen.add(rid)
    assert len(seen) == 5, seen


# --- routing -------------------------------------------------------------------------------


@pytest.mark.parametrize("method, path", [("GET", "/v1/nope"), ("POST", "/v1/nope"),
                                          ("GET", "/v1/auth/nope"), ("GET", "/nope")])
def test_unknown_path_is_404(client, app, method, path):
    resp = client.request(method, path, app_key=app["app_key"])
    assert_problem(resp, 404, "auth/not-found")
    assert resp.header("X-Request-Id")


def _allow(resp):
    return {m.strip().upper() for m in (resp.header("Allow") or "").split(",") if m.strip()}


@pytest.mark.parametrize("method, path, allowed", [
    ("GET", "/v1/auth/sign-in", {"POST"}),
    ("PUT", "/v1/auth/sign-up", {"POST"}),
    ("PUT", "/v1/me", {"GET", "PATCH", "DELETE"}),
])
def test_wrong_method_is_405_with_allow(client, app, method, path, allowed):
    resp = client.request(method, path, app_key=app["app_key"])
    assert_problem(resp, 405, "auth/method-not-allowed")
    assert allowed <= _allow(resp), resp.header("Allow")
    assert method not in _allow(resp)
    assert resp.header("X-Request-Id")


# --- health ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_checks_need_no_app_key(client, path):
    resp = client.get(path)
    assert resp.status == 200, resp
    assert resp.header("X-Request-Id")


@pytest.mark.parametrize("field", ["email", "identifier"])
def test_a_nul_character_is_refused_not_cut(client, app, field):
    """libpq would end the string at the NUL: "<email>\\u0000junk" must not sign in as <email>
    (nor count as a fresh identifier for the per-identifier rate limit)."""
    email = unique_email()
    client.new_user(app, email=email)
    resp = client.sign_in(app, **{field: email + "\u0000junk"})
    assert_problem(resp, 422, "auth/validation-failed", locations=(f"body.{field}",))
    resp = client.sign_up(app, email=unique_email(), first_name="Jane\u0000Doe")
    assert_problem(resp, 422, "auth/validation-failed", locations=("body.first_name",))


@pytest.mark.parametrize("raw", [b"Jane\xffDoe", b"Jane\xc3", b"\xed\xa0\x80", b"Jane\\ud800Doe", b"\\udc00"])
def test_a_string_that_is_not_utf8_text_is_refused_not_replaced(client, app, raw):
    """Invalid UTF-8 or a lone surrogate in a string field: 422, and nothing is made with the
    string cut or replaced (U+FFFD) instead."""
    email = unique_email()
    body = b'{"email":"%s","password":"%s","first_name":"%s"}' % (email.encode(), PASSWORD.encode(), raw)
    resp = client.post("/v1/auth/sign-up", data=body, app_key=app["app_key"], content_type="application/json")
    assert_problem(resp, 422, "auth/validation-failed", locations=("body",))
    assert client.sign_in(app, email=email).status == 401
