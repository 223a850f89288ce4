"""URLs an app sets (its SMS API URL, its FCM service account's token_uri) never lead the service
into its own network (docs/api-contract.md: "A URL an app sets never reaches loopback, private,
link-local or metadata addresses"): refused at save, with a 422 naming the field, and at
connect, on the address the mailer is about to connect to. The stack runs with
IDENTITY_ALLOW_PRIVATE_OUTBOUND=1 and IDENTITY_ALLOW_INSECURE_OUTBOUND=1 (its stand-ins listen on
loopback over plain HTTP); these tests start processes without them:

- a second gateway (the shared token worker still allowing): the gateway's own check of the URL
  as written, before any command;
- the token worker (through the shared, allowing gateway): the same check where the settings
  are written, plus where a name resolves (`localhost`), which the gateway does not look up;
- the mailer, with a URL saved while allowed: nothing reaches the stand-in, the SMS is
  dead-lettered at once as a delivery failure, and the mailer keeps running."""

import json
import os
import random
import re
import subprocess
import tempfile
import time
import uuid

import pytest

from admin_tools import admin
from conftest import ServiceProcess, _free_port
from identity_client import Client, assert_problem
from mail_flows import dead_letters
from ops_metrics import scrape, value
from sms_standin import SmsStandin

SMS_DEAD = "identity.mailer.sms.dead"
ALLOWANCES = ("IDENTITY_ALLOW_PRIVATE_OUTBOUND", "IDENTITY_ALLOW_INSECURE_OUTBOUND")


def without(env, *names):
    return {key: val for key, val in env.items() if key not in names}


def wait_ready(client, process, what):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.alive(), f"{what} exited:\n{process.tail()}"
        try:
            if client.get("/readyz", timeout=2).status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"{what} not ready:\n{process.tail()}")


def settings_of(client, app):
    resp = admin(client, app, "GET", "/v1/admin/settings")
    assert resp.status == 200, resp
    return resp.data


def refused(resp, location, fragment):
    problem = assert_problem(resp, 422, "auth/validation-failed", locations=[location])
    message = next(e["message"] for e in problem["errors"] if e["location"] == location)
    assert fragment in message, problem
    return message


@pytest.fixture(scope="module")
def twilio():
    standin = SmsStandin("AC" + uuid.uuid4().hex, "tok-" + uuid.uuid4().hex)
    yield standin
    standin.stop()


@pytest.fixture(scope="module")
def strict_gateway(stack):
    """A second gateway without the allowances, on the shared store and broker."""
    port = _free_port()
    env = without(stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                IDENTITY_METRICS_PORT=str(_free_port()),
                                IDENTITY_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}"), *ALLOWANCES)
    process = ServiceProcess("identity-gateway-strict", [stack.binary("identity-gateway")], env,
                             os.path.join(stack.log_dir, "gateway-strict.log"))
    process.start()
    client = Client(f"http://127.0.0.1:{port}")
    try:
        wait_ready(client, process, "the strict gateway")
        yield client
    finally:
        process.stop()


@pytest.fixture
def strict_token_worker(stack, client):
    """The stack's token worker restarted without the allowances, and back with them after."""
    worker = stack.worker
    allowing = worker.env
    worker.stop()
    worker.env = without(allowing, *ALLOWANCES)
    worker.start()
    probe = stack.create_app()
    try:
        # Answered (not 503): the new worker consumes.
        assert client.wait_for(lambda: admin(client, probe, "PATCH", "/v1/admin/settings",
                                             {"mail_from_name": "probe"}).status == 200, timeout=20), worker.tail()
        yield worker
    finally:
        worker.stop()
        worker.env = allowing
        worker.start()
        client.wait_for(lambda: admin(client, probe, "PATCH", "/v1/admin/settings",
                                      {"mail_from_name": "probe"}).status == 200, timeout=20)


# --- at save: the gateway, from the URL as written -----------------------------------------


