"""Reads the event stream as an outside consumer would: a queue of our own bound to the topic
exchange `identity.events`. Each message is one event: routing key = the app id, a dot and
the event name (`app_….user.created`; `Event.name` is the part after the app id), AMQP `type` = full proto name (`identity.events.v1.UserCreated`),
`message_id` = the event id, body = the event as JSON with snake_case keys."""

import datetime
import json
import re
import time
from dataclasses import dataclass, field

import pika
import pika.exceptions

EXCHANGE = "identity.events"
EVENT_TYPE_PREFIX = "identity.events.v1."
RFC3339_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$")


def connect(url):
    return pika.BlockingConnection(pika.URLParameters(url))


def declare_exchange(channel):
    # Declared here too (same arguments as the service) so a test never depends on which
    # process happened to declare it first (as guest: the harness's own checks).
    channel.exchange_declare(exchange=EXCHANGE, exchange_type="topic", durable=True)


def await_exchange(connection, timeout=10):
    """A channel once the exchange exists (the revocation worker's relay declares it), at most
    `timeout` s: a passive declare, since the read-only events user may not declare exchanges.
    A failed passive declare closes its channel, so each try opens a new one."""
    deadline = time.monotonic() + timeout
    while True:
        channel = connection.channel()
        try:
            channel.exchange_declare(exchange=EXCHANGE, passive=True)
            return channel
        except pika.exceptions.ChannelClosedByBroker as error:
            if error.reply_code != 404 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@dataclass
class Event:
    routing_key: str
    type: str
    message_id: str
    body: object            # the parsed JSON (None when the body is not JSON)
    raw: bytes = field(repr=False)
    properties: object = field(repr=False, default=None)

    @classmethod
    def from_amqp(cls, method, properties, body):
        try:
            parsed = json.loads(body.decode("utf-8"))
        except ValueError:
            parsed = None
        return cls(routing_key=method.routing_key, type=properties.type,
                   message_id=properties.message_id, body=parsed, raw=body, properties=properties)

    @property
    def name(self):
        """The event name: the routing key after its app id (`user.created`)."""
        return self.routing_key.split(".", 1)[1] if "." in self.routing_key else self.routing_key

    def get(self, key, default=None):
        """A body field, or default (also when the body is not a JSON object)."""
        return self.body.get(key, default) if isinstance(self.body, dict) else default

    def summary(self):
        return f"{self.routing_key} type={self.type} message_id={self.message_id} {self.raw[:300]!r}"


def assert_event(event, routing_key, type_name, app, uid):
    """The event is `routing_key` of AMQP type identity.events.v1.<type_name>, its body a JSON
    object with event_id (= the message_id), app_id (the app's), uid and a recent RFC 3339 time.
    Returns the body."""
    assert event.routing_key == f"{app['app_id']}.{routing_key}", event
    assert event.type == EVENT_TYPE_PREFIX + type_name, event
    body = event.body
    assert isinstance(body, dict), event.summary()
    missing = [key for key in ("event_id", "app_id", "uid", "time") if key not in body]
    assert not missing, f"event lacks {missing}: {event.summary()}"
    assert isinstance(body["event_id"], str) and body["event_id"], body
    assert event.message_id == body["event_id"], event.summary()
    assert body["app_id"] == app["app_id"], body
    assert body["uid"] == uid, body
    assert isinstance(body["time"], str) and RFC3339_RE.match(body["time"]), body
    when = datetime.datetime.fromisoformat(body["time"].replace("Z", "+00:00"))
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs((now - when).total_seconds()) < 300, body["time"]
    return body


class EventStream:
    """An exclusive, auto-delete queue bound with `#`: every event published while it is open.
    Everything received is kept (in arrival order) for the life of the stream."""

    def __init__(self, url):
        self.connection = connect(url)
        self.channel = await_exchange(self.connection)
        self.queue = self.channel.queue_declare(queue="", exclusive=True, auto_delete=True).method.queue
        self.channel.queue_bind(queue=self.queue, exchange=EXCHANGE, routing_key="#")
        self.received = []
        self.channel.basic_consume(queue=self.queue, on_message_callback=self._on_message,
                                   auto_ack=True)

    def _on_message(self, channel, method, properties, body):
        self.received.append(Event.from_amqp(method, properties, body))

    def _pump(self, seconds):
        self.connection.process_data_events(time_limit=max(0.0, seconds))

    def matching(self, routing_key=None, predicate=None):
        """What has arrived so far with that routing key (any when None) whose body satisfies
        predicate(body) (any when None)."""
        found = []
        for event in self.received:
            if routing_key is not None and event.name != routing_key:
                continue
            if predicate is not None and not (isinstance(event.body, dict) and predicate(event.body)):
                continue
            found.append(event)
        return found

    def wait_for(self, routing_key, predicate=None, timeout=10):
        """The first event (already received or arriving within timeout seconds) with that
        routing key whose JSON body satisfies predicate(body); fails the test otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.matching(routing_key, predicate)
            if found:
                return found[0]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._pump(min(0.25, remaining))
        seen = "\n".join(e.summary() for e in self.received[-30:]) or "(nothing at all)"
        raise AssertionError(f"no matching {routing_key!r} event within {timeout}s; "
                             f"the last of {len(self.received)} received:\n{seen}")

    def collect(self, seconds):
        """Listens for `seconds` more, then returns every event received so far."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            self._pump(min(0.25, remaining))
        return list(self.received)

    def close(self):
        try:
            if self.connection.is_open:
                self.connection.close()
        except pika.exceptions.AMQPError:
            pass  # the broker may be gone (a disruptive test): nothing left to close
