"""Webhooks (docs/webhooks.md): each event of an app's stream reaches every endpoint of that app
whose filter takes it, signed per Standard Webhooks, in order per user, retried on the stack's
schedule of seconds (conftest.WEBHOOK_RETRY_SCHEDULE), then dead-lettered and replayable. The
signatures are checked with the `standardwebhooks` package (the specification's own Python
library), not with our signer. The receivers are the tests' own (webhook_receiver.py), on
loopback over plain HTTP, which the stack allows; the SSRF tests start processes without those
allowances."""

import json
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from admin_tools import admin
from conftest import ServiceProcess, WEBHOOK_RETRY_SCHEDULE, _free_port
from identity_client import Client, assert_problem
from ops_metrics import scrape, value
from webhook_receiver import WebhookReceiver

ALLOWANCES = ("IDENTITY_ALLOW_PRIVATE_OUTBOUND", "IDENTITY_ALLOW_INSECURE_OUTBOUND")
# From a delivery's first attempt to its dead letter, with some room.
DEAD_AFTER = sum(WEBHOOK_RETRY_SCHEDULE) + 8


@pytest.fixture
def receiver():
    r = WebhookReceiver()
    yield r
    r.stop()


@pytest.fixture
def other_receiver():
    r = WebhookReceiver()
    yield r
    r.stop()


def create_endpoint(client, app, url, events=("*",), **fields):
    resp = admin(client, app, "POST", "/v1/admin/webhooks", {"url": url, "events": list(events), **fields})
    assert resp.status == 201, resp
    assert resp.data["secret"].startswith("whsec_"), resp.data
    return resp.data


def verified(message, secret):
    """The payload, once standardwebhooks has checked the signature and the timestamp."""
    return Webhook(secret).verify(message.body, message.headers)


def of_user(uid):
    return lambda message: message.payload["data"].get("uid") == uid


def deliveries(client, app, endpoint):
    resp = admin(client, app, "GET", f"/v1/admin/webhooks/{endpoint['id']}/deliveries")
    assert resp.status == 200, resp
    return resp.data


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout}s: {what}")


def first_receipts(messages):
    """Each webhook-id once, in the order first received (a retry may repeat one: at least once)."""
    seen, ordered = set(), []
    for message in messages:
        if message.webhook_id not in seen:
            seen.add(message.webhook_id)
            ordered.append(message)
    return ordered


def test_events_reach_the_endpoint_signed_in_order(client, app, receiver):
    resp = admin(client, app, "POST", "/v1/admin/webhooks", {"url": receiver.url, "description": "all events"})
    assert resp.status == 201, resp
    endpoint = resp.data
    assert endpoint["events"] == ["*"] and endpoint["enabled"] is True and endpoint["description"] == "all events"
    signed_up = client.new_user(app)
    uid = signed_up["user"]["uid"]
    assert client.sign_out(app, signed_up["access_token"]).status == 204
    messages = receiver.wait_for(3, of_user(uid))
    for message in messages:
        payload = verified(message, endpoint["secret"])
        # webhook-id is the event's id: the receiver's idempotency key.
        assert message.webhook_id == payload["data"]["event_id"], message.headers
        assert payload["data"]["app_id"] == app["app_id"]
        assert message.headers["content-type"] == "application/json"
        assert abs(int(message.headers["webhook-timestamp"]) - time.time()) < 60
    types = [m.payload["type"] for m in first_receipts(messages)]
    assert types[0] == "user.created" and "session.revoked" in types, types
    times = [m.payload["timestamp"] for m in first_receipts(messages)]
    assert times == sorted(times), times
    # Another secret does not verify it.
    with pytest.raises(WebhookVerificationError):
        verified(messages[0], "whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=")
    log = deliveries(client, app, endpoint)
    delivered = [d for d in log if d["webhook_id"] == messages[0].webhook_id]
    assert delivered and delivered[0]["state"] == "delivered", log
    attempt = delivered[0]["last_attempts"][0]
    assert attempt["outcome"] == "delivered" and attempt["status_code"] == 200, attempt
    assert isinstance(attempt["response_ms"], int) and attempt["at"].endswith("Z"), attempt


