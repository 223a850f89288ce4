"""Headers that keep answers out of caches and the docs page locked down: token and user answers
are `Cache-Control: no-store`; `/api/docs` runs only its own
inline script and style (by hash), talks only to its own origin and cannot be framed."""

import re

from identity_client import new_guest_secret


def test_token_answers_are_never_stored(client, app):
    signed_up = client.sign_up(app)
    assert signed_up.status == 201
    for resp in (signed_up, client.guest(app, new_guest_secret()),
                 client.refresh(app, signed_up.data["refresh_token"]),
                 client.me(app, signed_up.data["access_token"])):
        assert resp.status in (200, 201), resp
        assert resp.header("Cache-Control") == "no-store", (resp, resp.headers)
        assert resp.header("X-Content-Type-Options") == "nosniff", resp.headers


def test_public_keys_stay_cacheable(client, app):
    resp = client.get(f"/v1/apps/{app['app_id']}/jwks.json")
    assert resp.status == 200
    assert resp.header("Cache-Control") == "public, max-age=300"


def test_docs_page_has_a_strict_content_security_policy(client):
    resp = client.get("/api/docs")
    assert resp.status == 200
    page = resp.body.decode()
    policy = resp.header("Content-Security-Policy") or ""
    directives = {d.split()[0]: d.split()[1:] for d in (p.strip() for p in policy.split(";")) if d}
    assert directives["default-src"] == ["'none'"], policy
    assert directives["connect-src"] == ["'self'"], policy
    assert directives["frame-ancestors"] == ["'none'"], policy
    # The page's script and style are files of its own origin: no inline code at all.
    assert directives["script-src"] == ["'self'"], policy
    assert directives["style-src"] == ["'self'"], policy
    assert not re.search(r"<script>\s*\S", page) and "<style>" not in page and "onclick=" not in page
    assert "unsafe" not in policy
    assert resp.header("X-Content-Type-Options") == "nosniff"
