"""Who may publish the message a worker trusts (issue 11, "Trust between processes"): a verified
provider identity crosses the bus sealed with a MAC that only the provider worker makes (a
sub-key of the master key the gateway never has). A `ProviderSignIn` published straight to the
token worker's queue with a made-up or altered identity gets no tokens, and the refusal is
logged; the identity the provider worker really verified still signs in (the control)."""

import json
import os
import time
import uuid

import pika

import provider_standin
from broker_users import amqp_url
from event_tools import connect
from provider_flows import google_signed_in

TOKEN_QUEUE = "identity.token.commands"
PROVIDER_QUEUE = "identity.provider.commands"
ERROR_TYPE = "identity.common.v1.Error"


def _command(queue, type_name, body, app_id, timeout=10):
    """Publishes a command with the gateway's own broker credentials (it may publish commands;
    it never holds the MAC key) and waits for the worker's reply on direct reply-to:
    (type, parsed body)."""
    connection = connect(amqp_url("identity-gateway"))
    try:
        channel = connection.channel()
        replies = []
        channel.basic_consume("amq.rabbitmq.reply-to", lambda ch, m, p, b: replies.append((p, b)),
                              auto_ack=True)
        correlation = uuid.uuid4().hex
        channel.basic_publish(
            exchange="", routing_key=queue, body=json.dumps(body).encode(),
            properties=pika.BasicProperties(
                type=type_name, content_type="application/json", message_id=f"cmd_{correlation}",
                correlation_id=correlation, reply_to="amq.rabbitmq.reply-to", expiration=str(timeout * 1000),
                headers={"app_id": app_id, "request_id": f"req_forged_{correlation}"}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            connection.process_data_events(time_limit=0.2)
            for properties, reply in replies:
                if properties.correlation_id == correlation:
                    return properties.type, json.loads(reply)
        raise AssertionError(f"no reply to {type_name} within {timeout}s")
    finally:
        connection.close()


def _sign_in(app, identity):
    return _command(TOKEN_QUEUE, "identity.token.v1.ProviderSignIn",
                    {"app_id": app["app_id"], "identity": identity,
                     "client": {"ip": "203.0.113.66", "user_agent": "forger"}}, app["app_id"])


def _sessions_of(uid):
    import db_tools
    return int(db_tools.value(f"select count(*) from sessions where uid = {db_tools.literal(uid)}"))


def test_a_made_up_identity_gets_no_tokens(stack, client, providers, provider_app):
    victim, claims = google_signed_in(client, providers, provider_app, is_new_user=True)
    uid = victim["user"]["uid"]
    before = _sessions_of(uid)
    forged = {"provider": "google", "subject": claims["sub"], "email": claims["email"],
              "email_verified": True, "email_authoritative": True,
              "audience": provider_standin.GOOGLE_CLIENT_IDS[0],
              "verified_at": int(time.time()), "mac": "A" * 43}
    for identity in (forged, {k: v for k, v in forged.items() if k not in ("mac", "verified_at")}):
        reply_type, reply = _sign_in(provider_app, identity)
        assert reply_type == ERROR_TYPE, reply
        assert reply["code"] == "auth/invalid-google-token", reply
        assert "access_token" not in json.dumps(reply)
    assert _sessions_of(uid) == before, "a forged identity started a session"
    assert "refused a provider identity without a valid seal" in stack.worker.tail(400)


def test_an_altered_identity_gets_no_tokens_and_the_real_one_does(client, providers, provider_app):
    victim, victim_claims = google_signed_in(client, providers, provider_app, is_new_user=True)
    token, _ = providers.google_token()
    reply_type, sealed = _command(PROVIDER_QUEUE, "identity.provider.v1.VerifyIdToken",
                                  {"app_id": provider_app["app_id"], "provider": "google", "id_token": token},
                                  provider_app["app_id"])
    assert reply_type == "identity.provider.v1.VerifiedIdentity", sealed
    assert sealed.get("mac") and sealed.get("verified_at"), sealed

    # The attacker's own verified identity, with the victim's subject put in: refused.
    altered = dict(sealed, subject=victim_claims["sub"])
    reply_type, reply = _sign_in(provider_app, altered)
    assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-google-token", reply
    assert _sessions_of(victim["user"]["uid"]) == 1
    # For another app: refused too.
    other_app_reply = _command(TOKEN_QUEUE, "identity.token.v1.ProviderSignIn",
                               {"app_id": "app_other", "identity": sealed}, "app_other")
    assert other_app_reply[0] == ERROR_TYPE, other_app_reply

    # Unaltered, for its own app: it signs in (the seal is what decided above).
    reply_type, reply = _sign_in(provider_app, sealed)
    assert reply_type == "identity.token.v1.AuthResult", reply
    assert reply.get("access_token"), reply