@pytest.mark.parametrize("url,fragment", [
    ("http://127.0.0.1:{port}/", "https"),
    ("http://169.254.169.254/", "https"),
    ("http://10.0.0.1/", "https"),
    ("https://127.0.0.1:{port}/", "127.0.0.1: loopback"),
    ("https://169.254.169.254/latest/meta-data/", "169.254.169.254: cloud metadata"),
    ("https://10.0.0.1/", "10.0.0.1: private"),
    ("https://172.16.0.1/", "172.16.0.1: private"),
    ("https://100.64.0.1/", "carrier-grade NAT"),
    ("https://[::1]/", "::1: loopback"),
    ("https://[::ffff:127.0.0.1]/", "loopback"),
    ("https://[fd00:ec2::254]/", "cloud metadata"),
    ("https://[fe80::1]/", "link-local"),
    ("https://0x7f.1/", "0x7f.1 (127.0.0.1): loopback"),
    ("https://2130706433/", "(127.0.0.1): loopback"),
], ids=["http-loopback", "http-metadata", "http-private", "loopback", "metadata", "private-10", "private-172",
        "cgnat", "v6-loopback", "v4-mapped", "v6-metadata", "v6-link-local", "hex-loopback", "decimal-loopback"])
def test_the_gateway_refuses_an_sms_api_url_into_its_network(stack, strict_gateway, app, twilio, url, fragment):
    port = twilio.url.rsplit(":", 1)[1]
    resp = admin(strict_gateway, app, "PATCH", "/v1/admin/settings", {"sms_api_url": url.format(port=port)})
    refused(resp, "body.sms_api_url", fragment)
    assert settings_of(stack.client, app)["sms_api_url"] is None


def test_the_gateway_refuses_an_fcm_token_uri_into_its_network(stack, strict_gateway, app):
    account = json.loads(stack.fcm.service_account("outbound-test"))
    account["token_uri"] = "https://169.254.169.254/computeMetadata/v1/token"
    resp = admin(strict_gateway, app, "PATCH", "/v1/admin/settings", {"fcm_service_account": json.dumps(account)})
    message = refused(resp, "body.fcm_service_account", "169.254.169.254: cloud metadata")
    assert message.startswith("token_uri "), message
    assert settings_of(stack.client, app)["fcm_service_account_set"] is False


def test_the_gateway_lets_a_public_https_url_through(stack, strict_gateway, app):
    resp = admin(strict_gateway, app, "PATCH", "/v1/admin/settings", {"sms_api_url": "https://api.twilio.com"})
    assert resp.status == 200, resp
    assert resp.data["sms_api_url"] == "https://api.twilio.com"


# --- at save: the token worker, also after resolving the name ------------------------------


