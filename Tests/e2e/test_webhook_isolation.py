"""What the webhook worker will not let one party do to another (docs/webhooks.md, "Order and
retries"): an app whose endpoints hang does not delay another app's deliveries (slots per app, a
single probe for a failing endpoint), and an event the outbox relay did not publish is never signed
and sent, whoever could put it on the worker's queue."""

import json
import socket
import threading
import time
import uuid

import pika
import pytest

from admin_tools import admin
from broker_users import amqp_url
from event_tools import connect
from ops_metrics import scrape, value
from test_webhooks import create_endpoint, of_user, receiver, verified, wait_until  # noqa: F401 (receiver: a fixture)

QUEUE = "identity.webhooks.events"


class HangingEndpoint:
    """Accepts connections and reads the request, then never answers: an app backend stuck on
    its database. Counts the connections it holds."""

    def __init__(self):
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(128)
        self.port = self._socket.getsockname()[1]
        self.held = []
        self._open = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self._open:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.held.append(connection)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def close(self):
        self._open = False
        self._socket.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def narrow_worker(stack):
    """The stack's webhook worker with few slots and a long timeout, so a hanging app would
    hold all of them for seconds if slots were not shared out per app."""
    worker = stack.webhook_worker
    before = worker.env
    worker.stop()
    worker.env = {**before, "IDENTITY_WEBHOOK_CONCURRENCY": "6", "IDENTITY_WEBHOOK_APP_CONCURRENCY": "3",
                  "IDENTITY_WEBHOOK_TIMEOUT_MS": "6000"}
    worker.start()
    yield worker
    worker.stop()
    worker.env = before
    worker.start()


def test_an_app_whose_endpoints_hang_does_not_delay_another_apps_deliveries(
        stack, client, app, other_app, receiver, narrow_worker):
    hanging = HangingEndpoint()
    try:
        for n in range(6):
            create_endpoint(client, app, hanging.url(f"stuck{n}"))
        healthy = create_endpoint(client, other_app, receiver.url)
        # Each sign-up: user.created and session.created to each of the six hanging endpoints.
        for _ in range(4):
            client.new_user(app)
        wait_until(lambda: len(hanging.held) >= 3, timeout=10, what="the hanging app's deliveries in flight")
        started = time.monotonic()
        uid = client.new_user(other_app)["user"]["uid"]
        [message] = receiver.wait_for(1, lambda m: of_user(uid)(m) and m.payload["type"] == "user.created",
                                      timeout=15)
        waited = message.at - started
        print(f"the other app's event was delivered {waited * 1000:.0f} ms after its sign-up, "
              f"{len(hanging.held)} connections held by the hanging app")
        verified(message, healthy["secret"])
        # Had the hanging app taken every slot, this would wait for a 6 s timeout at least.
        assert waited < 3, waited
        # The hanging app holds its share, not more: three slots (then a single probe per endpoint).
        assert len(hanging.held) <= 3 + 6, len(hanging.held)
        metrics = scrape(stack.metrics_url(narrow_worker))
        assert value(metrics, "identity_webhook_deliveries_total", outcome="delivered") >= 1
    finally:
        hanging.close()


def _publish_on_the_queue(user, app_id, body, user_id=None):
    """Puts a made-up event straight on the webhook worker's queue through the default exchange,
    with `user`'s broker credentials (any process that may publish commands can do this)."""
    connection = connect(amqp_url(user))
    try:
        channel = connection.channel()
        channel.confirm_delivery()
        channel.basic_publish(
            exchange="", routing_key=QUEUE, body=json.dumps(body).encode(),
            properties=pika.BasicProperties(
                type="identity.events.v1.UserCreated", message_id=f"evt_forged_{uuid.uuid4().hex}",
                user_id=user_id, delivery_mode=2, headers={"app_id": app_id}))
    finally:
        if connection.is_open:
            connection.close()


def test_an_event_not_published_by_the_outbox_relay_is_dropped(stack, client, app, receiver):
    endpoint = create_endpoint(client, app, receiver.url)
    metrics_url = stack.metrics_url(stack.webhook_worker)
    refused_before = value(scrape(metrics_url), "identity_webhook_events_refused_total")
    forged_uid = "usr_forged_" + uuid.uuid4().hex[:12]
    forged = {"uid": forged_uid, "email": "attacker@example.com", "app_id": app["app_id"]}
    # From the gateway's and the token worker's broker users (both may write to the default
    # exchange): the app id is chosen so the routing key ("identity.webhooks.events") passes as
    # "<app>.<event>"; only the publisher check stands between them and a signed request.
    _publish_on_the_queue("identity-gateway", "identity.webhooks", forged)
    _publish_on_the_queue("identity-token-worker", "identity", forged)
    # Claiming to be the relay is refused by the broker itself: user_id must be the login.
    with pytest.raises(pika.exceptions.AMQPError):
        _publish_on_the_queue("identity-gateway", "identity", forged, user_id="identity-revocation-worker")
    wait_until(lambda: value(scrape(metrics_url), "identity_webhook_events_refused_total") >= refused_before + 2,
               timeout=10, what="the forged events counted as refused")
    assert "not the outbox relay" in stack.webhook_worker.tail(50)
    # The relay's own events still arrive (the control), and nothing forged came with them.
    uid = client.new_user(app)["user"]["uid"]
    [real] = receiver.wait_for(1, lambda m: of_user(uid)(m) and m.payload["type"] == "user.created")
    verified(real, endpoint["secret"])
    assert not [m for m in receiver.messages() if forged_uid in m.body.decode()]
    assert admin(client, app, "GET", f"/v1/admin/webhooks/{endpoint['id']}/deliveries").status == 200
