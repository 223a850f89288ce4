"""AMQP heartbeats: every connection asks for IDENTITY_AMQP_HEARTBEAT_SECONDS and keeps them
going while idle, so neither the broker nor anything in between drops an idle connection (the
outbox relay's used to be cut after a minute or two of quiet, and its next publish failed).

A revocation worker of our own runs with 2-second heartbeats: the broker then closes a
connection that stays silent for about two intervals. After idling for several times that, both
of its connections (command consumer and outbox relay) must be the ones it opened, with the
heartbeat it asked for, no reconnection in its log, and its relay must still deliver."""

import os
import re
import signal
import socket
import subprocess
import time
import uuid

import db_tools

HEARTBEAT_SECONDS = 2
IDLE_SECONDS = 15
PURPOSES = ("revocation-worker", "outbox-relay")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _connections(pid):
    """{purpose: (name, timeout, connected_at)} of the broker's connections whose client
    property connection_name says they belong to process `pid`."""
    script = os.environ["IDENTITY_SERVICES_SCRIPT"]
    done = subprocess.run([script, "ctl", "-q", "list_connections", "--no-table-headers", "name",
                           "timeout", "connected_at", "client_properties"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"rabbitmqctl list_connections failed:\n{done.stderr}"
    found = {}
    for line in done.stdout.splitlines():
        columns = line.split("\t")
        if len(columns) < 4:
            continue
        named = re.search(r'"connection_name","identity-revocation-worker ([a-z-]+) \(pid (\d+)\)"',
                          columns[3])
        if named and int(named.group(2)) == pid:
            found[named.group(1)] = (columns[0], columns[1], columns[2])
    return found


def _log(path):
    with open(path, encoding="utf-8", errors="replace") as log:
        return log.read()


def test_an_idle_worker_keeps_its_connections_with_heartbeats(stack, client):
    log_path = os.path.join(stack.log_dir, f"revocation-worker-heartbeat-{uuid.uuid4().hex[:6]}.log")
    env = dict(stack.env_for("identity-revocation-worker"), IDENTITY_AMQP_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
               IDENTITY_LOG_LEVEL="debug", IDENTITY_HTTP_PORT=str(_free_port()))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([stack.binary("identity-revocation-worker")], env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        def both_open():
            found = _connections(proc.pid)
            return found if set(found) == set(PURPOSES) else None
        opened = client.wait_for(both_open, timeout=20, interval=0.5)
        assert opened, f"the worker's connections never showed up at the broker: " \
            f"{_connections(proc.pid)}\n{_log(log_path)[-2000:]}"
        for purpose, (_, timeout, _) in opened.items():
            assert timeout == str(HEARTBEAT_SECONDS), \
                f"{purpose}: heartbeat {timeout} s negotiated, asked for {HEARTBEAT_SECONDS}"

        time.sleep(IDLE_SECONDS)

        assert proc.poll() is None, f"the worker exited:\n{_log(log_path)[-2000:]}"
        now = _connections(proc.pid)
        assert now == opened, f"connections replaced or gone while idle: before {opened}, " \
            f"after {now}\n{_log(log_path)[-3000:]}"
        text = _log(log_path)
        assert text.count('msg="outbox relay connected"') == 1, text[-3000:]
        assert text.count('msg="bus connected"') == 1, text[-3000:]
        for symptom in ("outbox relay interrupted", "bus connection lost"):
            assert symptom not in text, text[-3000:]

        # It still relays: outbox rows of our own (as a flow writes them, routed nowhere), until
        # this worker's relay rather than the suite's is the one that takes one.
        relayed = None
        for _ in range(40):
            event_id = f"evt_heartbeat_{uuid.uuid4().hex}"
            db_tools.rows("insert into outbox (app_id, event_id, routing_key, message_type, payload) "
                          f"values ('app_heartbeat_test', {db_tools.literal(event_id)}, "
                          "'test.heartbeat', 'identity.events.v1.Test', '{}')")
            gone = client.wait_for(lambda e=event_id: db_tools.value(
                f"select count(*) from outbox where event_id = {db_tools.literal(e)}") == "0",
                timeout=10, interval=0.1)
            assert gone, f"outbox row {event_id} not relayed within 10 s"
            if event_id in _log(log_path):
                relayed = event_id
                break
        assert relayed, "the worker's relay never relayed one of 40 rows (the suite's relay took " \
            f"them all?)\n{_log(log_path)[-3000:]}"
        text = _log(log_path)
        assert "outbox relay interrupted" not in text and "bus connection lost" not in text, text[-3000:]
        assert _connections(proc.pid) == opened
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
