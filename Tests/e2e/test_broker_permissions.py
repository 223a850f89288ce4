"""One broker user per process kind (scripts/broker-users.sh): what each may NOT do, tried for
real with pika against the test vhost, beside a control that does the same with a user that
may (so a refusal is the permission, not a broken probe). Every other e2e test runs with each
process on its own user, which is the positive side.

What RabbitMQ (3.10) checks, seen here: a publish on the default exchange is a write on
`amq.default` whatever the queue; a refused publish closes the channel with 403 ACCESS_REFUSED
(with publisher confirms pika raises it from basic_publish) and nothing is delivered; a refused
consume, bind or declare closes the channel with 403 too."""

import os
import subprocess
import uuid

import pika
import pika.exceptions
import pytest

from broker_users import KINDS, amqp_url, has_users
from event_tools import EXCHANGE, connect
from identity_client import unique_email

pytestmark = pytest.mark.skipif(not has_users(), reason="no IDENTITY_AMQP_URL_<KIND> (scripts/services.sh start writes them)")

TOKEN = "identity.token.commands"
PROVIDER = "identity.provider.commands"
REVOCATION = "identity.revocation.commands"
MAILER = "identity.mailer.email"
MAILER_PUSH = "identity.mailer.push"
MAILER_SMS = "identity.mailer.sms"
MAILER_DEAD = ("identity.mailer.email.dead", "identity.mailer.push.dead", "identity.mailer.sms.dead")
WORKER_QUEUES = (TOKEN, PROVIDER, REVOCATION, MAILER, MAILER_PUSH, MAILER_SMS, *MAILER_DEAD, "identity.revocation.dead")
OWN_QUEUES = {
    "identity-token-worker": {TOKEN},
    "identity-provider-worker": {PROVIDER},
    "identity-revocation-worker": {REVOCATION, "identity.revocation.dead"},
    "identity-mailer-worker": {MAILER, MAILER_PUSH, MAILER_SMS, *MAILER_DEAD},
    "identityctl": {*MAILER_DEAD, "identity.revocation.dead"},
    "identity-gateway": set(),
    "identity-events-reader": set(),
}


def refused(action):
    """Runs action(); returns the broker's 403 (ChannelClosedByBroker), failing otherwise."""
    with pytest.raises(pika.exceptions.ChannelClosedByBroker) as caught:
        action()
    assert caught.value.reply_code == 403, caught.value
    assert "ACCESS_REFUSED" in caught.value.reply_text, caught.value
    return caught.value


@pytest.fixture
def scratch(stack):
    """A queue of the harness's own (guest), deleted afterwards: a probe target whose depth shows
    whether a publish got through."""
    connection = connect(os.environ["IDENTITY_AMQP_URL"])
    channel = connection.channel()
    name = f"identity.probe.{uuid.uuid4().hex[:10]}"
    channel.queue_declare(name, auto_delete=False)

    def depth():
        return channel.queue_declare(name, passive=True).method.message_count
    yield name, depth
    channel.queue_delete(name)
    connection.close()


def publish(user, exchange, routing_key, body=b"{}", type_="identity.token.v1.Ping"):
    """Publishes one message as `user` with publisher confirms (raises the channel's close)."""
    connection = connect(amqp_url(user))
    try:
        channel = connection.channel()
        channel.confirm_delivery()
        channel.basic_publish(exchange, routing_key, body, pika.BasicProperties(type=type_), mandatory=True)
    finally:
        if connection.is_open:
            connection.close()


def consume(user, queue):
    connection = connect(amqp_url(user))
    try:
        channel = connection.channel()
        channel.basic_consume(queue, lambda *args: None, auto_ack=False)
    finally:
        if connection.is_open:
            connection.close()


