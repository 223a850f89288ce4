"""A slow or dead auth hook costs only its own app (docs/hooks.md, "A slow or dead hook costs
only its own app"), against receivers on loopback that answer late or never:

- While app A's `before_token` hook hangs under a burst of A's sign-ins, app B's sign-ins and
  refreshes answer at their usual speed: A's calls wait without the token worker's slots, at
  most 4 of them at once (IDENTITY_HOOK_APP_CONCURRENCY) and 4 more waiting for a spot; the
  rest follow A's policy at once.
- After 5 failures in a row the app's breaker opens: the hook is not called, the policy applies
  at once, one `auth_hook.circuit_opened` audit row says so; 2 s later (the suite's
  IDENTITY_HOOK_BREAKER_SECONDS) one call probes the hook again, and its answer closes it.
- A hook's timeout is at most 3000 ms, so that a sign-in waiting on it still fits the gateway's
  5 s.
- Calls to a hook reuse their connection (keep-alive) instead of connecting again each time.
"""

import time
from concurrent.futures import ThreadPoolExecutor

from admin_tools import admin, audit_rows
from identity_client import assert_problem, random_client_ip, unique_email
from test_auth_hooks import receiver, save_hook  # noqa: F401 (fixture)


def users(client, app, count):
    emails = [unique_email("fair") for _ in range(count)]
    for email in emails:
        assert client.sign_up(app, email=email, headers={"X-Forwarded-For": random_client_ip()}).status == 201
    return emails


def timed(call):
    started = time.monotonic()
    resp = call()
    return resp, time.monotonic() - started


def test_one_apps_hanging_hook_leaves_other_apps_at_full_speed(stack, client, receiver):
    slow_app, other_app = stack.create_app(), stack.create_app()
    burst = users(client, slow_app, 12)
    [other] = users(client, other_app, 1)
    other_tokens = client.sign_in(other_app, email=other, headers={"X-Forwarded-For": random_client_ip()}).data
    hook = receiver(delay=10.0)  # answers long after any timeout
    save_hook(client, slow_app, "before_token", hook, timeout_ms=3000, failure_policy="fail_open")

    with ThreadPoolExecutor(len(burst)) as pool:
        slow = [pool.submit(timed, lambda email=email: client.sign_in(
            slow_app, email=email, headers={"X-Forwarded-For": random_client_ip()})) for email in burst]
        time.sleep(0.5)  # A's calls are waiting on its hook now
        assert len(hook.calls) >= 1
        for _ in range(5):
            resp, took = timed(lambda: client.sign_in(other_app, email=other,
                                                      headers={"X-Forwarded-For": random_client_ip()}))
            assert resp.status == 200 and took < 1.5, (resp, took)
            resp, took = timed(lambda: client.refresh(other_app, other_tokens["refresh_token"]))
            assert resp.status == 200 and took < 1.5, (resp, took)
            other_tokens = resp.data
        answered = [future.result() for future in slow]
    # Every sign-in of A went on without the hook (fail_open): 4 called it and waited for their
    # timeout (cut to the caller's deadline: 1 s of the suite's 2 s), 4 more waited for their
    # spots, and the rest went on at once, never calling it.
    took = sorted(seconds for _, seconds in answered)
    assert all(resp.status == 200 for resp, _ in answered), answered
    assert len(hook.calls) <= 8, len(hook.calls)
    assert sum(1 for seconds in took if seconds < 0.5) >= len(burst) - 8, took
    assert took[-1] < 2.0, took  # inside the gateway's 2 s: no 503


def test_the_breaker_opens_after_five_failures_and_a_probe_closes_it(stack, client, receiver):
    app = stack.create_app()
    [email] = users(client, app, 1)
    hook = receiver(delay=5.0)
    save_hook(client, app, "before_token", hook, timeout_ms=300, failure_policy="fail_closed")
    ip = random_client_ip()
    for _ in range(5):
        assert_problem(client.sign_in(app, email=email, headers={"X-Forwarded-For": ip}), 503, "auth/hook-failed")
    assert len(hook.calls) == 5
    # Open: refused at once, the hook not called.
    resp, took = timed(lambda: client.sign_in(app, email=email, headers={"X-Forwarded-For": ip}))
    assert_problem(resp, 503, "auth/hook-failed")
    assert len(hook.calls) == 5 and took < 0.3 + 0.5, (len(hook.calls), took)
    [opened] = audit_rows(client, app, action="auth_hook.circuit_opened")
    assert opened["detail"]["kind"] == "before_token" and opened["detail"]["failures"] == 5, opened
    assert len(audit_rows(client, app, action="auth_hook.failed")) == 5

    # The hook recovers; after the open period one call probes it, and it answers.
    hook.delay = 0
    time.sleep(2.2)
    assert client.sign_in(app, email=email, headers={"X-Forwarded-For": ip}).status == 200
    assert len(hook.calls) == 6
    assert client.sign_in(app, email=email, headers={"X-Forwarded-For": ip}).status == 200
    assert len(hook.calls) == 7


def test_a_hook_timeout_fits_inside_the_gateways_request_timeout(client, app, receiver):
    hook = receiver()
    resp = admin(client, app, "PUT", "/v1/admin/hooks/before_token", {"url": hook.url, "timeout_ms": 3001})
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.timeout_ms"])
    assert save_hook(client, app, "before_token", hook, timeout_ms=3000)["timeout_ms"] == 3000


def test_calls_to_a_hook_reuse_their_connection(client, app, receiver):
    [email] = users(client, app, 1)
    hook = receiver()
    save_hook(client, app, "before_token", hook)
    for _ in range(6):
        assert client.sign_in(app, email=email, headers={"X-Forwarded-For": random_client_ip()}).status == 200
    assert len(hook.ports) == 6
    assert len(set(hook.ports)) <= 2, hook.ports  # one connection, or two when a call raced another's return
