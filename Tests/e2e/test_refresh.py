"""POST /v1/auth/token/refresh: rotation, the grace period for a spent token (lost answers,
parallel refreshes), theft detection after it, expiry, and tenancy. The suite runs the service
with IDENTITY_REFRESH_GRACE_SECONDS=3 (30 s in production)."""

import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import db_tools
from identity_client import (assert_problem, assert_session_works, assert_token_response,
                             public_user)
from jwt_tools import split


def _refreshed(client, app, refresh_token):
    """Refreshes, asserting 200 and the full token-response shape; returns the data."""
    resp = client.refresh(app, refresh_token)
    assert resp.status == 200, resp
    assert resp.header("Content-Type").split(";")[0].strip() == "application/json"
    assert_token_response(resp.data, is_new_user=False, expires_in=app["access_token_ttl"])
    return resp.data


def _live_refresh_tokens(session_id):
    return int(db_tools.value("select count(*) from refresh_tokens "
                              f"where session_id={db_tools.literal(session_id)} and spent_at is null"))


def _is_spent(refresh_token):
    return db_tools.value("select spent_at is not null from refresh_tokens "
                          f"where token_hash={db_tools.token_hash(refresh_token)}") == "t"


def test_refresh_returns_a_new_pair_for_the_same_session(client, app):
    signed_up = client.new_user(app, first_name="Jane")
    data = _refreshed(client, app, signed_up["refresh_token"])
    assert data["session_id"] == signed_up["session_id"]
    assert data["refresh_token"] != signed_up["refresh_token"]
    assert data["access_token"] != signed_up["access_token"]
    assert public_user(data["user"]) == public_user(signed_up["user"])
    claims = split(data["access_token"])[1]
    assert claims["sub"] == signed_up["user"]["uid"]
    assert claims["sid"] == signed_up["session_id"]
    me = client.me(app, data["access_token"])
    assert me.status == 200 and me.data["uid"] == signed_up["user"]["uid"], me
    # The old token is spent (only the grace period stands between it and a 401), its successor
    # is the session's one live token.
    assert _is_spent(signed_up["refresh_token"])
    assert _live_refresh_tokens(signed_up["session_id"]) == 1


def test_refresh_after_sign_in(client, app):
    email = client.new_user(app)["user"]["email"]
    signed_in = client.sign_in(app, email=email)
    assert signed_in.status == 200, signed_in
    data = _refreshed(client, app, signed_in.data["refresh_token"])
    assert data["session_id"] == signed_in.data["session_id"]
    assert client.me(app, data["access_token"]).status == 200


@pytest.mark.parametrize("body", [
    pytest.param({}, id="missing"),
    pytest.param({"refresh_token": None}, id="null"),
    pytest.param({"refresh_token": 42}, id="number"),
    pytest.param({"refresh_token": ["rt_x"]}, id="array"),
    pytest.param({"refresh_token": {"value": "rt_x"}}, id="object"),
])
def test_missing_or_non_string_refresh_token_is_422(client, app, body):
    resp = client.post("/v1/auth/token/refresh", body, app_key=app["app_key"])
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.refresh_token"])


def test_unknown_refresh_token_is_revoked(client, app):
    client.new_user(app)
    unknown = "rt_" + secrets.token_urlsafe(32)
    assert_problem(client.refresh(app, unknown), 401, "auth/refresh-token-revoked")


def test_refresh_token_of_another_app_is_revoked_and_stays_usable_at_home(client, app, other_app):
    signed_up = client.new_user(app)
    client.new_user(other_app)
    assert_problem(client.refresh(other_app, signed_up["refresh_token"]), 401,
                   "auth/refresh-token-revoked")
    # The refused attempt neither spent nor revoked it in its own app.
    assert not _is_spent(signed_up["refresh_token"])
    data = _refreshed(client, app, signed_up["refresh_token"])
    assert data["session_id"] == signed_up["session_id"]


