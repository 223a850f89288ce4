"""A setting changed on one gateway (or by identityctl) applies on every other gateway at once
(docs/client-profiles.md, "App settings"): the store announces each change of what a gateway
resolves an app with, and every replica forgets what it held (migration 0047)."""

import os
import time

import pytest

from admin_tools import admin
from conftest import ServiceProcess, _free_port
from identity_client import Client, assert_problem, random_client_ip, unique_email
from test_outbound_addresses import wait_ready


@pytest.fixture
def second_gateway(stack):
    port = _free_port()
    env = stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port), IDENTITY_METRICS_PORT=str(_free_port()),
                        IDENTITY_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}")
    process = ServiceProcess("identity-gateway-second", [stack.binary("identity-gateway")], env,
                             os.path.join(stack.log_dir, "gateway-second.log"))
    process.start()
    client = Client(f"http://127.0.0.1:{port}")
    try:
        wait_ready(client, process, "the second gateway")
        yield client
    finally:
        process.stop()


def prefixed_sign_in(gateway, app, prefix):
    return gateway.post(f"{prefix}/auth/sign-in", {"email": unique_email(), "password": "Wrong-password-1!"},
                        app_key=app["app_key"], headers={"X-Forwarded-For": random_client_ip()})


def within_a_second(check):
    """check() polled for a second; the first truthy answer, or the last one."""
    deadline = time.monotonic() + 1.0
    while True:
        answer = check()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def test_a_path_prefix_set_on_one_gateway_answers_on_another_within_a_second(stack, client, app, second_gateway):
    prefix = "/api/" + app["app_id"][-6:].lower()
    # The second gateway has resolved the app already (it holds it in memory): no prefix yet.
    assert prefixed_sign_in(second_gateway, app, prefix).status == 404
    assert admin(client, app, "PATCH", "/v1/admin/settings", {"path_prefix": prefix}).status == 200
    answer = within_a_second(lambda: prefixed_sign_in(second_gateway, app, prefix).status == 401)
    assert answer, "the second gateway did not apply the prefix within a second"
    assert_problem(prefixed_sign_in(second_gateway, app, prefix), 401, "auth/invalid-credential")

    # identityctl's change (straight to the store) applies the same way.
    assert stack.ctl("apps", "settings", app["app_id"], "--path-prefix", "").returncode == 0
    assert within_a_second(lambda: prefixed_sign_in(second_gateway, app, prefix).status == 404)
    assert within_a_second(lambda: prefixed_sign_in(client, app, prefix).status == 404)
