"""Operations endpoints: /metrics on every process's operations listener (never on the
gateway's public port) (IDENTITY_METRICS_PORT), parsed with prometheus-client's parser;
/healthz and /readyz of every worker; what the metrics count after real requests."""

import json
import os
import socket
import subprocess
import time
import uuid

import pytest

import ops_metrics
from ops_metrics import scrape, value
from identity_client import assert_problem, unique_email

WORKER_FAMILIES = {"identity_commands", "identity_command_duration_seconds", "identity_commands_in_flight",
                   "identity_process_start_time_seconds"}


def _workers(stack):
    return [stack.worker, stack.revocation, stack.provider_worker, stack.mailer_worker]


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_every_process_serves_parsable_metrics(stack):
    for process in [stack.gateway] + _workers(stack):
        families = scrape(stack.metrics_url(process))
        assert "identity_process_start_time_seconds" in families, process.name
        program = process.name
        assert value(families, "identity_process_start_time_seconds", program=program) > 1.7e9, process.name
    for process in _workers(stack):
        families = scrape(stack.metrics_url(process))
        missing = WORKER_FAMILIES - set(families)
        assert not missing, f"{process.name} lacks {missing}"


def test_healthz_and_readyz_of_every_worker(stack):
    for process in [stack.gateway] + _workers(stack):
        status, _, body = ops_metrics.fetch(stack.metrics_url(process, "/healthz"))
        assert (status, json.loads(body)) == (200, {"status": "ok"}), process.name
        status, _, body = ops_metrics.fetch(stack.metrics_url(process, "/readyz"))
        checks = json.loads(body)
        assert status == 200, (process.name, checks)
        assert checks.get("running") == "ok", (process.name, checks)
    for process in _workers(stack):
        _, _, body = ops_metrics.fetch(stack.metrics_url(process, "/readyz"))
        assert json.loads(body) == {"store": "ok", "broker": "ok", "running": "ok"}, process.name
    status, _, _ = ops_metrics.fetch(stack.metrics_url(stack.worker, "/nope"))
    assert status == 404