def test_a_filter_takes_only_its_events_and_no_app_sees_another_apps(client, app, other_app, receiver, other_receiver):
    deleted_only = create_endpoint(client, app, receiver.url, events=["user.deleted"])
    create_endpoint(client, other_app, other_receiver.url)
    uid = client.new_user(app)["user"]["uid"]
    assert admin(client, app, "DELETE", f"/v1/admin/users/{uid}").status == 204
    [message] = receiver.wait_for(1, of_user(uid))
    assert verified(message, deleted_only["secret"])["type"] == "user.deleted"
    # The other app's own event, delivered after this app's: by then, nothing of this app's.
    other_uid = client.new_user(other_app)["user"]["uid"]
    other_receiver.wait_for(1, of_user(other_uid))
    time.sleep(1)
    assert [m.payload["type"] for m in receiver.messages()] == ["user.deleted"]
    assert all(m.payload["data"]["app_id"] == other_app["app_id"] for m in other_receiver.messages())


# A receiver down for a minute: a schedule of seconds that still spans more than that minute.
MINUTE_SCHEDULE = "1s,2s,4s,8s,15s,20s,20s,20s"


@pytest.fixture
def patient_worker(stack):
    worker = stack.webhook_worker
    before = worker.env
    worker.stop()
    worker.env = {**before, "IDENTITY_WEBHOOK_RETRY_SCHEDULE": MINUTE_SCHEDULE}
    worker.start()
    yield worker
    worker.stop()
    worker.env = before
    worker.start()


def test_a_receiver_down_for_a_minute_gets_every_event_afterwards_in_order(client, app, receiver, patient_worker):
    endpoint = create_endpoint(client, app, receiver.url)
    receiver.stop()
    down_since = time.monotonic()
    signed_up = client.new_user(app)
    uid = signed_up["user"]["uid"]
    for _ in range(3):
        resp = client.sign_in(app, email=signed_up["user"]["email"])
        assert resp.status == 200, resp
        assert client.sign_out(app, resp.data["access_token"]).status == 204
    # While it is down: attempts fail (no answer at all) and later events wait behind the first.
    log = wait_until(lambda: [d for d in deliveries(client, app, endpoint) if d["attempts"] >= 2],
                     timeout=10, what="a second attempt")
    failed = log[0]["last_attempts"][0]
    assert failed["outcome"] == "failed" and failed["status_code"] is None and failed["error"], failed
    time.sleep(max(0.0, 60 - (time.monotonic() - down_since)))
    assert receiver.messages() == []
    receiver.start()
    # 1 user.created, 4 session.created (the sign-up's too), 3 session.revoked.
    messages = first_receipts(receiver.wait_for(8, of_user(uid), timeout=40))
    types = [m.payload["type"] for m in messages]
    assert types.count("session.created") == 4 and types.count("session.revoked") == 3, types
    assert types[0] == "user.created", types
    times = [m.payload["timestamp"] for m in messages]
    assert times == sorted(times), types
    for message in messages:
        verified(message, endpoint["secret"])
    assert all(d["state"] == "delivered" for d in deliveries(client, app, endpoint))


def test_dead_letters_and_replay_with_the_same_webhook_id(stack, client, app, receiver):
    receiver.status = 500
    endpoint = create_endpoint(client, app, receiver.url, events=["user.created"])
    uid = client.new_user(app)["user"]["uid"]
    dead = wait_until(lambda: [d for d in deliveries(client, app, endpoint) if d["state"] == "dead"],
                      timeout=DEAD_AFTER, what="a dead letter")[0]
    assert dead["attempts"] == len(WEBHOOK_RETRY_SCHEDULE) + 1, dead
    assert dead["last_attempts"][0]["outcome"] == "dead_lettered" and dead["last_attempts"][0]["status_code"] == 500
    tries = receiver.messages(of_user(uid))
    assert len(tries) == len(WEBHOOK_RETRY_SCHEDULE) + 1
    assert len({m.webhook_id for m in tries}) == 1, "one webhook-id across the retries"
    metrics = scrape(stack.metrics_url(stack.webhook_worker))
    assert (value(metrics, "identity_webhook_deliveries_total", outcome="dead_lettered") or 0) >= 1
    assert (value(metrics, "identity_webhook_deliveries_total", outcome="failed") or 0) >= len(WEBHOOK_RETRY_SCHEDULE)
    receiver.status = 200
    resp = admin(client, app, "POST", f"/v1/admin/webhooks/{endpoint['id']}/deliveries/replay")
    assert resp.status == 200 and resp.data == {"replayed": 1}, resp
    receiver.wait_for(len(tries) + 1, of_user(uid))
    replayed = receiver.messages(of_user(uid))[-1]
    assert replayed.webhook_id == tries[0].webhook_id
    verified(replayed, endpoint["secret"])
    wait_until(lambda: deliveries(client, app, endpoint)[0]["state"] == "delivered", 10, "delivered after replay")