def test_rotation_chain(client, app):
    signed_up = client.new_user(app)
    tokens = [signed_up["refresh_token"]]
    access = [signed_up["access_token"]]
    for _ in range(3):
        data = _refreshed(client, app, tokens[-1])
        assert data["session_id"] == signed_up["session_id"]
        tokens.append(data["refresh_token"])
        access.append(data["access_token"])
    assert len(set(tokens)) == 4, tokens
    assert len(set(access)) == 4
    assert client.me(app, access[-1]).status == 200
    assert _live_refresh_tokens(signed_up["session_id"]) == 1


def test_reuse_within_grace_returns_the_same_successor(client, app):
    signed_up = client.new_user(app)
    first = _refreshed(client, app, signed_up["refresh_token"])
    again = _refreshed(client, app, signed_up["refresh_token"])
    assert again["refresh_token"] == first["refresh_token"], "a retry within the grace period " \
        "must get the same successor, not a second one"
    assert again["session_id"] == signed_up["session_id"]
    assert again["access_token"] != first["access_token"], "expected a fresh access token"
    me = client.me(app, again["access_token"])
    assert me.status == 200, me
    assert _live_refresh_tokens(signed_up["session_id"]) == 1
    # The successor is a normal, live refresh token.
    later = _refreshed(client, app, first["refresh_token"])
    assert later["refresh_token"] not in (signed_up["refresh_token"], first["refresh_token"])
    assert client.me(app, later["access_token"]).status == 200


def test_lost_response_retry_gets_the_successor_it_never_saw(client, app):
    signed_up = client.new_user(app)
    # The service rotates, but its answer never reaches the client (kept here only to compare).
    lost = _refreshed(client, app, signed_up["refresh_token"])
    # The client, knowing nothing better, retries with the token it still holds.
    retry = _refreshed(client, app, signed_up["refresh_token"])
    assert retry["refresh_token"] == lost["refresh_token"]
    assert retry["session_id"] == signed_up["session_id"]
    assert client.me(app, retry["access_token"]).status == 200
    # The client carries on with what the retry gave it.
    carried_on = _refreshed(client, app, retry["refresh_token"])
    assert client.me(app, carried_on["access_token"]).status == 200
    assert _live_refresh_tokens(signed_up["session_id"]) == 1


def test_twenty_parallel_refreshes_all_get_the_same_successor(client, app):
    signed_up = client.new_user(app)
    parallel = 20
    barrier = threading.Barrier(parallel)

    def refresh():
        barrier.wait(timeout=30)
        return client.refresh(app, signed_up["refresh_token"])

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        answers = [f.result() for f in [pool.submit(refresh) for _ in range(parallel)]]
    for resp in answers:
        assert resp.status == 200, resp
        assert_token_response(resp.data, is_new_user=False, expires_in=app["access_token_ttl"])
        assert resp.data["session_id"] == signed_up["session_id"]
    successors = {resp.data["refresh_token"] for resp in answers}
    assert len(successors) == 1, f"{len(successors)} different successors: {sorted(successors)}"
    for resp in answers:
        assert client.me(app, resp.data["access_token"]).status == 200
    assert _live_refresh_tokens(signed_up["session_id"]) == 1
    successor = successors.pop()
    assert successor != signed_up["refresh_token"]
    _refreshed(client, app, successor)


