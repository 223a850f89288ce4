"""The gateway over a missing worker or a restarting broker: fail fast with 503, keep serving
reads, and recover on its own. These tests stop shared processes, so conftest runs them last
(marker `disruptive`) and each one restores what it stopped, even when it fails."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from identity_client import assert_problem, unique_email

pytestmark = pytest.mark.disruptive

HEALTHZ_AT_ONCE = 1.0  # seconds: "at once", with room for a busy 2-core machine


def _deadline(stack, extra):
    return stack.request_timeout_ms / 1000 + extra


def _healthz(client):
    try:
        return client.get("/healthz", timeout=5)
    except OSError as exc:  # socket timeouts included
        pytest.fail(f"GET /healthz got no answer within 5 s ({exc!r}): reads starved")


def _sign_in_succeeds(client, app, email):
    return client.sign_in(app, email=email).status == 200


def test_sign_in_is_503_without_worker_and_recovers(stack, client, app):
    email = client.new_user(app)["user"]["email"]
    gateway_pid = stack.gateway.pid
    stack.stop_worker()
    try:
        limit = _deadline(stack, 1.5)
        # Several pending commands at once, each for a different account (so no per-account
        # rate limit kicks in): a gateway that parks a server thread per pending command would
        # run out of threads here and starve the health check below.
        emails = [email] + [unique_email() for _ in range(3)]
        with ThreadPoolExecutor(max_workers=len(emails)) as pool:
            started = time.monotonic()
            futures = [pool.submit(client.sign_in, app, email=e) for e in emails]
            time.sleep(0.3)
            health = []
            for _ in range(3):
                health.append(_healthz(client))
                time.sleep(0.3)
            answers = [f.result() for f in futures]
            took = time.monotonic() - started
        for resp in health:
            assert resp.status == 200, resp
            assert resp.elapsed < HEALTHZ_AT_ONCE, f"/healthz took {resp.elapsed:.2f}s while commands hung"
        for resp in answers:
            assert_problem(resp, 503, "auth/unavailable")
        assert took < limit, f"sign-ins took {took:.2f}s, deadline {limit:.2f}s"
    finally:
        stack.start_worker()
    assert client.wait_for(lambda: _sign_in_succeeds(client, app, email), timeout=15), \
        "sign-in did not recover within 15 s of the worker's return"
    assert stack.gateway.pid == gateway_pid and stack.gateway.alive()


def test_a_sign_up_answered_503_is_not_carried_out_later(stack, client, app):
    # 503 means "safe to retry": the command that timed out must not run when a worker comes
    # back (its AMQP expiration is the caller's deadline), or the retry would find the account
    # already taken.
    email = unique_email()
    stack.stop_worker()
    try:
        assert_problem(client.sign_up(app, email=email), 503, "auth/unavailable")
    finally:
        stack.start_worker()
    def answered():
        resp = client.sign_up(app, email=email)
        return resp if resp.status != 503 else None

    retry = client.wait_for(answered, timeout=15)
    assert retry is not None, "sign-up did not recover within 15 s of the worker's return"
    assert retry.status == 201, retry


def test_broker_restart_is_503_then_recovers_with_the_same_processes(stack, client, smtp_sink,
                                                                       app):
    email = client.new_user(app)["user"]["email"]
    pids = tuple(p.pid for p in stack.processes)
    stack.stop_broker()
    try:
        started = time.monotonic()
        resp = client.sign_in(app, email=email, timeout=30)
        took = time.monotonic() - started
        assert_problem(resp, 503, "auth/unavailable")
        limit = _deadline(stack, 3.0)
        assert took < limit, f"sign-in took {took:.2f}s with the broker down, limit {limit:.2f}s"
        # The gateway itself is alive; it is not ready while the broker is away.
        health = _healthz(client)
        assert health.status == 200 and health.elapsed < HEALTHZ_AT_ONCE, health
        assert client.wait_for(lambda: client.get("/readyz", timeout=5).status != 200, timeout=10), \
            "/readyz still 200 with the broker down"
    finally:
        stack.start_broker()
    assert client.wait_for(lambda: _sign_in_succeeds(client, app, email), timeout=30), \
        "sign-in did not recover within 30 s of the broker's return"
    # The provider worker (nonces are its business) is back on its queue too.
    assert client.wait_for(lambda: client.auth_nonce(app).status == 200, timeout=30), \
        "GET /v1/auth/nonce did not recover within 30 s of the broker's return"
    assert client.get("/readyz").status == 200
    # The mailer worker is back on its queue too: a code asked for now is mailed.
    mail_to = unique_email("after-broker")
    assert client.wait_for(lambda: client.email_code_send(app, mail_to).status == 202,
                           timeout=30), \
        "POST /v1/auth/email-code/send did not recover within 30 s of the broker's return"
    smtp_sink.wait_for(mail_to, timeout=30)
    # Every process, the provider and mailer workers included, lived through it: same pids,
    # all alive.
    assert stack.provider_worker in stack.processes
    assert stack.mailer_worker in stack.processes
    assert tuple(p.pid for p in stack.processes) == pids
    died = [p.name for p in stack.processes if not p.alive()]
    assert not died, f"{', '.join(died)} died over the broker restart"