def test_every_process_connects_as_its_own_user(stack):
    """rabbitmqctl list_connections: on the test vhost, one connection (or more) per process kind,
    each as its own user; none of the service processes as guest."""
    vhost = os.environ["IDENTITY_AMQP_URL"].rsplit("/", 1)[1]
    vhost = "/" if vhost in ("", "%2F") else vhost
    done = subprocess.run([os.environ["IDENTITY_SERVICES_SCRIPT"], "ctl", "-q", "list_connections", "user", "vhost"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    users = {line.split("\t")[0] for line in done.stdout.splitlines() if line.split("\t")[-1] == vhost}
    for user in ("identity-gateway", "identity-token-worker", "identity-provider-worker",
                 "identity-mailer-worker", "identity-revocation-worker"):
        assert user in users, (user, done.stdout)


def test_gateway_cannot_consume_worker_queues(stack):
    for queue in WORKER_QUEUES:
        refused(lambda: consume("identity-gateway", queue))
    # basic.get is a read too.
    connection = connect(amqp_url("identity-gateway"))
    refused(lambda: connection.channel().basic_get(TOKEN))
    connection.close()


@pytest.mark.parametrize("user", sorted(OWN_QUEUES))
def test_no_user_consumes_another_kinds_queue(stack, user):
    for queue in WORKER_QUEUES:
        if queue not in OWN_QUEUES[user]:
            refused(lambda: consume(user, queue))


def test_mailer_cannot_publish_token_commands(stack, scratch):
    queue, depth = scratch
    # The default exchange is `amq.default` to the broker: the mailer has no write on it.
    error = refused(lambda: publish("identity-mailer-worker", "", TOKEN))
    assert "amq.default" in error.reply_text, error
    refused(lambda: publish("identity-mailer-worker", "", queue))
    assert depth() == 0, "a refused publish was delivered"
    # Control: the same publish as the token worker (which replies through the default exchange)
    # is confirmed and delivered.
    publish("identity-token-worker", "", queue)
    assert depth() == 1
    # Nor through its own exchange: it may not bind another kind's queue to it (write on the
    # queue), so a token command published there is unroutable.
    connection = connect(amqp_url("identity-mailer-worker"))
    refused(lambda: connection.channel().queue_bind(TOKEN, "identity.mailer.direct", routing_key=TOKEN))
    connection.close()
    with pytest.raises(pika.exceptions.UnroutableError):
        publish("identity-mailer-worker", "identity.mailer.direct", TOKEN)
    # Nor on the events exchange, nor declare (or re-declare) a worker's queue.
    refused(lambda: publish("identity-mailer-worker", EXCHANGE, "app_x.user.created"))
    connection = connect(amqp_url("identity-mailer-worker"))
    refused(lambda: connection.channel().queue_declare(TOKEN, durable=True))
    connection.close()


def test_gateway_and_provider_cannot_publish_events(stack):
    for user in ("identity-gateway", "identity-token-worker", "identity-provider-worker", "identityctl"):
        refused(lambda: publish(user, EXCHANGE, "app_x.user.created", type_="identity.events.v1.UserCreated"))


def test_events_reader_is_read_only(stack, scratch, client, app, events):
    queue, depth = scratch
    reader = "identity-events-reader"
    # Cannot publish: not an event, not a command on the default exchange.
    refused(lambda: publish(reader, EXCHANGE, f"{app['app_id']}.user.created", type_="identity.events.v1.UserCreated"))
    refused(lambda: publish(reader, "", TOKEN))
    refused(lambda: publish(reader, "", queue))
    assert depth() == 0
    # Cannot consume any worker queue, nor declare or delete the events exchange.
    for worker_queue in WORKER_QUEUES:
        refused(lambda: consume(reader, worker_queue))
    connection = connect(amqp_url(reader))
    refused(lambda: connection.channel().exchange_declare(EXCHANGE, exchange_type="topic", durable=True))
    refused(lambda: connection.channel().exchange_delete(EXCHANGE))
    # Cannot bind a worker queue to the events exchange (to divert events into it).
    refused(lambda: connection.channel().queue_bind(TOKEN, EXCHANGE, routing_key="#"))
    connection.close()
    # Control (the `events` fixture is this user): its own queue receives the events.
    email = unique_email()
    response = client.sign_up(app, email=email)
    assert response.status == 201, response
    event = events.wait_for("user.created", lambda body: body.get("email") == email)
    assert event.routing_key == f"{app['app_id']}.user.created"


def test_guest_is_not_used_by_the_processes(stack):
    """The URLs the harness gives the processes are not guest's."""
    for user in KINDS:
        assert amqp_url(user).startswith(f"amqp://{user}:"), user
