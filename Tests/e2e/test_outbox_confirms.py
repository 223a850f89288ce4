"""The outbox relay deletes exactly the rows the broker confirmed. Here the broker refuses
(`basic.nack`) every `user.created`: a queue bound to it is full with `x-overflow:
reject-publish`, while the `session.created` of the same sign-ups, published in the same batches,
is acked. The user.created rows must stay in the outbox however the acks and nacks of a batch
interleave, and go out once the queue is gone; the acked rows must not wait for them."""

import os
import time
import uuid

import pika
import pika.exceptions

import db_tools
from event_tools import EXCHANGE, connect, declare_exchange

SIGN_UPS = 5
RELEASE_TIMEOUT = 30.0  # a refused row is held back at most 15 s between tries


def _with_channel(action):
    connection = connect(os.environ["IDENTITY_AMQP_URL"])
    try:
        return action(connection.channel())
    finally:
        if connection.is_open:
            connection.close()


def _rows(routing_key, uids):
    """Outbox rows of that routing key whose payload names one of the uids: {uid: count}."""
    counts = {}
    for uid in uids:
        counts[uid] = int(db_tools.value(
            f"select count(*) from outbox where routing_key like {db_tools.literal('%.' + routing_key)} "
            f"and payload like {db_tools.literal('%' + uid + '%')}"))
    return counts


def _drain(queue):
    """Every message body on `queue` (consumed)."""
    def take(channel):
        bodies = []
        while True:
            method, _, body = channel.basic_get(queue, auto_ack=True)
            if method is None:
                return bodies
            bodies.append(body)
    return _with_channel(take)


def test_nacked_events_stay_in_the_outbox_until_the_broker_takes_them(client, app):
    suffix = uuid.uuid4().hex[:8]
    rejecting = f"e2e.reject.{suffix}"
    collecting = f"e2e.collect.{suffix}"

    def set_up(channel):
        declare_exchange(channel)
        channel.queue_declare(queue=rejecting, durable=False, auto_delete=False,
                              arguments={"x-max-length": 0, "x-overflow": "reject-publish"})
        channel.queue_bind(queue=rejecting, exchange=EXCHANGE, routing_key="*.user.created")
        # Where the events can be seen arriving (it takes every copy, nacked or not).
        channel.queue_declare(queue=collecting, durable=False, auto_delete=False)
        channel.queue_bind(queue=collecting, exchange=EXCHANGE, routing_key="*.user.created")

    _with_channel(set_up)
    removed = False
    try:
        uids = [client.new_user(app)["user"]["uid"] for _ in range(SIGN_UPS)]
        # The acked events of the same batches leave the outbox: refused rows block nothing.
        assert client.wait_for(lambda: set(_rows("session.created", uids).values()) == {0},
                               timeout=15, interval=0.3), \
            f"session.created rows still in the outbox: {_rows('session.created', uids)}"
        time.sleep(2.0)  # several more relay rounds, each refused
        left = _rows("user.created", uids)
        assert left == {uid: 1 for uid in uids}, \
            f"user.created rows the broker refused were deleted from the outbox: {left}"

        _with_channel(lambda channel: channel.queue_delete(queue=rejecting))
        removed = True
        assert client.wait_for(lambda: set(_rows("user.created", uids).values()) == {0},
                               timeout=RELEASE_TIMEOUT, interval=0.5), \
            f"user.created rows still in the outbox {RELEASE_TIMEOUT}s after the broker " \
            f"took them again: {_rows('user.created', uids)}"
        delivered = b"".join(_drain(collecting))
        missing = [uid for uid in uids if uid.encode() not in delivered]
        assert not missing, f"no user.created delivered for {missing}"
    finally:
        def clean_up(channel):
            if not removed:
                channel.queue_delete(queue=rejecting)
            channel.queue_delete(queue=collecting)
        try:
            _with_channel(clean_up)
        except (pika.exceptions.AMQPError, OSError):
            pass  # a leftover test queue in the test vhost: the next run's names differ
