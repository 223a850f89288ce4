"""Rolling restarts under load, and the logs of a cluster.

nginx (Debian's) in front of two gateways, two copies of each worker (ops_cluster.Cluster). Under
steady sign-up / refresh / `/me` load, every process is restarted one at a time with SIGTERM
(each waited for until its /readyz is 200 again). Asserted: zero failed requests (any answer but
the expected 2xx, a 503 included, or a connection error), every process exiting 0 from its
drain, zero lost events (every account in the database has its `user.created` on the events
exchange), zero duplicate accounts.

This is the short form `make test` runs (one round); `IDENTITY_CHAOS_ROUNDS=N` restarts
everything N times, `IDENTITY_CHAOS_THREADS` sets the load's concurrency (default 4)."""

import json
import os
import threading
import time
import uuid

import pika
import pytest

import db_tools
from identity_client import unique_email
from ops_cluster import Cluster

ROUNDS = int(os.environ.get("IDENTITY_CHAOS_ROUNDS", "1"))
THREADS = int(os.environ.get("IDENTITY_CHAOS_THREADS", "4"))
EXCHANGE = "identity.events"


@pytest.fixture(scope="module")
def cluster(stack):
    cluster = Cluster(stack, copies=2, log_format="json", log_level="debug")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


class Load:
    """Threads that each, in a loop: sign up a new account, read /me, refresh, read /me."""

    def __init__(self, cluster, app, threads):
        self.cluster, self.app, self.threads = cluster, app, threads
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()
        self.counts = {}
        self.failures = []
        self.latencies = []
        self.signed_up = []          # (uid, email)
        self.workers = [threading.Thread(target=self.run, daemon=True) for _ in range(threads)]

    def record(self, op, resp, expected):
        with self.lock:
            self.counts[op] = self.counts.get(op, 0) + 1
            if isinstance(resp, Exception):
                self.failures.append((time.strftime("%H:%M:%S"), op, repr(resp)))
                return False
            self.latencies.append(resp.elapsed)
            if resp.status != expected:
                self.failures.append((time.strftime("%H:%M:%S"), op, resp.status, resp.body[:300]))
                return False
            return True

    def call(self, op, expected, fn):
        try:
            resp = fn()
        except Exception as error:  # a refused or cut connection is a failed request
            self.record(op, error, expected)
            return None
        return resp if self.record(op, resp, expected) else None

    def run(self):
        client = self.cluster.client
        while not self.stop_flag.is_set():
            email = unique_email("chaos")
            resp = self.call("sign-up", 201, lambda: client.sign_up(self.app, email=email, timeout=30))
            if resp is None:
                continue
            data = resp.json["data"]
            with self.lock:
                self.signed_up.append((data["user"]["uid"], email))
            access, refresh = data["access_token"], data["refresh_token"]
            if self.call("me", 200, lambda: client.me(self.app, access, timeout=30)) is None:
                continue
            resp = self.call("refresh", 200, lambda: client.refresh(self.app, refresh, timeout=30))
            if resp is None:
                continue
            access = resp.json["data"]["access_token"]
            self.call("me", 200, lambda: client.me(self.app, access, timeout=30))

    def start(self):
        for worker in self.workers:
            worker.start()

    def stop(self):
        self.stop_flag.set()
        for worker in self.workers:
            worker.join(timeout=60)

    def total(self):
        return sum(self.counts.values())


def _events_queue(app_id):
    """An exclusive queue bound to the app's user.created events, on a connection without
    heartbeats (the test reads it only at the end)."""
    params = pika.URLParameters(os.environ["IDENTITY_AMQP_URL"])
    params.heartbeat = 0
    connection = pika.BlockingConnection(params)
    channel = connection.channel()
    channel.exchange_declare(exchange=EXCHANGE, exchange_type="topic", durable=True)
    queue = channel.queue_declare(queue="", exclusive=True).method.queue
    channel.queue_bind(queue=queue, exchange=EXCHANGE, routing_key=f"{app_id}.user.created")
    return connection, channel, queue


def _drain(channel, queue, wanted, timeout=60):
    """The uids of the user.created events received, waiting until `wanted` are all in."""
    uids = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        method, _, body = channel.basic_get(queue=queue, auto_ack=True)
        if method is None:
            if wanted <= uids:
                break
            time.sleep(0.2)
            continue
        uids.add(json.loads(body)["uid"])
    return uids


def _log_lines(process):
    with open(process.log_path, encoding="utf-8", errors="replace") as log:
        return [line for line in log.read().splitlines() if line.strip() and not line.startswith("=== start")]


def test_json_logs_carry_the_request_id_across_processes(cluster, stack):
    app = stack.create_app(name="ops-logs")
    request_id = f"ops-{uuid.uuid4().hex}"
    email = unique_email("logs")
    resp = cluster.client.email_code_send(app, email, request_id=request_id)
    assert resp.status in (200, 202, 204), resp
    assert resp.header("X-Request-Id") == request_id
    stack.mail.first(email, timeout=20)
    time.sleep(0.5)
    by_kind = {}
    for process in cluster.processes:
        for line in _log_lines(process):
            try:
                entry = json.loads(line)
            except ValueError:
                pytest.fail(f"{process.name}: not a JSON log line: {line!r}")
            assert {"time", "level", "msg"} <= set(entry), (process.name, entry)
            if entry.get("request_id") == request_id:
                by_kind.setdefault(process.name.split("#")[0], []).append(entry["msg"])
    assert "request answered" in by_kind.get("identity-gateway", []), by_kind
    assert "command handled" in by_kind.get("identity-token-worker", []), by_kind
    mailer = by_kind.get("identity-mailer-worker", [])
    assert "mail sent" in mailer and "command handled" in mailer, by_kind


def test_rolling_restart_under_load(cluster, stack):
    app = stack.create_app(name="ops-chaos")
    connection, channel, queue = _events_queue(app["app_id"])
    load = Load(cluster, app, THREADS)
    exits = []
    started = time.monotonic()
    try:
        load.start()
        time.sleep(2)
        for _ in range(ROUNDS):
            for process in cluster.processes:
                exits.append((process.name, cluster.restart(process)))
                time.sleep(0.5)
        time.sleep(2)
    finally:
        load.stop()
    elapsed = time.monotonic() - started
    try:
        latencies = sorted(load.latencies)
        p99 = latencies[int(len(latencies) * 0.99) - 1] if latencies else 0
        print(f"\nrolling restart: {len(exits)} restarts, {load.total()} requests in {elapsed:.1f} s "
              f"({load.total() / elapsed:.1f}/s), {dict(load.counts)}, p99 {p99 * 1000:.0f} ms, "
              f"failures {len(load.failures)}")
        assert load.failures == [], f"{len(load.failures)} failed requests: {load.failures[:20]}\n{cluster.tails()}"
        assert all(code == 0 for _, code in exits), exits
        assert load.counts.get("sign-up", 0) >= 20, load.counts

        # Committed accounts (whatever their answer), each exactly once.
        rows = db_tools.rows(f"SELECT uid, email FROM users WHERE app_id = {db_tools.literal(app['app_id'])}")
        uids = {uid for uid, _ in rows}
        emails = [email for _, email in rows]
        assert len(emails) == len(set(emails)), "duplicate accounts"
        assert uids == {uid for uid, _ in load.signed_up}, "accounts and answered sign-ups differ"
        # Every committed sign-up's user.created arrives (duplicates allowed, loss not).
        received = _drain(channel, queue, uids)
        lost = uids - received
        assert not lost, f"{len(lost)} user.created events lost of {len(uids)}"
    finally:
        connection.close()
