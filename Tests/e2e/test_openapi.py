"""The OpenAPI document is served, lists the endpoints, and every operation it lists is routed
(documentation and router cannot drift apart). It is complete as a reference needs it: a server,
described tags, a description on every operation, an example on every request body, and every
error code the service answers explained once in `x-error-catalogue` (where a problem's `type`
points). The reference page and its files are served under a strict CSP."""

import pathlib
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


def test_document_is_complete(openapi):
    """Every operation has a described tag, a summary and a description; every request body an
    example for each of its media types; the document a server."""
    assert openapi.get("servers") and all(s.get("url") for s in openapi["servers"]), openapi.get("servers")
    tags = {t["name"]: t for t in openapi.get("tags", [])}
    undescribed = sorted(name for name, tag in tags.items() if not str(tag.get("description", "")).strip())
    assert not undescribed, f"tags without a description: {undescribed}"
    lacking = []
    for path, method in _operations(openapi):
        op = openapi["paths"][path][method]
        where = f"{method.upper()} {path}"
        if not op.get("tags") or any(tag not in tags for tag in op["tags"]):
            lacking.append(f"{where}: no declared tag ({op.get('tags')})")
        for part in ("summary", "description"):
            if not str(op.get(part, "")).strip():
                lacking.append(f"{where}: no {part}")
        for media_type, media in (op.get("requestBody") or {}).get("content", {}).items():
            if "example" not in media and not media.get("examples"):
                lacking.append(f"{where}: request body {media_type} has no example")
    assert not lacking, f"{len(lacking)} gaps:\n" + "\n".join(lacking)


def test_every_error_code_is_explained_once(openapi):
    """Each code an operation lists, and each code the service's sources answer with, has one
    entry in x-error-catalogue with its status and meaning (the reference page's section that
    a problem's `type` links to)."""
    catalogue = openapi.get("x-error-catalogue")
    assert isinstance(catalogue, list) and catalogue, "no x-error-catalogue"
    codes = [entry["code"] for entry in catalogue]
    assert len(codes) == len(set(codes)), "a code twice"
    for entry in catalogue:
        assert isinstance(entry["status"], int) and entry["status"] >= 400, entry
        assert entry["description"].strip() and entry["title"].strip(), entry
    listed = {code for path, method in _operations(openapi)
              for response in openapi["paths"][path][method].get("responses", {}).values()
              for code in response.get("x-error-codes", [])}
    assert not listed - set(codes), sorted(listed - set(codes))
    sources = pathlib.Path(__file__).resolve().parents[2] / "Sources"
    answered = {m for f in sources.rglob("*.swift") for m in re.findall(r'code: "(auth/[a-z0-9-]+)"', f.read_text())}
    assert len(answered) > 30, answered
    assert not answered - set(codes), f"answered but not explained: {sorted(answered - set(codes))}"


def test_reference_page_and_its_files_are_served_under_a_strict_csp(client):
    page = client.get("/api/docs")
    assert page.status == 200, page
    assert (page.header("Content-Type") or "").startswith("text/html"), page.header("Content-Type")
    csp = page.header("Content-Security-Policy") or ""
    directives = dict((d.strip().split(" ", 1) + [""])[:2] for d in csp.split(";") if d.strip())
    assert directives.get("default-src") == "'none'", csp
    assert directives.get("script-src") == "'self'" and directives.get("style-src") == "'self'", csp
    assert directives.get("connect-src") == "'self'" and directives.get("frame-ancestors") == "'none'", csp
    html = page.body.decode()
    # No inline script or style: the page's code is its two files, both from this origin.
    assert re.findall(r"<script\b[^>]*>", html) == ['<script src="/api/docs/reference.js" defer>'], html
    assert "<style" not in html and " style=" not in html and "://" not in html, html
    for path, media_type in (("/api/docs/reference.js", "text/javascript"), ("/api/docs/reference.css", "text/css")):
        resp = client.get(path)
        assert resp.status == 200, (path, resp)
        assert (resp.header("Content-Type") or "").startswith(media_type), (path, resp.header("Content-Type"))
        assert resp.header("X-Content-Type-Options") == "nosniff", path
        assert len(resp.body) > 1000, path
