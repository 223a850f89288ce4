"""The OpenAPI document is served, lists the endpoints, and every operation it lists is routed
(documentation and router cannot drift apart)."""

import re

import pytest

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
REQUIRED = {
    ("/v1/auth/sign-up", "post"), ("/v1/auth/sign-in", "post"),
    ("/v1/me", "get"), ("/v1/me", "patch"),
    ("/v1/apps/{app_id}/jwks.json", "get"),
    ("/v1/apps/{app_id}/.well-known/openid-configuration", "get"),
    ("/.well-known/oauth-authorization-server/v1/apps/{app_id}", "get"),
    ("/v1/token/introspect", "post"), ("/v1/token/revoke", "post"),
    ("/healthz", "get"), ("/readyz", "get"),
}


@pytest.fixture(scope="module")
def openapi(client):
    resp = client.get("/api/docs/openapi.json")
    assert resp.status == 200, resp
    assert (resp.header("Content-Type") or "").split(";")[0].strip() == "application/json"
    return resp.json


def _operations(doc):
    return sorted((path, method) for path, item in doc["paths"].items()
                  for method in item if method in METHODS)


def test_document_is_openapi_3_1(openapi):
    assert str(openapi["openapi"]).startswith("3.1"), openapi.get("openapi")
    assert isinstance(openapi.get("info"), dict) and isinstance(openapi.get("paths"), dict)


def test_document_lists_the_endpoints(openapi):
    missing = REQUIRED - set(_operations(openapi))
    assert not missing, f"OpenAPI lacks {sorted(missing)}"


def test_every_documented_operation_is_routed(client, app, openapi):
    unrouted = []
    for path, method in _operations(openapi):
        url = re.sub(r"\{[^}]+\}", "x", path.replace("{app_id}", app["app_id"]))
        # {} for bodies: a validation answer is fine here; a routing answer is not.
        body = {} if method in ("post", "patch", "put") else None
        kw = {"json_body": body} if body is not None else {}
        resp = client.request(method.upper(), url, app_key=app["app_key"], **kw)
        code = None
        if resp.body and method != "head":
            try:
                code = resp.json.get("code") if isinstance(resp.json, dict) else None
            except AssertionError:
                code = None
        # A handler may well answer 404 for a missing "x" (no token is sent, so most answer 401
        # first), but a 404 auth/not-found or any 405 here comes from the router.
        if (resp.status == 404 and code == "auth/not-found") or resp.status == 405:
            unrouted.append(f"{method.upper()} {path} → {resp.status} {code}")
        elif path.startswith("/v1/apps/{app_id}/") and method == "get":
            assert resp.status == 200, (path, resp)
    assert not unrouted, "documented but not routed:\n" + "\n".join(unrouted)


def test_docs_page_is_served(client):
    resp = client.get("/api/docs")
    assert resp.status == 200, resp
    assert "html" in (resp.header("Content-Type") or ""), resp.header("Content-Type")
