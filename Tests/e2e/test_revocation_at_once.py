"""An ended session's access tokens are refused by every gateway replica within 100 ms
(docs/api-contract.md, "Tokens and sessions"), though each replica serves GET /v1/me from memory:
the gateway that did not carry the sign-out, which has just served the token from its cache,
refuses it within 100 ms of the end's commit, with /v1/me under load from other clients
meanwhile; the gateway that carried it refuses it on the very next request. A cut notification
channel fails closed: the store is read until the listener is back, and the cache starts empty."""

import os
import threading
import time

import pytest

import db_tools
import ops_metrics
from admin_tools import admin, introspect
from conftest import ServiceProcess, _free_port
from identity_client import Client, assert_no_content, assert_problem, unique_email
from jwt_tools import split

# The promise: a session ended anywhere is refused by every replica within this, from its commit.
REFUSED_WITHIN_SECONDS = 0.1


@pytest.fixture(scope="module")
def replica(stack):
    """A second gateway on the same store and broker, as a load balancer would spread them."""
    port, metrics_port = _free_port(), _free_port()
    process = ServiceProcess("identity-gateway-2", [stack.binary("identity-gateway")],
                             stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                           IDENTITY_METRICS_PORT=str(metrics_port),
                                           IDENTITY_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}"),
                             os.path.join(stack.log_dir, "gateway-2.log"))
    process.start()
    client = Client(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if client.get("/readyz", timeout=2).status == 200:
                break
        except OSError:
            pass
        time.sleep(0.2)
    else:
        process.stop()
        pytest.fail(f"second gateway not ready:\n{process.tail()}")
    client.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    _wait_listening(client)
    yield client
    process.stop()


def _cache(replica, outcome):
    return ops_metrics.value(ops_metrics.scrape(replica.metrics_url), "identity_session_cache_total", outcome=outcome)


def _listening(replica):
    return ops_metrics.value(ops_metrics.scrape(replica.metrics_url), "identity_session_listener_connected") == 1


def _wait_listening(replica, timeout=15):
    deadline = time.monotonic() + timeout
    while not _listening(replica):
        assert time.monotonic() < deadline, "the replica's store change listener did not connect"
        time.sleep(0.05)


def _served_from_memory(replica, app, token):
    """The replica answers this token's /v1/me from its cache (the hit counter rises)."""
    before = _cache(replica, "hit")
    _warm(replica, app, token, times=5)
    assert _cache(replica, "hit") >= before + 4, "GET /v1/me is not served from memory"


class _Poll:
    """GET /v1/me on the replica in a loop with one token: when the first refusal came back."""

    def __init__(self, client, app, token):
        self.stop = threading.Event()
        self.refused_at = None
        self.statuses = []
        self.thread = threading.Thread(target=self._run, args=(client, app, token))

    def _run(self, client, app, token):
        while not self.stop.is_set():
            resp = client.me(app, token)
            self.statuses.append(resp.status)
            if resp.status == 401:
                self.refused_at = time.time()
                return

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def _ended_at(app, sid):
    """When the session's end was written (its transaction's start: before its commit)."""
    return float(db_tools.value(f"SELECT extract(epoch FROM ended_at) FROM sessions "
                                f"WHERE app_id = {db_tools.literal(app['app_id'])} AND id = {db_tools.literal(sid)}"))


def _warm(client, app, token, times=20):
    for _ in range(times):
        resp = client.me(app, token)
        assert resp.status == 200, resp


class _Load:
    """Other users' GET /v1/me on the replica while the test runs."""

    def __init__(self, client, app, token):
        self.stop = threading.Event()
        self.failures = []
        self.count = 0
        self.threads = [threading.Thread(target=self._run, args=(client, app, token)) for _ in range(4)]

    def _run(self, client, app, token):
        while not self.stop.is_set():
            resp = client.me(app, token)
            self.count += 1
            if resp.status != 200:
                self.failures.append(resp.status)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join()


@pytest.mark.parametrize("how", ["sign_out", "sign_out_all", "delete_session", "disable"])
def test_ended_session_is_refused_by_the_other_replica_within_100_ms(client, replica, app, how):
    bystander = client.new_user(app)
    email = unique_email()
    tokens = client.new_user(app, email=email)
    other = client.sign_in(app, email=email, headers={"X-Forwarded-For": "203.0.113.51"}).data
    _warm(replica, app, tokens["access_token"])
    _warm(replica, app, other["access_token"])
    _served_from_memory(replica, app, tokens["access_token"])
    sid = split(tokens["access_token"])[1]["sid"]
    with _Load(replica, app, bystander["access_token"]) as load, _Poll(replica, app, tokens["access_token"]) as poll:
        if how == "sign_out":
            assert_no_content(client.sign_out(app, tokens["access_token"]))
        elif how == "sign_out_all":
            assert_no_content(client.sign_out_all(app, other["access_token"]))
        elif how == "delete_session":
            assert_no_content(client.delete(f"/v1/me/sessions/{sid}", app_key=app["app_key"],
                                            token=other["access_token"]))
        else:
            resp = admin(client, app, "POST", f"/v1/admin/users/{tokens['user']['uid']}/disable")
            assert resp.status == 200, resp
        answered_at = time.time()
        # The gateway that carried the end reads its own write: the very next request.
        assert_problem(client.me(app, tokens["access_token"]), 401, "auth/invalid-token")
        poll.thread.join(timeout=5)
    assert poll.refused_at is not None, f"still served by the replica 5 s after the end: {poll.statuses[-5:]}"
    latency = poll.refused_at - _ended_at(app, sid)
    print(f"\n{how}: refused by the other replica {latency * 1000:.1f} ms after the end was written "
          f"({(poll.refused_at - answered_at) * 1000:.1f} ms after its answer; {len(poll.statuses)} polls)")
    assert latency <= REFUSED_WITHIN_SECONDS, f"{how}: refused after {latency * 1000:.1f} ms"
    assert_problem(replica.get("/v1/me/sessions", app_key=app["app_key"], token=tokens["access_token"]),
                   401, "auth/invalid-token")
    assert load.count > 0 and not load.failures, (load.count, load.failures[:5])
    # The user's other session: ended too by sign-out-all and by disable, untouched otherwise.
    assert replica.me(app, other["access_token"]).status == (401 if how in ("sign_out_all", "disable") else 200)


def _listener_pids():
    return [row[0] for row in db_tools.rows(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'identity-gateway-listener'")]


def test_a_cut_notification_channel_fails_closed(client, replica, app):
    """The listeners' connections are cut, and a session is ended straight in the store while
    they are away (its notification is lost): no replica serves it from memory, neither while the
    listener is down (the store is read) nor after it reconnects (the cache starts empty); once
    back, the replica serves live sessions from memory again."""
    ended = client.new_user(app)
    live = client.new_user(app)
    _served_from_memory(replica, app, ended["access_token"])
    _served_from_memory(replica, app, live["access_token"])
    sid = split(ended["access_token"])[1]["sid"]
    pids = _listener_pids()
    assert len(pids) >= 2, f"one listener per gateway expected: {pids}"
    bypass_before = _cache(replica, "bypass")
    # One statement string, one transaction: the end commits right after the listeners are cut,
    # before they can reconnect.
    db_tools.rows("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                  "AND application_name = 'identity-gateway-listener'; "
                  f"UPDATE sessions SET ended_at = now(), end_reason = 'signed_out' "
                  f"WHERE app_id = {db_tools.literal(app['app_id'])} AND id = {db_tools.literal(sid)}")
    for gateway in (replica, client):
        assert_problem(gateway.me(app, ended["access_token"]), 401, "auth/invalid-token")
    # Back: a new listener connection, and the ended session is still refused (not served from a
    # cache that missed its notification); live sessions are served from memory again.
    _wait_listening(replica)
    assert not set(_listener_pids()) & set(pids), "the listeners were not cut"
    assert_problem(replica.me(app, ended["access_token"]), 401, "auth/invalid-token")
    _served_from_memory(replica, app, live["access_token"])
    print(f"\nreads from the store while the channel was cut: {_cache(replica, 'bypass') - bypass_before:.0f}")


def test_a_refused_refresh_that_ends_its_session_is_read_by_every_replica(stack, client, replica, app):
    """A refresh's success answers without waiting for its replica to hear the store; its refusal
    may have ended the session (a spent token presented past its grace is theft) and waits like
    any other answer: the replica that carried it refuses the session's tokens on the very next
    request, and the other one soon after, though both served them from memory just before."""
    tokens = client.new_user(app)
    rotated = client.refresh(app, tokens["refresh_token"])
    assert rotated.status == 200, rotated
    time.sleep(stack.refresh_grace_seconds + 0.5)
    access = rotated.data["access_token"]
    _served_from_memory(replica, app, access)
    _warm(client, app, access, times=5)
    assert_problem(client.refresh(app, tokens["refresh_token"]), 401, "auth/refresh-token-revoked")
    assert_problem(client.me(app, access), 401, "auth/invalid-token")
    deadline = time.monotonic() + 2
    while replica.me(app, access).status == 200:
        assert time.monotonic() < deadline, "the other replica still serves the session 2 s after its end"
        time.sleep(0.01)
    assert_problem(replica.me(app, access), 401, "auth/invalid-token")


def test_a_new_session_is_served_at_once_by_every_replica(client, replica, app):
    """A sign-in's or a refresh's success answers without waiting for its replica to hear the
    store (nothing held in memory changed): the new session, held nowhere yet, is read from the
    store on its first use, on either replica, and is never refused as unknown, though its user
    is held."""
    email = unique_email()
    first = client.new_user(app, email=email)
    _served_from_memory(replica, app, first["access_token"])
    _warm(client, app, first["access_token"], times=5)
    for _ in range(5):
        signed_in = client.sign_in(app, email=email)
        assert signed_in.status == 200, signed_in
        assert client.me(app, signed_in.data["access_token"]).status == 200
        assert replica.me(app, signed_in.data["access_token"]).status == 200
        introspected = introspect(replica, app, signed_in.data["access_token"])
        assert introspected.status == 200 and introspected.json["active"] is True, introspected
        refreshed = client.refresh(app, signed_in.data["refresh_token"])
        assert refreshed.status == 200, refreshed
        assert client.me(app, refreshed.data["access_token"]).status == 200
        assert replica.me(app, refreshed.data["access_token"]).status == 200


def test_refresh_rotation_keeps_the_session_live_on_the_replica(client, replica, app):
    """The one-round-trip rotation must not end or hide the session: the new access token works
    on the replica at once, the spent refresh token's retry within the grace gives the same pair."""
    tokens = client.new_user(app)
    rotated = client.refresh(app, tokens["refresh_token"])
    assert rotated.status == 200, rotated
    _warm(replica, app, rotated.data["access_token"], times=2)
    _warm(replica, app, tokens["access_token"], times=2)
    again = client.refresh(app, tokens["refresh_token"])
    assert again.status == 200 and again.data["refresh_token"] == rotated.data["refresh_token"], again


def test_a_later_expiry_is_not_announced_and_a_passed_held_expiry_is_read_again(client, replica, app):
    """A refresh moves its session's expiry later without a notification (every refresh's
    commit would otherwise queue on PostgreSQL's notify lock): the replica keeps serving the
    session from memory, and once the expiry it holds has passed it reads the session again
    instead of refusing it."""
    tokens = client.new_user(app)
    sid = split(tokens["access_token"])[1]["sid"]
    where = f"WHERE app_id = {db_tools.literal(app['app_id'])} AND id = {db_tools.literal(sid)}"
    # An earlier expiry is announced: the replica forgets what it held and reads this one.
    db_tools.rows(f"UPDATE sessions SET expires_at = now() + interval '4 seconds' {where}")
    held_until = time.monotonic() + 4
    deadline = time.monotonic() + 2
    while True:
        before = _cache(replica, "hit")
        resp = introspect(replica, app, tokens["access_token"])
        assert resp.status == 200 and resp.json["active"] is True, resp
        if _cache(replica, "hit") > before:
            break
        assert time.monotonic() < deadline, "the replica does not serve the session from memory"
    # A later expiry, as a refresh writes it: no word to the replica, which still holds the old one.
    db_tools.rows(f"UPDATE sessions SET expires_at = now() + interval '1 hour' {where}")
    refreshed = client.refresh(app, tokens["refresh_token"])
    assert refreshed.status == 200, refreshed
    time.sleep(0.3)
    before = _cache(replica, "hit")
    resp = introspect(replica, app, tokens["access_token"])
    assert resp.status == 200 and resp.json["active"] is True, resp
    assert _cache(replica, "hit") == before + 1, "a later expiry was announced and dropped the held session"
    # Past the expiry the replica held: read again, still live.
    time.sleep(max(0.0, held_until - time.monotonic()) + 0.5)
    resp = introspect(replica, app, tokens["access_token"])
    assert resp.status == 200 and resp.json["active"] is True, resp
    assert replica.me(app, refreshed.data["access_token"]).status == 200
