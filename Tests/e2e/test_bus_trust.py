"""Who may publish the message a worker trusts: a verified
provider identity crosses the bus sealed with a MAC that only the provider worker makes (a
sub-key of the master key the gateway never has). A `ProviderSignIn` published straight to the
token worker's queue with a made-up or altered identity gets no tokens, and the refusal is
logged; the identity the provider worker really verified still signs in (the control).

Likewise every command that acts for a user on the gateway's word (profile, password, devices,
linking, deletion, sign-out, guest upgrades) runs only with that user's access token in the
message's `caller_token` header (CallerAuthority): another process that may publish to the
default exchange (here the provider worker's broker user) cannot act for anyone."""

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


def _command(queue, type_name, body, app_id, timeout=10, user="identity-gateway", caller_token=None,
             message_id=None, headers=None, vouched=False):
    """Publishes a command with `user`'s broker credentials (by default the gateway's: it may
    publish commands; it never holds the MAC key), with `caller_token` as the acting user's
    token when given (and `message_id`, extra `headers` when given; `vouched`: with the AMQP
    user_id property, which the broker checks against `user`, as our own links set it), and
    waits for the worker's reply on direct reply-to: (type, parsed body)."""
    connection = connect(amqp_url(user))
    try:
        channel = connection.channel()
        replies = []
        channel.basic_consume("amq.rabbitmq.reply-to", lambda ch, m, p, b: replies.append((p, b)),
                              auto_ack=True)
        correlation = uuid.uuid4().hex
        channel.basic_publish(
            exchange="", routing_key=queue, body=json.dumps(body).encode(),
            properties=pika.BasicProperties(
                type=type_name, content_type="application/json", message_id=message_id or f"cmd_{correlation}",
                user_id=user if vouched else None,
                correlation_id=correlation, reply_to="amq.rabbitmq.reply-to", expiration=str(timeout * 1000),
                headers={"app_id": app_id, "request_id": f"req_forged_{correlation}",
                         **({"caller_token": caller_token} if caller_token else {}), **(headers or {})}))
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


REVOCATION_QUEUE = "identity.revocation.commands"
REFUSAL_LOG = "command refused: it does not carry the acting user's access token"


def test_a_command_acting_for_a_user_needs_that_users_own_token(stack, client, app):
    victim = client.new_user(app, first_name="Victim")
    attacker = client.new_user(app, first_name="Attacker")
    uid = victim["user"]["uid"]
    update = {"app_id": app["app_id"], "uid": uid, "first_name": "Pwned"}
    # Published by a process that may write to the default exchange, without a token, with a
    # garbled one, and with a valid token of another user: all refused, nothing changed.
    for token in (None, victim["access_token"][:-4] + "AAAA", attacker["access_token"]):
        reply_type, reply = _command(TOKEN_QUEUE, "identity.token.v1.UpdateProfile", update, app["app_id"],
                                     user="identity-provider-worker", caller_token=token)
        assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-token", reply
    me = client.get("/v1/me", app_key=app["app_key"], token=victim["access_token"])
    assert me.status == 200 and me.data["first_name"] == "Victim", me
    assert REFUSAL_LOG in stack.worker.tail(400)
    # The control: with the victim's own token the same command runs.
    reply_type, reply = _command(TOKEN_QUEUE, "identity.token.v1.UpdateProfile", update, app["app_id"],
                                 user="identity-provider-worker", caller_token=victim["access_token"])
    assert reply_type == "identity.token.v1.UserResult" and reply["user"]["first_name"] == "Pwned", reply


def test_a_forged_sign_out_ends_no_session(stack, client, app):
    victim = client.new_user(app)
    uid = victim["user"]["uid"]
    for type_name, body in (("identity.revocation.v1.EndAllSessions", {"app_id": app["app_id"], "uid": uid,
                                                                        "reason": "forged"}),
                            ("identity.revocation.v1.EndSession", {"app_id": app["app_id"], "uid": uid,
                                                                    "session_id": victim["session_id"],
                                                                    "reason": "forged"})):
        reply_type, reply = _command(REVOCATION_QUEUE, type_name, body, app["app_id"], user="identity-provider-worker")
        assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-token", reply
    assert client.get("/v1/me", app_key=app["app_key"], token=victim["access_token"]).status == 200
    assert _sessions_of(uid) == 1
    assert REFUSAL_LOG in stack.revocation.tail(400)


