"""Rate limits (docs/api-contract.md, "Operating the service"): every limited call answers
429 `auth/rate-limited` with `Retry-After`, `RateLimit-Policy` and `RateLimit` once its budget is
spent; another IP or identifier is unaffected; after `Retry-After` it works again; the budget is
shared by every gateway replica (it lives in PostgreSQL) and can be overridden per app.

The shared client comes "through" a trusted proxy with a random `X-Forwarded-For` per request;
these tests send their own to be one client address."""

import re
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Callable

import pytest

from identity_client import (Client, PASSWORD, assert_problem, new_guest_secret, unique_email)
from mail_flows import email_code, other_code, password_reset_code


def ip():
    """A fresh client address (TEST-NET-2), forwarded by the trusted proxy."""
    return f"198.51.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"


def via(address):
    return {"X-Forwarded-For": address}


def retry_after(resp):
    value = resp.header("Retry-After")
    assert value is not None and value.isdigit(), f"Retry-After missing or not seconds: {resp.headers}"
    return int(value)


def assert_limited(resp, name, count, window):
    """429 auth/rate-limited naming `name` in both RateLimit headers; returns Retry-After."""
    assert_problem(resp, 429, "auth/rate-limited")
    wait = retry_after(resp)
    assert 1 <= wait <= window, (wait, resp.headers)
    policy = resp.header("RateLimit-Policy") or ""
    assert f'"{name}";q={count};w={window}' in policy, policy
    state = resp.header("RateLimit") or ""
    assert re.search(rf'"{name}";r=0;t=\d+', state), state
    return wait


@dataclass
class Case:
    name: str
    count: int
    window: int
    allowed: tuple  # statuses of a request the limit lets through
    # call(client, app, subject, ctx): one request counted against `subject` (an IP for per-IP
    # limits, an address or identifier otherwise, a user's token for per-user limits), every
    # other input fresh.
    call: Callable
    subject: Callable  # (client, app) -> a fresh subject
    extra: dict = None  # other overrides the case needs


def _per_ip(call):
    return call, lambda client, app: ip()


