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


def introspect(client, app, token, *, key=None, basic=False, form=False, headers=None):
    """POST /v1/token/introspect: the secret key as Bearer (or Basic with the app id), the
    token as JSON (or a form body)."""
    secret = key or app["secret_key"]
    if basic:
        pair = f"{app['app_id']}:{secret}".encode()
        auth = "Basic " + base64.b64encode(pair).decode()
    else:
        auth = f"Bearer {secret}"
    hdrs = {"Authorization": auth, **(headers or {})}
    if form:
        data = urllib.parse.urlencode({"token": token})
        return client.request("POST", "/v1/token/introspect", data=data, headers=hdrs,
                              content_type="application/x-www-form-urlencoded")
    return client.request("POST", "/v1/token/introspect", {"token": token}, headers=hdrs)


def audit_rows(client, app, **filters):
    resp = admin(client, app, "GET", query("/v1/admin/audit", **filters))
    assert resp.status == 200, resp
    return resp.json["data"]