def test_reuse_after_grace_is_theft_and_ends_the_session(stack, client, app, events):
    email = client.new_user(app)["user"]["email"]
    signed_in = client.sign_in(app, email=email)
    assert signed_in.status == 200, signed_in
    victim = signed_in.data
    other = client.sign_in(app, email=email)  # another device of the same user
    assert other.status == 200, other
    uid, sid = victim["user"]["uid"], victim["session_id"]

    successor = _refreshed(client, app, victim["refresh_token"])
    time.sleep(stack.refresh_grace_seconds + 0.5)
    # Both access tokens served (from the gateway's memory) before the theft ends them.
    for token in (successor["access_token"], victim["access_token"]):
        assert client.me(app, token).status == 200
    assert_problem(client.refresh(app, victim["refresh_token"]), 401, "auth/refresh-token-revoked")
    # The whole session is over: the successor, and every access token it issued.
    assert_problem(client.refresh(app, successor["refresh_token"]), 401,
                   "auth/refresh-token-revoked")
    assert_problem(client.me(app, successor["access_token"]), 401, "auth/invalid-token")
    assert_problem(client.me(app, victim["access_token"]), 401, "auth/invalid-token")
    # And it stays over: the stolen token does not come back to life.
    assert_problem(client.refresh(app, victim["refresh_token"]), 401, "auth/refresh-token-revoked")

    reuse = events.wait_for("refresh_token.reuse_detected", lambda b: b.get("session_id") == sid)
    assert reuse.get("uid") == uid, reuse
    assert reuse.get("app_id") == app["app_id"], reuse
    events.wait_for("session.revoked", lambda b: b.get("session_id") == sid)

    # The user's other session is untouched.
    assert_session_works(client, app, other.data)


def test_expired_refresh_token_is_refused(client, app):
    signed_up = client.new_user(app)
    updated = db_tools.value(
        "with aged as (update refresh_tokens set expires_at = now() - interval '1 second' "
        f"where token_hash = {db_tools.token_hash(signed_up['refresh_token'])} returning 1) "
        "select count(*) from aged")
    assert updated == "1", "no refresh_tokens row has the SHA-256 of the token as token_hash"
    assert_problem(client.refresh(app, signed_up["refresh_token"]), 401, "auth/refresh-token-expired")



# --- absolute session lifetime ------------------------------------------------------------


def _age_session(app, session_id, seconds):
    db_tools.rows(f"update sessions set created_at = created_at - interval '{int(seconds)} seconds' "
                  f"where app_id = {db_tools.literal(app['app_id'])} and id = {db_tools.literal(session_id)}")


def test_a_session_past_its_absolute_lifetime_cannot_refresh(client, configured_app_factory, events):
    """However often it refreshed (so never idle), a session ends at the app's absolute
    lifetime: the refresh answers 401 auth/session-expired and the session is over."""
    app = configured_app_factory(session_lifetime=86400)
    assert app["settings"]["session_lifetime"] == 86400
    signed_up = client.new_user(app)
    data = _refreshed(client, app, signed_up["refresh_token"])
    # The idle expiry a refresh sets never reaches past the absolute end.
    expires = db_tools.value("select expires_at <= created_at + interval '1 day' from sessions "
                             f"where id = {db_tools.literal(signed_up['session_id'])}")
    assert expires == "t"

    assert client.me(app, data["access_token"]).status == 200  # held in the gateway's memory
    _age_session(app, signed_up["session_id"], 86400 + 60)
    assert_problem(client.refresh(app, data["refresh_token"]), 401, "auth/session-expired")
    # Ended for good: the access token is refused at once, and later refreshes are revoked.
    assert_problem(client.me(app, data["access_token"]), 401, "auth/invalid-token")
    assert_problem(client.refresh(app, data["refresh_token"]), 401, "auth/refresh-token-revoked")
    events.wait_for("session.revoked", lambda b: b.get("session_id") == signed_up["session_id"])


def test_a_session_within_its_absolute_lifetime_refreshes(client, configured_app_factory):
    app = configured_app_factory(session_lifetime=86400)
    signed_up = client.new_user(app)
    _age_session(app, signed_up["session_id"], 86400 - 120)
    _refreshed(client, app, signed_up["refresh_token"])


def test_session_lifetime_setting_is_bounded(stack, app):
    for bad in ("59", "3599", "315360001", "x"):
        done = stack.ctl("apps", "settings", app["app_id"], "--session-lifetime", bad)
        assert done.returncode != 0 and "--session-lifetime" in done.stderr, (bad, done.stderr)
    assert stack.configure_app(app["app_id"])["session_lifetime"] == 31536000