CASES = [
    Case("sign_in_per_ip", 2, 4, (401,),
         lambda c, a, s: c.sign_in(a, email=unique_email(), headers=via(s)), lambda c, a: ip()),
    Case("sign_in_per_identifier", 2, 4, (401,),
         lambda c, a, s: c.sign_in(a, identifier=s, headers=via(ip())), lambda c, a: unique_email()),
    Case("sign_up_per_ip", 2, 4, (201,),
         lambda c, a, s: c.sign_up(a, email=unique_email(), headers=via(s)), lambda c, a: ip()),
    Case("guest_per_ip", 2, 4, (200, 201),
         lambda c, a, s: c.guest(a, new_guest_secret(), headers=via(s)), lambda c, a: ip()),
    Case("nonce_per_ip", 2, 4, (200,),
         lambda c, a, s: c.auth_nonce(a, headers=via(s)), lambda c, a: ip()),
    Case("refresh_per_ip", 2, 4, (401,),
         lambda c, a, s: c.refresh(a, "rt_" + secrets.token_urlsafe(32), headers=via(s)), lambda c, a: ip()),
    Case("code_send_per_ip", 2, 4, (202,),
         lambda c, a, s: c.email_code_send(a, unique_email(), headers=via(s)), lambda c, a: ip()),
    Case("code_send_per_address", 2, 4, (202,),
         lambda c, a, s: c.email_code_send(a, s, headers=via(ip())), lambda c, a: unique_email(),
         extra={"code_resend_per_address": "1000/1s"}),
    Case("code_resend_per_address", 1, 3, (202,),
         lambda c, a, s: c.password_forgot(a, s, headers=via(ip())), lambda c, a: unique_email()),
    Case("code_verify_per_ip", 2, 4, (401,),
         lambda c, a, s: c.email_code_verify(a, email=unique_email(), code="123456", headers=via(s)),
         lambda c, a: ip()),
    # Counted before the handler: an app without passkeys answers 422, and still counts.
    Case("passkey_options_per_ip", 2, 4, (422,),
         lambda c, a, s: c.post("/v1/auth/passkey/options", {}, app_key=a["app_key"], headers=via(s)),
         lambda c, a: ip()),
    Case("password_check_per_user", 2, 4, (401,),
         lambda c, a, s: c.change_password(a, s, "not-the-password", "Another-Walrus-43!", headers=via(ip())),
         lambda c, a: c.new_user(a)["access_token"]),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_limit_refuses_past_its_budget_and_reopens_after_retry_after(client, configured_app_factory, case):
    limits = {case.name: f"{case.count}/{case.window}s", **(case.extra or {})}
    app = configured_app_factory(rate_limits=limits)
    assert app["settings"]["rate_limits"][case.name] == f"{case.count}/{case.window}s", app["settings"]
    subject = case.subject(client, app)

    for n in range(case.count):
        resp = case.call(client, app, subject)
        assert resp.status in case.allowed, (n, resp)
        state = resp.header("RateLimit") or ""
        assert re.search(rf'"{case.name}";r={case.count - n - 1};t=\d+', state), (n, resp.headers)
        assert f'"{case.name}";q={case.count};w={case.window}' in (resp.header("RateLimit-Policy") or "")

    refused = case.call(client, app, subject)
    wait = assert_limited(refused, case.name, case.count, case.window)
    # Hammering a closed limit does not push its reopening further away.
    assert_limited(case.call(client, app, subject), case.name, case.count, case.window)

    other = case.call(client, app, case.subject(client, app))
    assert other.status in case.allowed, f"another subject must be unaffected: {other!r}"

    time.sleep(wait + 0.2)
    again = case.call(client, app, subject)
    assert again.status in case.allowed, f"after Retry-After ({wait} s): {again!r}"


def test_default_sign_in_limit_per_identifier_is_10_per_15_minutes(client, app):
    email = unique_email()
    client.new_user(app, email=email)
    for n in range(10):
        resp = client.sign_in(app, email=email, password="wrong-password", headers=via(ip()))
        assert_problem(resp, 401, "auth/invalid-credential")
    # The right password, from yet another address, is refused too: the identifier is spent.
    refused = client.sign_in(app, email=email, headers=via(ip()))
    assert_limited(refused, "sign_in_per_identifier", 10, 900)
    # `identifier` and `email` (any case) are the same identifier.
    assert_limited(client.sign_in(app, identifier=email.upper(), headers=via(ip())),
                   "sign_in_per_identifier", 10, 900)


def test_code_send_refusal_is_the_same_for_known_and_unknown_addresses(client, app):
    known = unique_email()
    client.new_user(app, email=known)
    unknown = unique_email()
    answers = {}
    for address in (known, unknown):
        for route in ("email_code_send", "password_forgot"):
            first = getattr(client, route)(app, address, headers=via(ip()))
            second = getattr(client, route)(app, address, headers=via(ip()))
            answers[(address, route)] = (first, second)
    for route in ("email_code_send", "password_forgot"):
        k1, k2 = answers[(known, route)]
        u1, u2 = answers[(unknown, route)]
        assert k1.status == u1.status, (route, k1, u1)
    # Sign-in codes and reset codes share the per-address budget: the second send of each pair
    # (and of the other route) was refused by the 1-per-60-s limit, for both addresses alike.
    for address in (known, unknown):
        for route in ("email_code_send", "password_forgot"):
            _, second = answers[(address, route)]
            assert_limited(second, "code_resend_per_address", 1, 60)
            assert sorted(second.json) == sorted(answers[(known, route)][1].json)


def test_two_gateways_share_one_budget(stack, configured_app_factory, second_gateway):
    app = configured_app_factory(rate_limits={"sign_up_per_ip": "3/1m"})
    address = ip()
    first, second = stack.client, second_gateway
    assert first.sign_up(app, headers=via(address)).status == 201
    assert second.sign_up(app, headers=via(address)).status == 201
    assert first.sign_up(app, headers=via(address)).status == 201
    assert_limited(second.sign_up(app, headers=via(address)), "sign_up_per_ip", 3, 60)
    assert_limited(first.sign_up(app, headers=via(address)), "sign_up_per_ip", 3, 60)


def test_untrusted_peer_cannot_choose_its_address(configured_app_factory, second_gateway_untrusting):
    """A gateway that trusts no proxy counts the socket peer, whatever X-Forwarded-For says."""
    app = configured_app_factory(rate_limits={"nonce_per_ip": "2/1m"})
    client = second_gateway_untrusting
    assert client.auth_nonce(app, headers=via(ip())).status == 200
    assert client.auth_nonce(app, headers=via(ip())).status == 200
    assert_limited(client.auth_nonce(app, headers=via(ip())), "nonce_per_ip", 2, 60)


def test_a_limit_turned_off_never_refuses(client, configured_app_factory):
    app = configured_app_factory(rate_limits={"guest_per_ip": "off"})
    assert app["settings"]["rate_limits"]["guest_per_ip"] == "off"
    address = ip()
    for _ in range(35):  # past the default of 30 per IP per hour
        resp = client.guest(app, new_guest_secret(), headers=via(address))
        assert resp.status in (200, 201), resp
        assert resp.header("RateLimit") is None, resp.headers


def test_identityctl_rate_limit_flags(stack, app):
    shown = stack.configure_app(app["app_id"])["rate_limits"]
    assert shown["sign_in_per_ip"] == "100/60s" and shown["sign_in_per_identifier"] == "10/900s", shown
    assert shown["code_send_per_address"] == "5/3600s" and shown["code_resend_per_address"] == "1/60s", shown
    assert shown["code_guess_per_address"] == "20/3600s" and shown["sign_up_per_ip"] == "20/3600s", shown
    assert shown["guest_per_ip"] == "30/3600s", shown

    shown = stack.configure_app(app["app_id"], rate_limits={"sign_up_per_ip": "1000/1h"})["rate_limits"]
    assert shown["sign_up_per_ip"] == "1000/3600s", shown
    shown = stack.configure_app(app["app_id"], rate_limits={"sign_up_per_ip": "default"})["rate_limits"]
    assert shown["sign_up_per_ip"] == "20/3600s", shown

    for bad in ("no_such_limit=5/1m", "sign_up_per_ip=5", "sign_up_per_ip=0/1m", "sign_up_per_ip=5/1y"):
        done = stack.ctl("apps", "settings", app["app_id"], "--rate-limit", bad)
        assert done.returncode != 0 and "--rate-limit" in done.stderr, (bad, done.stdout, done.stderr)
    env = {k: v for k, v in stack.env_for("identityctl").items() if k != "IDENTITY_RATE_LIMIT_OFF_ALLOWED"}
    import subprocess
    done = subprocess.run([stack.binary("identityctl"), "apps", "settings", app["app_id"],
                           "--rate-limit", "guest_per_ip=off"], env=env, capture_output=True, text=True)
    assert done.returncode != 0 and "tests only" in done.stderr, (done.stdout, done.stderr)


# --- guessing codes across resends -----------------------------------------------------------


def _relaxed_sends(configured_app_factory, **more):
    """An app whose code sends are not limited (the guesses are what these tests count)."""
    return configured_app_factory(rate_limits={"code_resend_per_address": "1000/1s",
                                               "code_send_per_address": "1000/1h",
                                               "code_send_per_ip": "1000/1h",
                                               "code_verify_per_ip": "1000/1h", **more})


def _guess_wrong(client, smtp_sink, app, email, wrong):
    """Sends codes and guesses each wrong (4 per code, under the 5 that kill a code) until
    `wrong` wrong guesses were made."""
    made = 0
    while made < wrong:
        _, code = email_code(client, smtp_sink, app, email)
        for _ in range(min(4, wrong - made)):
            resp = client.email_code_verify(app, email=email, code=other_code(code))
            assert_problem(resp, 401, "auth/invalid-code")
            made += 1


def test_twenty_wrong_guesses_over_several_codes_lock_the_address(client, smtp_sink, configured_app_factory):
    app = _relaxed_sends(configured_app_factory)
    email = unique_email()
    client.new_user(app, email=email)
    _guess_wrong(client, smtp_sink, app, email, 20)

    # A fresh code, the right one: refused all the same.
    _, code = email_code(client, smtp_sink, app, email)
    refused = client.email_code_verify(app, email=email, code=code)
    assert_limited(refused, "code_guess_per_address", 20, 3600)
    # Reset codes to the same address share the budget (a reset is as good a way in).
    _, reset_code = password_reset_code(client, smtp_sink, app, email)
    assert_limited(client.password_verify_code(app, email, reset_code), "code_guess_per_address", 20, 3600)
    assert_limited(client.password_reset(app, email, reset_code, "Brand-New-Walrus-77!"),
                   "code_guess_per_address", 20, 3600)
    # The password did not change.
    assert client.sign_in(app, email=email).status == 200

    # Another address of the same app is unaffected.
    other = unique_email()
    _, other_code_ = email_code(client, smtp_sink, app, other)
    assert client.email_code_verify(app, email=other, code=other_code_).status == 200


def test_nineteen_wrong_guesses_leave_the_right_code_working(client, smtp_sink, configured_app_factory):
    """Only wrong guesses count: 19 of them, then right codes (given back each time) work."""
    app = _relaxed_sends(configured_app_factory)
    email = unique_email()
    _guess_wrong(client, smtp_sink, app, email, 19)
    for _ in range(3):
        _, code = email_code(client, smtp_sink, app, email)
        resp = client.email_code_verify(app, email=email, code=code)
        assert resp.status == 200, resp
    # The 20th wrong guess is still allowed (and counted); then the address is locked.
    _, code = email_code(client, smtp_sink, app, email)
    assert_problem(client.email_code_verify(app, email=email, code=other_code(code)), 401, "auth/invalid-code")
    assert_limited(client.email_code_verify(app, email=email, code=code), "code_guess_per_address", 20, 3600)


def test_guess_budget_override_and_reopening(client, smtp_sink, configured_app_factory):
    app = _relaxed_sends(configured_app_factory, code_guess_per_address="2/2s")
    email = unique_email()
    _, code = email_code(client, smtp_sink, app, email)
    for _ in range(2):
        assert_problem(client.email_code_verify(app, email=email, code=other_code(code)), 401, "auth/invalid-code")
    wait = assert_limited(client.email_code_verify(app, email=email, code=code), "code_guess_per_address", 2, 2)
    time.sleep(wait + 0.2)
    assert client.email_code_verify(app, email=email, code=code).status == 200


def test_reset_with_a_wrong_code_changes_nothing(client, smtp_sink, configured_app_factory):
    app = _relaxed_sends(configured_app_factory)
    email = unique_email()
    client.new_user(app, email=email)
    _, code = password_reset_code(client, smtp_sink, app, email)
    resp = client.password_reset(app, email, other_code(code), "Brand-New-Walrus-77!")
    assert_problem(resp, 401, "auth/invalid-code")
    assert client.sign_in(app, email=email).status == 200
    assert client.password_reset(app, email, code, "Brand-New-Walrus-77!").status == 204
    assert client.sign_in(app, email=email, password="Brand-New-Walrus-77!").status == 200


# --- fixtures: more gateway replicas ------------------------------------------------------------


def _extra_gateway(stack, tmp_path_factory, name, **env):
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path_factory.mktemp(name) / "gateway.log"
    process = type(stack.gateway)(name, [stack.binary("identity-gateway")],
                                  dict(stack.env_for("identity-gateway"), IDENTITY_HTTP_PORT=str(port), **env), str(log))
    process.start()
    client = Client(f"http://127.0.0.1:{port}", forwarded_for=None)
    client.wait_for(lambda: _ready(client), timeout=20)
    return process, client


def _ready(client):
    try:
        return client.get("/readyz", timeout=2).status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def second_gateway(stack, tmp_path_factory):
    """Another gateway replica on its own port, same store and broker, same trusted proxy."""
    process, client = _extra_gateway(stack, tmp_path_factory, "gateway-2")
    yield client
    process.stop()


@pytest.fixture(scope="module")
def second_gateway_untrusting(stack, tmp_path_factory):
    """A replica that trusts no proxy: X-Forwarded-For means nothing to it."""
    process, client = _extra_gateway(stack, tmp_path_factory, "gateway-untrusting", IDENTITY_TRUSTED_PROXIES="")
    yield client
    process.stop()