def test_a_guest_cannot_be_taken_over_without_its_token(client, app):
    guest, _ = client.new_guest(app)
    uid = guest["user"]["uid"]
    reply_type, reply = _command(TOKEN_QUEUE, "identity.token.v1.SignUp",
                                 {"app_id": app["app_id"], "email": f"taker-{uuid.uuid4().hex[:8]}@example.com",
                                  "password": "correct horse battery staple", "guest_uid": uid}, app["app_id"])
    assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-token", reply
    # The guest is still a guest, signed in as before.
    me = client.get("/v1/me", app_key=app["app_key"], token=guest["access_token"])
    assert me.status == 200 and me.data["is_guest"] is True, me


def test_an_apps_secret_key_acts_for_its_own_users_only(client, app, other_app):
    """The admin API forwards the app's secret key as the caller: it may act for any user of
    that app (the control), and a key of another app acts for nobody here."""
    user = client.new_user(app, first_name="Before")
    update = {"app_id": app["app_id"], "uid": user["user"]["uid"], "first_name": "Admin"}
    reply_type, reply = _command(TOKEN_QUEUE, "identity.token.v1.UpdateProfile", update, app["app_id"],
                                 caller_token=other_app["secret_key"])
    assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-token", reply
    reply_type, reply = _command(TOKEN_QUEUE, "identity.token.v1.UpdateProfile", update, app["app_id"],
                                 caller_token=app["secret_key"])
    assert reply_type == "identity.token.v1.UserResult" and reply["user"]["first_name"] == "Admin", reply


def test_a_forged_unregister_device_removes_nothing(stack, client, app):
    """A push device is the victim's to remove: without the victim's token the revocation
    worker leaves it registered (a forger could otherwise cut a user off their alerts)."""
    victim = client.new_user(app)
    registered = client.register_device(app, victim["access_token"], f"apns-{uuid.uuid4().hex}")
    assert registered.status in (200, 201), registered
    device_id = registered.data["id"]
    body = {"app_id": app["app_id"], "uid": victim["user"]["uid"], "device_id": device_id}
    attacker = client.new_user(app)
    for token in (None, attacker["access_token"]):
        reply_type, reply = _command(REVOCATION_QUEUE, "identity.revocation.v1.UnregisterDevice", body, app["app_id"],
                                     user="identity-provider-worker", caller_token=token)
        assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-token", reply
    listed = client.devices(app, victim["access_token"])
    assert listed.status == 200 and [d["id"] for d in listed.data] == [device_id], listed
    assert REFUSAL_LOG in stack.revocation.tail(400)


def test_an_admin_command_runs_only_with_the_apps_secret_key(client, app, other_app):
    """Admin commands act for the app's backend: a user's own token, another app's secret key
    or none at all disable nobody; the app's own key does (the control)."""
    victim = client.new_user(app)
    uid = victim["user"]["uid"]
    body = {"app_id": app["app_id"], "uid": uid, "disabled": True, "actor": "forger"}
    for token in (None, victim["access_token"], other_app["secret_key"]):
        reply_type, reply = _command(TOKEN_QUEUE, "identity.admin.v1.SetUserDisabled", body, app["app_id"],
                                     user="identity-provider-worker", caller_token=token)
        assert reply_type == ERROR_TYPE, reply
        assert reply["code"] in ("auth/invalid-token", "auth/invalid-secret-key"), reply
    assert client.get("/v1/me", app_key=app["app_key"], token=victim["access_token"]).status == 200
    reply_type, reply = _command(TOKEN_QUEUE, "identity.admin.v1.SetUserDisabled", body, app["app_id"],
                                 caller_token=app["secret_key"])
    assert reply_type != ERROR_TYPE, reply
    assert client.get("/v1/me", app_key=app["app_key"], token=victim["access_token"]).status == 401


