"""PostgreSQL restarted under the running stack: while it is away, /readyz says so and reads and
commands answer 503 `auth/unavailable` at once (never a hang, never a 500); once it is back, the
same processes serve again on their own (their pools reconnect) and the outbox relay publishes
again. The test stops the database every other test shares, so conftest runs it last (marker
`disruptive`) and it starts the database again even when it fails."""

import http.client
import time

import pytest

from identity_client import assert_problem, unique_email

pytestmark = pytest.mark.disruptive

READYZ_NOT_READY_WITHIN = 5.0  # seconds after the database stopped
RECOVERY = 30.0                # seconds after it accepts connections again


def _deadline(stack, extra):
    return stack.request_timeout_ms / 1000 + extra


def _timed(what, call, limit):
    """call(timeout=...) → (response, seconds taken); a missing answer fails the test (a hang)."""
    started = time.monotonic()
    try:
        resp = call(timeout=limit + 5)
    except (OSError, http.client.HTTPException) as exc:  # socket timeouts included
        pytest.fail(f"{what} got no answer within {limit + 5:.1f} s with the database down "
                    f"({exc!r})")
    return resp, time.monotonic() - started


def _until(what, call, expected, deadline):
    """Retries call() until it answers `expected` or the deadline passes. On the way only a 503
    `auth/unavailable` (or no answer at all) counts as "not yet": anything else fails at once."""
    last = None
    while True:
        try:
            resp = call()
        except (OSError, http.client.HTTPException) as exc:
            resp, last = None, exc
        if resp is not None:
            if resp.status == expected:
                return resp
            if resp.status != 503:
                pytest.fail(f"{what} answered {resp!r} after the database's return; only "
                            f"{expected} or 503 auth/unavailable (not yet) will do")
            assert_problem(resp, 503, "auth/unavailable")
            last = resp
        if time.monotonic() >= deadline:
            pytest.fail(f"{what}: no {expected} within {RECOVERY:.0f} s of the database's return "
                        f"(last: {last!r})")
        time.sleep(0.3)


def test_database_restart_is_503_then_recovers_with_the_same_processes(stack, client, app,
                                                                       events):
    before = client.new_user(app)
    email = before["user"]["email"]
    pids = {p.name: p.pid for p in stack.processes}
    limit = _deadline(stack, 2.0)

    stack.stop_database()
    try:
        # Not ready, and saying why.
        stopped = time.monotonic()

        def not_ready():
            resp = client.get("/readyz", timeout=READYZ_NOT_READY_WITHIN)
            return resp if resp.status == 503 else None

        ready = client.wait_for(not_ready, timeout=READYZ_NOT_READY_WITHIN, interval=0.2)
        took = time.monotonic() - stopped
        assert ready is not None and took < READYZ_NOT_READY_WITHIN, \
            f"/readyz not 503 within {READYZ_NOT_READY_WITHIN:.0f} s of the database stopping " \
            f"(after {took:.1f} s: {ready!r})"
        assert ready.json.get("store") == "unreachable", ready
        assert ready.json.get("broker") == "ok", ready

        # A command (through the token worker) and a read (the gateway's own): 503 at once.
        resp, took = _timed("sign-in", lambda timeout: client.sign_in(app, email=email,
                                                                      timeout=timeout), limit)
        assert_problem(resp, 503, "auth/unavailable")
        assert took < limit, f"sign-in took {took:.2f}s with the database down, limit {limit:.2f}s"

        resp, took = _timed("GET /v1/me", lambda timeout: client.me(app, before["access_token"],
                                                                    timeout=timeout), limit)
        assert_problem(resp, 503, "auth/unavailable")
        assert took < limit, \
            f"GET /v1/me took {took:.2f}s with the database down, limit {limit:.2f}s"
    finally:
        stack.start_database()

    deadline = time.monotonic() + RECOVERY
    # A fresh address each attempt: a 503 is "try again", and this keeps a retry from meeting
    # an account an earlier attempt may have made.
    signed_up = _until("sign-up", lambda: client.sign_up(app, email=unique_email("after-db")),
                       201, deadline).data
    uid = signed_up["user"]["uid"]
    signed_in = _until("sign-in", lambda: client.sign_in(app, email=signed_up["user"]["email"]),
                       200, deadline).data
    assert signed_in["user"]["uid"] == uid, signed_in
    refreshed = _until("refresh", lambda: client.refresh(app, signed_in["refresh_token"]),
                       200, deadline).data
    assert refreshed["session_id"] == signed_in["session_id"], refreshed
    me = _until("GET /v1/me", lambda: client.me(app, refreshed["access_token"]), 200, deadline)
    assert me.data["uid"] == uid, me
    _until("sign-out", lambda: client.sign_out(app, refreshed["access_token"]), 204, deadline)
    assert_problem(client.me(app, refreshed["access_token"]), 401, "auth/invalid-token")
    # The session from before the restart lives on.
    me = _until("GET /v1/me (session from before the restart)",
                lambda: client.me(app, before["access_token"]), 200, deadline)
    assert me.data["uid"] == before["user"]["uid"], me

    # The outbox relay reconnected too: the new account's user.created reaches the event stream.
    events.wait_for("user.created", lambda body: body.get("uid") == uid, timeout=RECOVERY)
    assert client.wait_for(lambda: client.get("/readyz", timeout=5).status == 200, timeout=10), \
        "/readyz not 200 again after the database's return"

    # Every process lived through it: same pids, all alive.
    assert {p.name: p.pid for p in stack.processes} == pids
    died = [p.name for p in stack.processes if not p.alive()]
    assert not died, f"{', '.join(died)} died over the database restart"
