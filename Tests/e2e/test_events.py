"""The event stream on the topic exchange `identity.events`, read as an app backend or a push
operator would: routing key = event name, AMQP `type` = full proto name, `message_id` = event id,
body = JSON (snake_case) with at least event_id, app_id, uid and time. Events go through a
transactional outbox relayed by the revocation worker: none lost, none invented."""

import json
import os
import time

import pika
import pika.exceptions
import pytest

import db_tools
from event_tools import EVENT_TYPE_PREFIX, EXCHANGE, Event, assert_event, connect, declare_exchange
from identity_client import assert_no_content, assert_problem, unique_email


def _of_app(events, app):
    return [e for e in events if e.get("app_id") == app["app_id"]]


def test_sign_up_publishes_user_created_and_session_created(client, app, events):
    signed_up = client.new_user(app)
    uid, sid = signed_up["user"]["uid"], signed_up["session_id"]
    created = events.wait_for("user.created", lambda b: b.get("uid") == uid)
    assert_event(created, "user.created", "UserCreated", app, uid)
    session = events.wait_for("session.created", lambda b: b.get("session_id") == sid)
    assert_event(session, "session.created", "SessionCreated", app, uid)
    assert created.message_id != session.message_id


def test_sign_in_publishes_session_created(client, app, events):
    signed_up = client.new_user(app)
    signed_in = client.sign_in(app, email=signed_up["user"]["email"])
    assert signed_in.status == 200, signed_in
    sid = signed_in.data["session_id"]
    event = events.wait_for("session.created", lambda b: b.get("session_id") == sid)
    assert_event(event, "session.created", "SessionCreated", app, signed_up["user"]["uid"])


def test_profile_change_publishes_user_updated(client, app, events):
    signed_up = client.new_user(app)
    uid = signed_up["user"]["uid"]
    changed = client.patch_me(app, signed_up["access_token"], {"first_name": "Renamed"})
    assert changed.status == 200, changed
    event = events.wait_for("user.updated", lambda b: b.get("uid") == uid)
    body = assert_event(event, "user.updated", "UserUpdated", app, uid)
    assert body.get("change") == "profile", body


def test_sign_out_publishes_session_revoked(client, app, events):
    signed_up = client.new_user(app)
    sid = signed_up["session_id"]
    assert_no_content(client.sign_out(app, signed_up["access_token"]))
    event = events.wait_for("session.revoked", lambda b: b.get("session_id") == sid)
    body = assert_event(event, "session.revoked", "SessionRevoked", app, signed_up["user"]["uid"])
    assert isinstance(body.get("reason"), str) and body["reason"], body


def test_refresh_token_theft_publishes_reuse_detected(stack, client, app, events):
    signed_up = client.new_user(app)
    uid, sid = signed_up["user"]["uid"], signed_up["session_id"]
    assert client.refresh(app, signed_up["refresh_token"]).status == 200
    time.sleep(stack.refresh_grace_seconds + 0.5)
    assert_problem(client.refresh(app, signed_up["refresh_token"]), 401, "auth/refresh-token-revoked")
    reuse = events.wait_for("refresh_token.reuse_detected", lambda b: b.get("session_id") == sid)
    assert_event(reuse, "refresh_token.reuse_detected", "RefreshTokenReuseDetected", app, uid)
    revoked = events.wait_for("session.revoked", lambda b: b.get("session_id") == sid)
    body = assert_event(revoked, "session.revoked", "SessionRevoked", app, uid)
    assert isinstance(body.get("reason"), str) and body["reason"], body


def test_event_ids_are_unique(client, app, events):
    first = client.new_user(app)
    second = client.new_user(app)
    signed_in = client.sign_in(app, email=first["user"]["email"])
    assert signed_in.status == 200, signed_in
    assert_no_content(client.sign_out(app, signed_in.data["access_token"]))
    sid = signed_in.data["session_id"]
    events.wait_for("session.revoked", lambda b: b.get("session_id") == sid)
    for tokens in (first, second, signed_in.data):
        events.wait_for("session.created", lambda b, s=tokens["session_id"]: b.get("session_id") == s)
    for tokens in (first, second):
        events.wait_for("user.created", lambda b, uid=tokens["user"]["uid"]: b.get("uid") == uid)
    mine = _of_app(events.collect(0.5), app)
    # 2 user.created, 3 session.created, 1 session.revoked at least.
    assert len(mine) >= 6, [e.summary() for e in mine]
    ids = [e.get("event_id") for e in mine]
    assert len(set(ids)) == len(ids), f"event ids repeat: {ids}"
    assert all(e.message_id == e.get("event_id") for e in mine), [e.summary() for e in mine]


def test_refused_duplicate_sign_up_publishes_no_user_created(client, app, events):
    email = unique_email()
    uid = client.new_user(app, email=email)["user"]["uid"]
    assert_problem(client.sign_up(app, email=email), 409, "auth/email-already-in-use")
    assert_problem(client.sign_up(app, email=email.upper()), 409, "auth/email-already-in-use")
    events.wait_for("user.created", lambda b: b.get("uid") == uid)
    created = [e for e in _of_app(events.collect(1.5), app) if e.name == "user.created"]
    assert [e.get("uid") for e in created] == [uid], [e.summary() for e in created]


# --- the outbox over a broker outage (disruptive: runs last) --------------------------------

OUTBOX_QUEUE = "e2e.outbox-test"