@pytest.mark.disruptive
def test_the_token_worker_refuses_what_the_gateway_lets_through(stack, client, app, twilio, strict_token_worker):
    port = twilio.url.rsplit(":", 1)[1]
    # The shared gateway allows private targets: each of these reaches the worker, which refuses.
    for url, fragment in [(f"http://127.0.0.1:{port}", "https"),
                          ("https://169.254.169.254/", "169.254.169.254: cloud metadata"),
                          ("https://10.0.0.1/", "10.0.0.1: private"),
                          # A name: only the worker looks it up (localhost → 127.0.0.1).
                          # …and says only that it is refused, not where it resolves.
                          (f"https://localhost:{port}/", "localhost resolves to an address that is not public")]:
        resp = admin(client, app, "PATCH", "/v1/admin/settings", {"sms_api_url": url})
        refused(resp, "body.sms_api_url", fragment)
    assert settings_of(client, app)["sms_api_url"] is None
    # identityctl, run without the allowances, holds the URL to the same rules.
    env = without(stack.env_for("identityctl"), *ALLOWANCES)
    done = subprocess.run([stack.binary("identityctl"), "apps", "settings", app["app_id"],
                           "--sms-api-url", f"https://localhost:{port}"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0 and "--sms-api-url must reach a public address" in done.stderr, done.stderr
    # And a public one is saved.
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {"sms_api_url": "https://api.twilio.com"})
    assert resp.status == 200, resp


# --- at connect: the mailer ------------------------------------------------------------------


def twilio_app(stack, twilio, api_url):
    """An app with its own account at `api_url`, saved while the stack allows private targets."""
    app = stack.create_app()
    with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as token:
        token.write(twilio.auth_token + "\n")
    try:
        app["settings"] = stack.configure_app(app["app_id"], sms_allowed_calling_codes="33", sms_api_url=api_url,
                                              sms_account_sid=twilio.account_sid, sms_auth_token_file=token.name,
                                              sms_from="+15005550006")
    finally:
        os.unlink(token.name)
    return app


def french_mobile():
    return "+336" + "".join(random.choice("0123456789") for _ in range(8))


def send_code(client, app, phone):
    resp = client.post("/v1/auth/phone/send", {"phone": phone}, app_key=app["app_key"])
    assert resp.status == 202, resp


def dead_letter_for(phone, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [m for m in dead_letters(queue=SMS_DEAD) if m.get("to") == phone]
        if found:
            return found[0]
        time.sleep(0.2)
    return None


def deliveries(stack, outcome):
    return value(scrape(stack.metrics_url(stack.mailer_worker)), "identity_deliveries_total",
                 channel="sms", outcome=outcome) or 0


@pytest.mark.disruptive
def test_the_mailer_refuses_to_connect_where_a_saved_url_leads(stack, client, twilio):
    port = twilio.url.rsplit(":", 1)[1]
    # Saved while allowed: one literal, one name that resolves to loopback only at connect.
    by_address = twilio_app(stack, twilio, f"http://127.0.0.1:{port}")
    by_name = twilio_app(stack, twilio, f"http://localhost:{port}")
    mailer = stack.mailer_worker
    allowing = mailer.env
    mailer.stop()
    # Plain http stays allowed, so what is refused is the address, not the scheme.
    mailer.env = without(allowing, "IDENTITY_ALLOW_PRIVATE_OUTBOUND")
    mailer.start()
    try:
        phones = {"address": french_mobile(), "name": french_mobile()}
        send_code(client, by_address, phones["address"])
        send_code(client, by_name, phones["name"])
        letters = {kind: dead_letter_for(phone) for kind, phone in phones.items()}
        assert all(letters.values()), f"no dead letter: {letters}\n{mailer.tail(30)}"
        # Nothing reached the stand-in: it saw no request at all for either number.
        time.sleep(0.5)
        for phone in phones.values():
            assert twilio.statuses_for(phone) == [], twilio.statuses_for(phone)
        # A delivery failure, dead-lettered at once: no retry of either message, and the mailer runs on.
        assert mailer.alive(), mailer.tail(30)
        with open(mailer.log_path, encoding="utf-8", errors="replace") as log:
            lines = log.read().splitlines()
        for kind, letter in letters.items():
            mine = [line for line in lines if letter.message_id in line]
            # localhost may resolve to ::1 first on another machine: either is loopback.
            assert any("dead-lettered" in line and re.search(r"refused: (127\.0\.0\.1|::1) \(loopback\)", line)
                       for line in mine), (kind, mine)
            assert not any("will retry" in line for line in mine), (kind, mine)
            # The log names where, never the account's credentials.
            assert not any(twilio.auth_token in line for line in mine), mine
        assert deliveries(stack, "dead_lettered") >= 2
    finally:
        mailer.stop()
        mailer.env = allowing
        mailer.start()
    # Allowed again, the same app's next code reaches the stand-in: the refusal was the policy's.
    phone = french_mobile()
    send_code(client, by_address, phone)
    assert twilio.wait_for(phone, timeout=20), f"not delivered once allowed\n{mailer.tail(30)}"
