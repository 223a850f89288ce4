"""Mail flows as a client app and its user do them: ask for a code, read it from the mail the SMTP
sink (smtp_sink.py) received, send it back. Also what the settings the stack runs with are, and a
look at the mailer's dead-letter queue as an operator would take it.

The mailer worker delivers each mail from a command queue; a failed delivery is retried after
each of MAIL_RETRY_DELAYS_MS, then (or at once on a permanent refusal such as 550) lands on the
durable queue DEAD_QUEUE as an AMQP message of type SEND_EMAIL_TYPE whose body is JSON
(`to`, `kind`, ...). `identityctl mail replay-dead` sends them back for delivery."""

import os

import pika
import pika.exceptions

import db_tools
from event_tools import Event, connect
from identity_client import assert_token_response
from provider_flows import amr
from smtp_sink import code_from

# What conftest runs every process with.
MAIL_FROM_NAME = "Identity Tests"
MAIL_FROM_ADDRESS = "no-reply@tests.example"
MAIL_FROM = f"{MAIL_FROM_NAME} <{MAIL_FROM_ADDRESS}>"
MAIL_RETRY_DELAYS_MS = (300, 600, 1200)
EMAIL_VERIFICATION_COOLDOWN_SECONDS = 60

CODE_TTL = 600  # seconds: every emailed code (sign-in, password reset, email verification)
MAX_WRONG_CODES = 5  # a code dies after this many wrong guesses
DEAD_QUEUE = "identity.mailer.email.dead"
PUSH_DEAD_QUEUE = "identity.mailer.push.dead"
SEND_PUSH_TYPE = "identity.mailer.v1.SendPush"
SEND_EMAIL_TYPE = "identity.mailer.v1.SendEmail"
# Generous: the mailer worker picks the message up from the broker, renders, and talks SMTP.
MAIL_TIMEOUT = 10


def without_request_id(body):
    """A JSON answer minus any request_id (top level or in data), so two answers can be compared."""
    if not isinstance(body, dict):
        return body
    body = {k: v for k, v in body.items() if k != "request_id"}
    if isinstance(body.get("data"), dict):
        body["data"] = {k: v for k, v in body["data"].items() if k != "request_id"}
    return body


def other_code(code):
    """A well-formed 6-digit code that is not `code`."""
    return f"{(int(code) + 1) % 10**6:06d}"


def expire_codes(app):
    """Ages every code of the app one second past its expiry."""
    db_tools.rows("update verification_codes set expires_at = now() - interval '1 second' "
                  f"where app_id = {db_tools.literal(app['app_id'])}")


def _mailed(resp, smtp_sink, email, mark, what):
    assert resp.status == 202, f"{what}: {resp!r}"
    message = smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT)
    return message, code_from(message)


def email_code(client, smtp_sink, app, email):
    """POST /v1/auth/email-code/send (asserting 202), then the mail it caused: (message, code)."""
    mark = smtp_sink.mark()
    return _mailed(client.email_code_send(app, email), smtp_sink, email, mark,
                   "email-code/send")


def password_reset_code(client, smtp_sink, app, email):
    """POST /v1/auth/password/forgot (asserting 202), then the mail: (message, code)."""
    mark = smtp_sink.mark()
    return _mailed(client.password_forgot(app, email), smtp_sink, email, mark, "password/forgot")


def email_verification_code(client, smtp_sink, app, token, email):
    """POST /v1/me/email/verification (asserting 202), then the mail: (message, code)."""
    mark = smtp_sink.mark()
    return _mailed(client.request_email_verification(app, token), smtp_sink, email, mark,
                   "me/email/verification")


def email_code_signed_in(client, app, email, code, *, is_new_user, **fields):
    """POST /v1/auth/email-code/verify, asserting the 200 token response of a passwordless
    sign-in (amr ["otp"], email verified). Returns the data."""
    resp = client.email_code_verify(app, email=email, code=code, **fields)
    assert resp.status == 200, resp
    data = resp.data
    assert_token_response(data, is_new_user=is_new_user, expires_in=app["access_token_ttl"])
    assert data["user"]["email"] == email, data["user"]
    assert data["user"]["email_verified"] is True, data["user"]
    assert amr(data) == ["otp"], amr(data)
    return data


# --- the dead-letter queue ----------------------------------------------------------------------


def dead_letters(url=None, limit=1000, queue=DEAD_QUEUE):
    """Every message on `queue` (the mailer's DEAD_QUEUE unless told) right now (as
    event_tools.Event: type, message_id, body, properties), left where it is: taken with
    basic_get and no ack, and the connection closed, so the broker puts them all back. [] when
    the queue does not exist (yet)."""
    connection = connect(url or os.environ["IDENTITY_AMQP_URL"])
    found = []
    try:
        channel = connection.channel()
        while len(found) < limit:
            method, properties, body = channel.basic_get(queue, auto_ack=False)
            if method is None:
                break
            found.append(Event.from_amqp(method, properties, body))
        return found
    except pika.exceptions.ChannelClosedByBroker as exc:
        if exc.reply_code == 404:
            return []
        raise
    finally:
        try:
            if connection.is_open:
                connection.close()
        except pika.exceptions.AMQPError:
            pass


def dead_letters_to(address, url=None):
    return [m for m in dead_letters(url) if m.get("to") == address]