def _with_channel(url, action, timeout):
    """Runs action(channel) on a fresh connection, retrying while the broker is not (yet)
    reachable; returns what action returned."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            connection = connect(url)
            try:
                return action(connection.channel())
            finally:
                if connection.is_open:
                    connection.close()
        except (pika.exceptions.AMQPError, OSError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(1)


def _wait_for_outbox_message(url, uid, timeout):
    """The first message on OUTBOX_QUEUE whose body's uid is `uid` (others are dropped), as
    (body, properties); fails the test after timeout."""
    deadline = time.monotonic() + timeout
    seen = []

    def poll(channel):
        while time.monotonic() < deadline:
            method, properties, body = channel.basic_get(OUTBOX_QUEUE, auto_ack=True)
            if method is None:
                time.sleep(0.25)
                continue
            seen.append(body[:300])
            try:
                parsed = json.loads(body.decode("utf-8"))
            except ValueError:
                continue
            if isinstance(parsed, dict) and parsed.get("uid") == uid:
                return parsed, properties
        return None

    try:
        # A connection lost on the way (the broker still settling) is retried until the deadline.
        found = _with_channel(url, poll, timeout=timeout)
    except (pika.exceptions.AMQPError, OSError):
        found = None
    if found is not None:
        return found
    raise AssertionError(f"no user.created for {uid} on {OUTBOX_QUEUE} within {timeout}s "
                         f"of the broker's return; other messages: {seen}")


def _outbox_rows(uid):
    return db_tools.rows("select event_id from outbox where routing_key like '%.user.created' "
                         f"and payload::text like {db_tools.literal('%' + uid + '%')}")


@pytest.mark.disruptive
def test_outbox_delivers_an_event_written_while_the_broker_was_down(stack, client, app):
    url = os.environ["IDENTITY_AMQP_URL"]

    def set_up_queue(channel):
        declare_exchange(channel)
        channel.queue_declare(queue=OUTBOX_QUEUE, durable=True, exclusive=False, auto_delete=False)
        channel.queue_bind(queue=OUTBOX_QUEUE, exchange=EXCHANGE, routing_key="*.user.created")
        channel.queue_purge(queue=OUTBOX_QUEUE)

    _with_channel(url, set_up_queue, timeout=10)
    broker_down = False
    try:
        # No relay: the event can only wait in the outbox.
        stack.stop_revocation_worker()
        signed_up = client.sign_up(app)
        assert signed_up.status == 201, signed_up
        uid = signed_up.data["user"]["uid"]
        rows = _outbox_rows(uid)
        assert len(rows) == 1, f"expected one user.created outbox row for {uid}, got {rows!r}"
        event_id = rows[0][0]

        stack.stop_broker()
        broker_down = True
        # The relay starts with no broker to talk to: it must wait and retry, not exit.
        stack.start_revocation_worker()
        time.sleep(2)
        assert stack.revocation.alive(), f"the revocation worker exited without a broker " \
                                         f"({stack.revocation.state()})"
        stack.start_broker()
        broker_down = False

        body, properties = _wait_for_outbox_message(url, uid, timeout=30)
        assert body.get("event_id") == event_id, (body, event_id)
        assert properties.message_id == event_id, (properties, event_id)
        assert properties.type == EVENT_TYPE_PREFIX + "UserCreated", properties
        assert body.get("app_id") == app["app_id"], body
        # Relayed means done: the row leaves the outbox.
        assert client.wait_for(lambda: not _outbox_rows(uid), timeout=10, interval=0.5), \
            f"outbox row {event_id} still there 10 s after its message arrived"
        assert stack.revocation.alive() and stack.worker.alive() and stack.gateway.alive()
    finally:
        # Leave everything running for whatever comes next, even after a failure.
        if not stack.revocation.alive():
            stack.start_revocation_worker()
        if broker_down:
            stack.start_broker()
        client.wait_for(lambda: client.get("/readyz", timeout=5).status == 200, timeout=30)
        try:
            _with_channel(url, lambda channel: channel.queue_delete(queue=OUTBOX_QUEUE), timeout=30)
        except (pika.exceptions.AMQPError, OSError):
            pass  # a leftover test queue in the test vhost harms nothing


def test_a_tenant_binds_to_its_own_events_only(client, app, other_app):
    """Routing keys start with the app id: a consumer bound to `<app_id>.#` (as docs/architecture.md
    shows) receives every event of its app and none of another's."""
    url = os.environ["IDENTITY_AMQP_URL"]
    connection = connect(url)
    try:
        channel = connection.channel()
        declare_exchange(channel)
        queue = channel.queue_declare(queue="", exclusive=True, auto_delete=True).method.queue
        channel.queue_bind(queue=queue, exchange=EXCHANGE, routing_key=f"{app['app_id']}.#")
        mine = client.new_user(app)["user"]["uid"]
        theirs = client.new_user(other_app)["user"]["uid"]
        received = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(e.get("uid") == mine for e in received):
            method, properties, body = channel.basic_get(queue, auto_ack=True)
            if method is None:
                time.sleep(0.1)
                continue
            received.append(Event.from_amqp(method, properties, body))
        time.sleep(1)  # whatever else was on its way
        while True:
            method, properties, body = channel.basic_get(queue, auto_ack=True)
            if method is None:
                break
            received.append(Event.from_amqp(method, properties, body))
    finally:
        connection.close()
    created = [e for e in received if e.name == "user.created" and e.get("uid") == mine]
    assert len(created) == 1, [e.summary() for e in received]
    assert created[0].routing_key == f"{app['app_id']}.user.created"
    assert all(e.routing_key.startswith(app["app_id"] + ".") for e in received), [e.summary() for e in received]
    assert not [e for e in received if e.get("uid") == theirs or e.get("app_id") == other_app["app_id"]]