def test_a_rotated_secret_signs_beside_the_new_one_for_the_overlap(client, app, receiver):
    endpoint = create_endpoint(client, app, receiver.url, events=["user.created"])
    old = endpoint["secret"]
    resp = admin(client, app, "POST", f"/v1/admin/webhooks/{endpoint['id']}/rotate-secret", {"overlap_seconds": 3600})
    assert resp.status == 200, resp
    new = resp.data["secret"]
    assert new != old and resp.data["previous_secret_expires_at"], resp.data
    uid = client.new_user(app)["user"]["uid"]
    [message] = receiver.wait_for(1, of_user(uid))
    assert len(message.headers["webhook-signature"].split(" ")) == 2
    assert verified(message, new)["data"]["uid"] == uid
    assert verified(message, old)["data"]["uid"] == uid
    # Without an overlap the previous secret stops at once.
    resp = admin(client, app, "POST", f"/v1/admin/webhooks/{endpoint['id']}/rotate-secret", {"overlap_seconds": 0})
    newest = resp.data["secret"]
    assert resp.data["previous_secret_expires_at"] is None
    uid = client.new_user(app)["user"]["uid"]
    [message] = receiver.wait_for(1, of_user(uid))
    verified(message, newest)
    for stale in (old, new):
        with pytest.raises(WebhookVerificationError):
            verified(message, stale)


def test_endpoints_are_managed_per_app(client, app, other_app, receiver):
    endpoint = create_endpoint(client, app, receiver.url, events=["user.created", "user.deleted"])
    listed = admin(client, app, "GET", "/v1/admin/webhooks")
    assert listed.status == 200 and [e["id"] for e in listed.data] == [endpoint["id"]], listed
    assert "secret" not in listed.data[0]
    path = f"/v1/admin/webhooks/{endpoint['id']}"
    got = admin(client, app, "GET", path)
    assert got.status == 200 and got.data["events"] == ["user.created", "user.deleted"], got
    changed = admin(client, app, "PATCH", path, {"events": ["*"], "enabled": False, "description": "paused"})
    assert changed.status == 200, changed
    assert changed.data["events"] == ["*"] and changed.data["enabled"] is False and changed.data["description"] == "paused"
    # Another app's secret key does not see it, change it or delete it.
    assert_problem(admin(client, other_app, "GET", path), 404, "auth/not-found")
    assert_problem(admin(client, other_app, "PATCH", path, {"enabled": True}), 404, "auth/not-found")
    assert_problem(admin(client, other_app, "DELETE", path), 404, "auth/not-found")
    assert admin(client, other_app, "GET", "/v1/admin/webhooks").data == []
    for body, location in (({"url": receiver.url, "events": ["User Created"]}, "body.events"),
                           ({"url": receiver.url, "events": ["*", "user.created"]}, "body.events"),
                           ({"url": "ftp://example.com/x", "events": ["*"]}, "body.url")):
        assert_problem(admin(client, app, "POST", "/v1/admin/webhooks", body), 422, "auth/validation-failed",
                       locations=[location])
    assert admin(client, app, "DELETE", path).status == 204
    assert_problem(admin(client, app, "GET", path), 404, "auth/not-found")