@pytest.mark.parametrize("broken", ["broker", "store"])
def test_readyz_names_what_is_unreachable(stack, broken):
    """A token worker whose broker (or database) is not there is alive but not ready."""
    port = _free_port()
    env = dict(stack.env_for("identity-token-worker"), IDENTITY_METRICS_PORT=str(port))
    if broken == "broker":
        env["IDENTITY_AMQP_URL"] = "amqp://nobody:nothing@127.0.0.1:1/%2F"
    else:
        env["IDENTITY_DATABASE_URL"] = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1"
    proc = subprocess.Popen([stack.binary("identity-token-worker")], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        status = body = None
        while time.monotonic() < deadline:
            try:
                status, _, body = ops_metrics.fetch(f"http://127.0.0.1:{port}/readyz", timeout=5)
            except OSError:
                time.sleep(0.2)
                continue
            if status == 503:
                break
            time.sleep(0.2)
        assert status == 503, (status, body)
        checks = json.loads(body)
        assert checks[broken] == "down", checks
        status, _, _ = ops_metrics.fetch(f"http://127.0.0.1:{port}/healthz")
        assert status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_no_metrics_on_the_public_port(client):
    """The traffic's shape is for the operations listener only."""
    assert_problem(client.get("/metrics"), 404, "auth/not-found")


def test_requests_counted_by_route_pattern_never_raw_path(stack, client, app):
    gateway = stack.metrics_url(stack.gateway)
    before = scrape(gateway)
    assert client.sign_up(app).status == 201
    assert client.get(f"/v1/apps/{app['app_id']}/jwks.json").status == 200
    assert client.get(f"/no/such/{uuid.uuid4().hex}").status == 404
    after = scrape(gateway)

    def delta(**labels):
        return (value(after, "identity_http_requests_total", **labels)
                - value(before, "identity_http_requests_total", **labels))

    assert delta(route="/v1/auth/sign-up", method="POST", status_class="2xx") == 1
    assert delta(route="/v1/apps/{app_id}/jwks.json", method="GET", status_class="2xx") == 1
    assert delta(route="unmatched", status_class="4xx") >= 1
    routes = {s.labels.get("route") for s in ops_metrics.samples(after, "identity_http_requests_total")}
    assert not any(app["app_id"] in r or "/no/such" in r for r in routes), routes
    count = value(after, "identity_http_request_duration_seconds_count", route="/v1/auth/sign-up")
    assert count >= 1
    assert value(after, "identity_bus_round_trip_seconds_count", queue="identity.token.commands",
                 outcome="reply") >= 1


def test_auth_outcomes_are_counted(stack, client, configured_app_factory):
    app = configured_app_factory(rate_limits={"sign_in_per_identifier": "2/1m"})
    worker, gateway = stack.metrics_url(stack.worker), stack.metrics_url(stack.gateway)
    before, gateway_before = scrape(worker), scrape(gateway)
    email = unique_email()
    signed_up = client.sign_up(app, email=email)
    assert signed_up.status == 201
    assert client.sign_in(app, email=email).status == 200
    assert client.sign_in(app, email=email, password="wrong-password-1").status == 401
    assert client.sign_in(app, email=email).status == 429
    first = signed_up.json["data"]["refresh_token"]
    refreshed = client.refresh(app, first)
    assert refreshed.status == 200
    # Past the grace period the spent token is theft: the session ends.
    time.sleep(stack.refresh_grace_seconds + 1)
    assert client.refresh(app, first).status == 401
    after, gateway_after = scrape(worker), scrape(gateway)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("identity_sign_ups_total", outcome="success") == 1
    assert delta("identity_sign_ins_total", method="password", outcome="success") == 1
    assert delta("identity_sign_ins_total", method="password", outcome="invalid_credential") == 1
    assert delta("identity_token_refreshes_total", outcome="success") == 1
    assert delta("identity_token_refreshes_total", outcome="auth/refresh-token-revoked") == 1
    assert delta("identity_refresh_token_reuse_detected_total") == 1
    assert delta("identity_commands_total", worker="token-worker", type="identity.token.v1.SignUp", outcome="ok") == 1
    refusals = (value(gateway_after, "identity_rate_limit_refusals_total", limit="sign_in_per_identifier")
                - value(gateway_before, "identity_rate_limit_refusals_total", limit="sign_in_per_identifier"))
    assert refusals == 1
    # No app label unless IDENTITY_METRICS_PER_APP is on.
    assert all("app" not in s.labels for s in ops_metrics.samples(after, "identity_sign_ins_total"))


def _eventually(read, predicate, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        current = read()
        if predicate(current) or time.monotonic() > deadline:
            return current
        time.sleep(0.2)


def test_outbox_and_mail_metrics(stack, client, app):
    """A sign-up's event goes through the outbox; an email code through the mailer. (Read with a
    wait: both are asynchronous, and a worker restarted by an earlier test starts from zero.)"""
    revocation_url, mailer_url = stack.metrics_url(stack.revocation), stack.metrics_url(stack.mailer_worker)
    relayed_before = value(scrape(revocation_url), "identity_outbox_relayed_total")
    sent_before = value(scrape(mailer_url), "identity_deliveries_total", channel="email", outcome="sent")
    email = unique_email("ops-mail")
    assert client.sign_up(app).status == 201
    assert client.email_code_send(app, email).status in (200, 202, 204)
    stack.mail.first(email, timeout=20)
    revocation = _eventually(lambda: scrape(revocation_url),
                             lambda f: value(f, "identity_outbox_relayed_total") > relayed_before)
    assert value(revocation, "identity_outbox_relayed_total") > relayed_before
    assert value(revocation, "identity_outbox_relay_lag_seconds_count") >= 1
    assert "identity_outbox_backlog" in revocation and "identity_outbox_oldest_age_seconds" in revocation
    mailer = _eventually(lambda: scrape(mailer_url),
                         lambda f: value(f, "identity_deliveries_total", channel="email", outcome="sent") > sent_before)
    assert value(mailer, "identity_deliveries_total", channel="email", outcome="sent") > sent_before


def test_an_mfa_challenge_is_counted_as_one_and_its_second_step_as_a_success(stack, client, app):
    """A 202 is not a success: the first factor of an MFA user counts `mfa_challenge`, and the
    second step that finishes it `method="mfa"` success (SignInOutcome.answer, MfaVerification)."""
    from test_mfa import challenge_of, code_at, mfa_user, verify
    email, secret, _, _ = mfa_user(client, app)
    worker = stack.metrics_url(stack.worker)
    before = scrape(worker)
    challenge = challenge_of(client.sign_in(app, email=email))
    assert verify(client, app, challenge, code_at(secret, 1)).status == 200
    after = scrape(worker)

    def delta(**labels):
        return value(after, "identity_sign_ins_total", **labels) - value(before, "identity_sign_ins_total", **labels)

    assert delta(method="password", outcome="mfa_challenge") == 1
    assert delta(method="password", outcome="success") == 0
    assert delta(method="mfa", outcome="success") == 1
