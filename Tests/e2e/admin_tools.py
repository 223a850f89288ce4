"""Calls of the admin API (`Authorization: Bearer <secret key>`) and introspection, for the e2e
tests. `app` is the identityctl apps create JSON (its `secret_key`)."""

import base64
import json
import urllib.parse


def admin(client, app, method, path, body=None, *, key=None, headers=None, **kw):
    """An admin call with the app's secret key (or `key`), JSON body when given."""
    hdrs = {"Authorization": f"Bearer {key or app['secret_key']}", **(headers or {})}
    if body is None:
        return client.request(method, path, headers=hdrs, **kw)
    return client.request(method, path, body, headers=hdrs, **kw)


def query(path, **params):
    """`path?name=value&…` with the parameters that are not None, URL-encoded."""
    given = {k: v for k, v in params.items() if v is not None}
    return path + ("?" + urllib.parse.urlencode(given) if given else "")


def introspect(client, app, token, *, key=None, basic=False, form=False, post=False, headers=None,
               path="/v1/token/introspect"):
    """POST /v1/token/introspect (or, with `path`, the revocation endpoint, which takes the same):
    the secret key as Bearer (or Basic with the app id, or with `post` the form fields client_id
    and client_secret), the token as JSON (or a form body)."""
    secret = key or app["secret_key"]
    if post:
        data = urllib.parse.urlencode({"token": token, "client_id": app["app_id"], "client_secret": secret})
        return client.request("POST", path, data=data, headers=headers or {},
                              content_type="application/x-www-form-urlencoded")
    if basic:
        pair = f"{app['app_id']}:{secret}".encode()
        auth = "Basic " + base64.b64encode(pair).decode()
    else:
        auth = f"Bearer {secret}"
    hdrs = {"Authorization": auth, **(headers or {})}
    if form:
        data = urllib.parse.urlencode({"token": token})
        return client.request("POST", path, data=data, headers=hdrs,
                              content_type="application/x-www-form-urlencoded")
    return client.request("POST", path, {"token": token}, headers=hdrs)


def assert_invalid_client(resp):
    """OAuth's refusal of a client (RFC 6749 §5.2) on introspection and revocation: 401
    {"error": "invalid_client"} as application/json, with a Basic challenge."""
    assert resp.status == 401, resp
    assert (resp.header("Content-Type") or "").split(";")[0] == "application/json", resp
    assert resp.json["error"] == "invalid_client", resp
    assert (resp.header("WWW-Authenticate") or "").startswith('Basic realm="'), resp
    assert resp.header("Cache-Control") == "no-store", resp


def audit_rows(client, app, **filters):
    resp = admin(client, app, "GET", query("/v1/admin/audit", **filters))
    assert resp.status == 200, resp
    return resp.json["data"]
