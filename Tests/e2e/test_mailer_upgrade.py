"""Upgrading from the single mailer queue to one queue per channel: a broker that
still holds mail in the previous version's queues loses none of it.

The previous version's token workers published on `identity.mailer.commands`, its delay queues
`identity.mailer.delay.<n>` dead-lettered there (through identity.mailer.direct, routing key
`identity.mailer.commands`), and its dead letters sat on `identity.mailer.dead`. These tests put
messages where that version left them, as the harness (guest) user, and watch them arrive."""

import json
import os
import time
import uuid

import pika
import pytest

from event_tools import connect
from identity_client import unique_email
from mail_flows import SEND_EMAIL_TYPE

LEGACY_QUEUE = "identity.mailer.commands"
LEGACY_DELAY = "identity.mailer.delay.0"
LEGACY_DEAD = "identity.mailer.dead"
MAILER_EXCHANGE = "identity.mailer.direct"


def _old_mail(app, to):
    """A SendEmail as the previous version wrote one (the field `code` in clear is what
    messages from before sealing carry; the mailer still reads it)."""
    message_id = "mail_" + uuid.uuid4().hex
    body = {"message_id": message_id, "app_id": app["app_id"], "to": to, "kind": "email_code",
            "code": "424242", "attempt": 0}
    return message_id, json.dumps(body).encode()


def _publish(exchange, routing_key, message_id, body, expiration=None):
    connection = connect(os.environ["IDENTITY_AMQP_URL"])
    try:
        channel = connection.channel()
        channel.confirm_delivery()
        channel.basic_publish(exchange, routing_key, body, pika.BasicProperties(
            type=SEND_EMAIL_TYPE, message_id=message_id, content_type="application/json", delivery_mode=2,
            expiration=expiration), mandatory=True)
    finally:
        connection.close()


def _declare(queue, arguments=None):
    """The queue as the previous version declared it, unless it exists already: this version
    declares some of the old names itself (as quorum queues, BusTopology.deadLetters), and a
    broker refuses a second declaration of another type."""
    connection = connect(os.environ["IDENTITY_AMQP_URL"])
    try:
        try:
            connection.channel().queue_declare(queue, passive=True)
        except pika.exceptions.ChannelClosedByBroker as closed:
            assert closed.reply_code == 404, closed
            connection.channel().queue_declare(queue, durable=True, arguments=arguments)
    finally:
        connection.close()


def test_mail_left_on_the_old_queue_is_delivered(stack, smtp_sink, app):
    to = unique_email("legacy-queue")
    message_id, body = _old_mail(app, to)
    _publish("", LEGACY_QUEUE, message_id, body)
    mail = smtp_sink.wait_for(to, timeout=15)
    assert "424242" in mail.text, mail.text


def test_a_retry_waiting_in_an_old_delay_queue_is_delivered(stack, smtp_sink, app):
    # The previous version's delay queue, as it declared it.
    _declare(LEGACY_DELAY, {"x-dead-letter-exchange": MAILER_EXCHANGE,
                            "x-dead-letter-routing-key": LEGACY_QUEUE})
    to = unique_email("legacy-delay")
    message_id, body = _old_mail(app, to)
    _publish("", LEGACY_DELAY, message_id, body, expiration="200")
    mail = smtp_sink.wait_for(to, timeout=15)
    assert "424242" in mail.text, mail.text


def test_replay_dead_replays_the_old_dead_letters(stack, smtp_sink, app):
    _declare(LEGACY_DEAD)
    to = unique_email("legacy-dead")
    message_id, body = _old_mail(app, to)
    _publish("", LEGACY_DEAD, message_id, body)
    time.sleep(0.5)
    assert smtp_sink.messages_to(to) == []
    done = stack.ctl("mail", "replay-dead")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    replayed = json.loads(done.stdout)
    assert replayed["by_channel"]["email"] >= 1, replayed
    mail = smtp_sink.wait_for(to, timeout=15)
    assert "424242" in mail.text, mail.text