def test_identityctl_manages_endpoints(stack, app, receiver):
    done = stack.ctl("webhooks", "create", app["app_id"], "--url", receiver.url, "--events", "user.created,user.deleted")
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    assert created["secret"].startswith("whsec_") and created["events"] == ["user.created", "user.deleted"]
    listed = json.loads(stack.ctl("webhooks", "list", app["app_id"]).stdout)
    assert [e["id"] for e in listed] == [created["id"]]
    rotated = stack.ctl("webhooks", "rotate-secret", app["app_id"], created["id"], "--overlap", "60")
    assert rotated.returncode == 0 and json.loads(rotated.stdout)["secret"] != created["secret"], rotated.stderr
    assert stack.ctl("webhooks", "create", app["app_id"], "--url", receiver.url, "--event", "*").returncode == 2
    assert stack.ctl("webhooks", "delete", app["app_id"], created["id"]).returncode == 0
    assert json.loads(stack.ctl("webhooks", "list", app["app_id"]).stdout) == []


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


@pytest.fixture
def strict_gateway(stack):
    """A second gateway without the allowances, on the shared store and broker."""
    port = _free_port()
    env = without(stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                IDENTITY_METRICS_PORT=str(_free_port()),
                                IDENTITY_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}"), *ALLOWANCES)
    process = ServiceProcess("strict-gateway", [stack.binary("identity-gateway")], env,
                             stack.log_dir + "/strict-gateway-webhooks.log")
    process.start()
    client = Client(f"http://127.0.0.1:{port}")
    wait_ready(client, process, "the strict gateway")
    yield client
    process.stop()


@pytest.mark.parametrize("url", ["https://169.254.169.254/latest/meta-data", "https://10.1.2.3/hooks",
                                 "https://127.0.0.1/hooks", "http://api.example.com/hooks"])
def test_a_url_into_the_services_own_network_is_refused_at_create(strict_gateway, app, url):
    resp = admin(strict_gateway, app, "POST", "/v1/admin/webhooks", {"url": url, "events": ["*"]})
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.url"])


def test_a_url_that_leads_into_the_services_own_network_is_refused_at_delivery(stack, client, app, receiver):
    """Saved while allowed (the stack's gateway and token worker), delivered by a webhook worker
    that only allows plain http: nothing reaches the receiver, the delivery is dead-lettered as
    refused at once, and the worker runs on."""
    endpoint = create_endpoint(client, app, receiver.url)
    worker = stack.webhook_worker
    allowing = worker.env
    worker.stop()
    worker.env = without(allowing, "IDENTITY_ALLOW_PRIVATE_OUTBOUND")
    worker.start()
    try:
        client.new_user(app)
        dead = wait_until(lambda: [d for d in deliveries(client, app, endpoint) if d["state"] == "dead"],
                          timeout=15, what="a refused delivery")[0]
        attempt = dead["last_attempts"][0]
        assert dead["attempts"] == 1 and attempt["outcome"] == "dead_lettered", dead
        assert attempt["status_code"] is None and "127.0.0.1 (loopback)" in attempt["error"], attempt
        assert receiver.messages() == []
        assert worker.alive(), worker.tail(30)
    finally:
        worker.stop()
        worker.env = allowing
        worker.start()


def test_the_webhook_workers_role_keeps_deliveries_and_nothing_else(stack):
    from test_db_roles import assert_allowed, assert_refused
    worker, gateway = stack.db_urls["identity-webhook-worker"], stack.db_urls["identity-gateway"]
    assert_allowed(worker, "SELECT count(*) FROM webhook_deliveries")
    assert_allowed(worker, "SELECT count(secret_enc) FROM webhook_endpoints")
    for sql in ("SELECT count(*) FROM users", "SELECT count(*) FROM sessions", "SELECT count(*) FROM outbox",
                "UPDATE webhook_endpoints SET enabled = true", "DELETE FROM webhook_endpoints",
                "SELECT count(description) FROM webhook_endpoints"):
        assert_refused(worker, sql)
    # The gateway sees no endpoint, no delivery and no secret: the token worker answers for them.
    for sql in ("SELECT count(*) FROM webhook_endpoints", "SELECT count(*) FROM webhook_deliveries",
                "SELECT count(*) FROM webhook_attempts"):
        assert_refused(gateway, sql)
