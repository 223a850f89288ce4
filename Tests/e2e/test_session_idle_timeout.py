"""The idle timeout of the session-token profiles (issue: account takeover, "idle timeouts"):
a `session-object` (cookie) or `single-token` session unused for longer than its app's
`session_idle_timeout` (30 days by default) is refused as an ended session in the profile's
own error shape, and ended (`end_reason` idle_timeout, its `session.revoked` sent); a session
in use is marked seen, at most once a minute. Idleness is aged in the database
(`last_seen_at`), since nobody waits 30 days."""

import base64
import secrets
import uuid

import pytest

import db_tools
from admin_tools import admin
from identity_client import PASSWORD, assert_problem, unique_email

COOKIE = "__Host-session"
DEFAULT_IDLE = 30 * 86400


@pytest.fixture
def cookie_app(configured_app_factory):
    """A `session-object` app (seed 002's shape), its clients on a host and an origin of their own."""
    tag = uuid.uuid4().hex[:10]
    app = configured_app_factory(profile="session-object", domains=[f"api-{tag}.example.test"],
                                 allowed_origins=[f"https://app-{tag}.example.test"])
    app["host"], app["origin"] = app["settings"]["domains"][0], app["settings"]["allowed_origins"][0]
    return app


@pytest.fixture
def token_app_factory(configured_app_factory):
    """`single-token` apps (seed 001's shape) with the given settings."""
    def make(**settings):
        host = f"idle-{uuid.uuid4().hex[:8]}.test:3100"
        app = configured_app_factory(profile="single-token", domains=[host], **settings)
        app["host"] = host
        return app
    return make


def cookie_sign_in(client, app):
    """Sign-up, then POST /v1/auth/login with transport cookie; returns the session cookie's value."""
    email = unique_email("idle")
    host = {"Host": app["host"]}
    assert client.post("/v1/auth/sign-up", {"email": email, "password": PASSWORD}, headers=host).status == 201
    resp = client.post("/v1/auth/login", {"email": email, "password": PASSWORD, "transport": "cookie"},
                       headers=dict(host, Origin=app["origin"]))
    assert resp.status == 200, resp
    # The session cookie, and the device token's (test_profile_session_object.py).
    cookies = [v for k, v in resp.headers.items() if k.lower() == "set-cookie" and v.startswith(COOKIE + "=")]
    assert len(cookies) == 1, resp.headers
    return cookies[0].split(";")[0].split("=", 1)[1]


def cookie_me(client, app, value):
    return client.get("/v1/me", headers={"Host": app["host"], "Cookie": f"{COOKIE}={value}"})


def guest_token(client, app):
    secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    resp = client.post("/auth/guest", {"secret": secret}, headers={"Host": app["host"]})
    assert resp.status == 200 and resp.json["token"].startswith("st_"), resp
    return resp.json["token"]


def token_me(client, app, token):
    return client.get("/me", token=token, headers={"Host": app["host"]})


def _session_of(token):
    return f"session_token_hash = {db_tools.token_hash(token)}"


def age(token, seconds):
    """Makes the token's session last seen `seconds` ago."""
    db_tools.rows(f"update sessions set last_seen_at = now() - make_interval(secs => {seconds}) "
                  f"where {_session_of(token)}")


def last_seen_ago(token):
    return float(db_tools.value("select extract(epoch from now() - last_seen_at) from sessions "
                                f"where {_session_of(token)}"))


def ended(token):
    return db_tools.rows(f"select ended_at is not null, coalesce(end_reason, '') from sessions where {_session_of(token)}")[0]


def test_an_idle_cookie_session_is_refused_and_ended(client, cookie_app):
    assert cookie_app["settings"]["session_idle_timeout"] == DEFAULT_IDLE
    value = cookie_sign_in(client, cookie_app)
    assert cookie_me(client, cookie_app, value).status == 200
    age(value, DEFAULT_IDLE + 60)
    assert_problem(cookie_me(client, cookie_app, value), 401, "auth/invalid-token")
    assert client.wait_for(lambda: ended(value) == ["t", "idle_timeout"], timeout=10), ended(value)
    # Ended, not only refused: seen "now" again, it stays refused.
    age(value, 0)
    assert_problem(cookie_me(client, cookie_app, value), 401, "auth/invalid-token")


def test_a_recently_seen_session_works_and_is_marked_seen_once_a_minute(client, cookie_app):
    value = cookie_sign_in(client, cookie_app)
    age(value, DEFAULT_IDLE - 3600)
    assert cookie_me(client, cookie_app, value).status == 200
    assert last_seen_ago(value) < 10, "a session in use is marked seen"
    assert ended(value) == ["f", ""]
    # Seen 30 s ago: not written again (at most once a minute per session).
    age(value, 30)
    assert cookie_me(client, cookie_app, value).status == 200
    assert 29 < last_seen_ago(value) < 40
    # The session list shows it as seen (the sign-up's own session is there too, untouched).
    sessions = client.get("/v1/me/sessions", headers={"Host": cookie_app["host"], "Cookie": f"{COOKIE}={value}"})
    assert sessions.status == 200, sessions
    current = [s for s in sessions.data if s["current"]]
    assert len(current) == 1 and len(sessions.data) == 2, sessions.data


def test_a_single_token_session_past_the_apps_idle_timeout_is_unauthorized(client, token_app_factory):
    app = token_app_factory(session_idle_timeout=600)
    assert app["settings"]["session_idle_timeout"] == 600
    idle, recent = guest_token(client, app), guest_token(client, app)
    age(idle, 601)
    age(recent, 540)
    resp = token_me(client, app, idle)
    assert resp.status == 401 and set(resp.json) == {"error"} and resp.json["error"]["code"] == "UNAUTHORIZED", resp
    me = token_me(client, app, recent)
    assert me.status == 200 and me.json["isGuest"] is True, me
    assert client.wait_for(lambda: ended(idle) == ["t", "idle_timeout"], timeout=10), ended(idle)
    assert ended(recent) == ["f", ""]


def test_a_standard_apps_access_tokens_have_no_such_timeout(client, app):
    """Standard sessions idle out through their refresh token (90 days unused), not here: an
    access token of a session last seen long ago still works until its `exp`."""
    tokens = client.new_user(app)
    db_tools.rows("update sessions set last_seen_at = now() - interval '200 days' "
                  f"where id = {db_tools.literal(tokens['session_id'])}")
    assert client.me(app, tokens["access_token"]).status == 200


@pytest.mark.parametrize("seconds", [299, 31536001])
def test_the_setting_is_bounded_alike_in_the_api_and_identityctl(stack, client, app, seconds):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {"session_idle_timeout": seconds})
    problem = assert_problem(resp, 422, "auth/validation-failed", locations=["body.session_idle_timeout"])
    message = problem["errors"][0]["message"]
    assert message == "must be 300 to 31536000 seconds (5 minutes to 365 days)", message
    done = stack.ctl("apps", "settings", app["app_id"], "--session-idle-timeout", str(seconds))
    assert done.returncode != 0 and message in done.stderr, (done.stdout, done.stderr)


def test_the_api_sets_it_and_identityctl_sees_it(stack, client, app):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {"session_idle_timeout": 3600})
    assert resp.status == 200 and resp.data["session_idle_timeout"] == 3600, resp
    assert stack.configure_app(app["app_id"])["session_idle_timeout"] == 3600
    assert stack.configure_app(app["app_id"], session_idle_timeout=300)["session_idle_timeout"] == 300
