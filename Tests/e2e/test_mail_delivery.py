"""Mail delivery when SMTP misbehaves: HTTP answers never wait for SMTP; a failed delivery is
retried (after 0.3 s, 0.6 s, 1.2 s here) and delivered exactly once when the server comes back;
a permanent refusal (550) lands on the dead-letter queue `identity.mailer.email.dead`, and
`identityctl mail replay-dead` sends it again. These tests stop the SMTP sink and the mailer
worker, so conftest runs them last (marker `disruptive`) and each one restores what it touched,
even when it fails."""

import base64
import json
import re
import time

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from identity_client import unique_email
from conftest import mail_payload_key
from mail_flows import (SEND_EMAIL_TYPE, dead_letters_to, email_code_signed_in,
                        without_request_id)
from smtp_sink import code_from

pytestmark = pytest.mark.disruptive

AT_ONCE = 1.0  # seconds: "at once", with room for a busy 2-core machine
DEAD_LETTER_TIMEOUT = 15.0  # three retries take 2.1 s; the rest is slack


def _send_at_once(client, app, email):
    resp = client.email_code_send(app, email)
    assert resp.status == 202, resp
    assert without_request_id(resp.json) == {"data": {"expires_in": 600}}, resp.json
    assert resp.elapsed < AT_ONCE, f"email-code/send took {resp.elapsed:.2f}s: it waited for SMTP"
    return resp


def _exactly_one(smtp_sink, email, timeout=10):
    message = smtp_sink.wait_for(email, timeout=timeout)
    # Any duplicate (a retry of a delivery that had in fact gone through) would be here by now.
    delivered = smtp_sink.collect_to(email, 2.0)
    assert len(delivered) == 1, [m.summary() for m in delivered]
    return message


def _restore(stack, smtp_sink, *addresses):
    smtp_sink.accept(*addresses)
    smtp_sink.start()
    if not stack.mailer_worker.alive():
        stack.start_mailer_worker()


def _wait_dead_lettered(email):
    deadline = time.monotonic() + DEAD_LETTER_TIMEOUT
    while True:
        found = dead_letters_to(email)
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(0.3)


def _dead_lettered_code_mail(stack, client, smtp_sink, app, email):
    """Makes the sink refuse `email` (550), asks for a code for it, and returns the dead letters
    (event_tools.Event) that ended up on identity.mailer.email.dead for it."""
    smtp_sink.reject(email)
    _send_at_once(client, app, email)
    found = _wait_dead_lettered(email)
    assert found, (f"no message to {email} on identity.mailer.email.dead within {DEAD_LETTER_TIMEOUT}s; "
                   f"RCPT attempts: {smtp_sink.attempts(email)}\n{stack.mailer_worker.tail(30)}")
    assert smtp_sink.attempts(email), "the mailer never even tried the refused address"
    assert smtp_sink.messages_to(email) == [], "a refused recipient got the mail"
    return found


def test_smtp_down_does_not_delay_the_answer_and_the_mail_follows_once(stack, client, smtp_sink,
                                                                       app):
    email = unique_email("smtp-down")
    smtp_sink.stop()
    try:
        _send_at_once(client, app, email)
        time.sleep(0.5)  # the first attempt meets a refused connection; a retry finds the sink
    finally:
        _restore(stack, smtp_sink)
    message = _exactly_one(smtp_sink, email)
    email_code_signed_in(client, app, email, code_from(message), is_new_user=True)


def test_mailer_worker_down_does_not_delay_the_answer_and_the_mail_follows_once(stack, client,
                                                                                smtp_sink, app):
    email = unique_email("mailer-down")
    stack.stop_mailer_worker()
    try:
        _send_at_once(client, app, email)
        assert smtp_sink.collect_to(email, 1.0) == [], "a mail went out with no mailer worker"
    finally:
        _restore(stack, smtp_sink)
    message = _exactly_one(smtp_sink, email, timeout=20)
    email_code_signed_in(client, app, email, code_from(message), is_new_user=True)


def test_a_refused_recipient_is_dead_lettered(stack, client, smtp_sink, app):
    email = unique_email("refused")
    try:
        found = _dead_lettered_code_mail(stack, client, smtp_sink, app, email)
    finally:
        _restore(stack, smtp_sink, email)
    dead = found[0]
    assert dead.type == SEND_EMAIL_TYPE, dead.summary()
    assert isinstance(dead.body, dict), f"dead letter body is not JSON: {dead.raw[:300]!r}"
    assert dead.body["to"] == email, dead.body
    assert dead.body["kind"] == "email_code", dead.body
    # The code rests in the dead-letter queue sealed, never in clear: the clear
    # field is empty and the sealed one opens with the mail-payload key (AES-256-GCM,
    # nonce || ciphertext || tag, bound to the message id) to six digits.
    assert not dead.body.get("code"), dead.body
    sealed = base64.b64decode(dead.body["sealed_code"])
    key = bytes.fromhex(mail_payload_key(stack.env["IDENTITY_MASTER_KEY"]))
    code = AESGCM(key).decrypt(sealed[:12], sealed[12:], f"mail:{dead.body['message_id']}".encode())
    assert re.fullmatch(rb"\d{6}", code), code


def test_replay_dead_delivers_what_was_dead_lettered(stack, client, smtp_sink, app):
    email = unique_email("replayed")
    try:
        _dead_lettered_code_mail(stack, client, smtp_sink, app, email)
        smtp_sink.accept(email)
        done = stack.ctl("mail", "replay-dead")
        assert done.returncode == 0, \
            f"identityctl mail replay-dead failed:\n{done.stdout}\n{done.stderr}"
        try:
            replayed = json.loads(done.stdout)
        except ValueError:
            raise AssertionError(f"identityctl mail replay-dead printed no JSON:\n{done.stdout}")
        assert isinstance(replayed.get("replayed"), int) and replayed["replayed"] >= 1, replayed
        message = _exactly_one(smtp_sink, email)
    finally:
        _restore(stack, smtp_sink, email)
    assert dead_letters_to(email) == [], "the replayed message is still on identity.mailer.email.dead"
    # The replayed mail's code is the live one: it signs in.
    email_code_signed_in(client, app, email, code_from(message), is_new_user=True)