def test_a_forged_replay_of_a_real_sign_in_mints_nothing(client, app):
    """No replay without the broker's word: a sign-in command that says it was republished, with
    the message id of a real session's sign-in (say, seen on the broker), published by another
    process's broker user, is run as a first delivery: its wrong password is refused."""
    import hashlib
    import db_tools
    from identity_client import PASSWORD, unique_email
    email = unique_email("replay")
    client.new_user(app, email=email)
    body = {"app_id": app["app_id"], "identifier": email, "password": PASSWORD,
            "client": {"ip": "203.0.113.66", "user_agent": "signer"}}
    message_id = f"cmd_real_{uuid.uuid4().hex}"
    signed_type, signed = _command(TOKEN_QUEUE, "identity.token.v1.SignIn", body, app["app_id"], message_id=message_id)
    assert signed_type == "identity.token.v1.AuthResult", signed
    # The session keeps its command's key (the message id and the SHA-256 of what it carried)
    # only as a hash with the app: the row alone does not tell the message id.
    key = message_id + "." + hashlib.sha256(json.dumps(body).encode()).hexdigest()
    stored = db_tools.value(f"select encode(command_key, 'hex') from sessions where app_id = {db_tools.literal(app['app_id'])} "
                            f"and id = {db_tools.literal(signed['session_id'])}")
    assert stored == hashlib.sha256(f"{app['app_id']}:{key}".encode()).hexdigest(), stored
    uid = signed["user"]["uid"]
    before = _sessions_of(uid)
    forged = {"app_id": app["app_id"], "identifier": email, "password": "not the password",
              "client": {"ip": "203.0.113.66", "user_agent": "forger"}}
    for user in ("identity-provider-worker", "identity-revocation-worker", "identity-gateway"):
        # The gateway's user is vouched for by the broker: its header counts, and the forged body
        # still does not match the session's key.
        reply_type, reply = _command(TOKEN_QUEUE, "identity.token.v1.SignIn", forged, app["app_id"], user=user,
                                     message_id=message_id, headers={"republished": "1"}, vouched=True)
        assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-credential", (user, reply)
        assert "access_token" not in json.dumps(reply)
    assert _sessions_of(uid) == before


def test_a_replay_never_revives_a_signed_out_session(client, app):
    """Even the gateway's own republished command is answered from its session only while that
    session lives: replayed after the sign-out, the command is refused and starts nothing."""
    import db_tools
    from identity_client import PASSWORD, unique_email
    email = unique_email("replay-ended")
    client.new_user(app, email=email)
    body = {"app_id": app["app_id"], "identifier": email, "password": PASSWORD,
            "client": {"ip": "203.0.113.67", "user_agent": "replayer"}}
    message_id = f"cmd_replay_{uuid.uuid4().hex}"
    first_type, first = _command(TOKEN_QUEUE, "identity.token.v1.SignIn", body, app["app_id"], message_id=message_id)
    assert first_type == "identity.token.v1.AuthResult", first
    # Sent again as the gateway's republish: answered from the committed session.
    again_type, again = _command(TOKEN_QUEUE, "identity.token.v1.SignIn", body, app["app_id"], message_id=message_id,
                                 headers={"republished": "1"}, user="identity-gateway", vouched=True)
    assert again_type == "identity.token.v1.AuthResult" and again["session_id"] == first["session_id"], again
    assert client.sign_out(app, first["access_token"]).status == 204
    later_type, later = _command(TOKEN_QUEUE, "identity.token.v1.SignIn", body, app["app_id"], message_id=message_id,
                                 headers={"republished": "1"}, user="identity-gateway", vouched=True)
    assert later_type == ERROR_TYPE and later["code"] == "auth/invalid-credential", later
    assert _sessions_of(first["user"]["uid"]) == 2  # the sign-up's and the ended one
    ended = db_tools.value(f"select ended_at is not null from sessions where app_id = {db_tools.literal(app['app_id'])} "
                           f"and id = {db_tools.literal(first['session_id'])}")
    assert ended == "t", ended
