"""Node failures under load, on three clustered RabbitMQ nodes and a PostgreSQL primary with a
streaming standby (scripts/cluster.sh; docs/operations.md, "Running past one machine").

Run by scripts/cluster-test.sh, which starts the cluster and hands the stack multi-node AMQP
URLs and multi-host libpq URLs (`target_session_attrs=read-write`); skipped under the
single-node harness. Two gateways (the stack's and a second one) and the workers run for real.
Under steady sign-up / `/me` / refresh load through both gateways:

1. the RabbitMQ node leading `identity.token.commands` (a quorum queue) is stopped, and started
   again `NODE_DOWN_SECONDS` later;
2. the node the first gateway is connected to is stopped and started again the same way (the
   leader's node may have held no gateway connection: this one has, with commands in flight);
3. the PostgreSQL primary is stopped and the standby promoted.

Counted and asserted: failed requests (only 503s or cut connections, and only inside the
failover window of each fault: from the fault to `RECOVERY_LIMIT_SECONDS` after it), committed
sign-ups whose `user.created` never reached the events exchange (0), commands run twice with a
visible effect (0: a sign-up answered 409 for its own new account, an account with two sessions,
a refresh refused as reuse), and the time to recover from each fault (from the fault to the last
failed request). The figures are printed and written to `cluster-failover.json` in the log
folder. `IDENTITY_CLUSTER_CHAOS_SECONDS` lengthens every phase (make chaos)."""

import json
import os
import subprocess
import threading
import time
import urllib.parse
import uuid

import pika
import pytest

import db_tools
from conftest import ServiceProcess, _free_port
from identity_client import Client, unique_email

SCRIPT = os.environ.get("IDENTITY_CLUSTER_SCRIPT")
pytestmark = pytest.mark.skipif(not SCRIPT, reason="needs the cluster harness (scripts/cluster-test.sh)")

PHASE = float(os.environ.get("IDENTITY_CLUSTER_CHAOS_SECONDS", "6"))
THREADS = int(os.environ.get("IDENTITY_CLUSTER_THREADS", "4"))
NODE_DOWN_SECONDS = PHASE
# A fault must be over (no failed request) this long after it happened.
RECOVERY_LIMIT_SECONDS = 20
EXCHANGE = "identity.events"
EVENTS_QUEUE = "cluster-test.user-created"
DEAD_PROVIDER = "identity.provider.dead"


def cluster(*args):
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"cluster.sh {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout.strip()


class Load:
    """Threads that each, in a loop: sign up a new account, read /me, refresh, read /me, through
    the two gateways in turn. Every request is recorded with its start time and outcome."""

    def __init__(self, clients, app, threads):
        self.clients, self.app = clients, app
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()
        self.requests = []             # (start, end, op, status or error text)
        self.signed_up = []            # uids answered 201
        self.conflicts = []            # sign-ups of a fresh address answered 409: ran twice
        self.reuse_refusals = []       # refreshes of a token used once answered 401
        self.workers = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(threads)]

    def call(self, op, expected, fn):
        started = time.monotonic()
        try:
            resp = fn()
            outcome = resp.status
        except Exception as error:  # a refused or cut connection is a failed request
            resp, outcome = None, type(error).__name__
        with self.lock:
            self.requests.append((started, time.monotonic(), op, outcome))
        if resp is not None and resp.status == 409 and op == "sign-up":
            self.conflicts.append(resp.body[:200])
        if resp is not None and resp.status == 401 and op == "refresh":
            self.reuse_refusals.append(resp.body[:200])
        return resp if outcome == expected else None

    def run(self, index):
        turn = index
        while not self.stop_flag.is_set():
            turn += 1
            client = self.clients[turn % len(self.clients)]
            email = unique_email("cluster")
            resp = self.call("sign-up", 201, lambda: client.sign_up(self.app, email=email, timeout=30))
            if resp is None:
                continue  # never retried: a retry of a committed sign-up is a legitimate 409
            data = resp.json["data"]
            with self.lock:
                self.signed_up.append(data["user"]["uid"])
            access, refresh = data["access_token"], data["refresh_token"]
            client = self.clients[(turn + 1) % len(self.clients)]
            if self.call("me", 200, lambda: client.me(self.app, access, timeout=30)) is None:
                continue
            resp = self.call("refresh", 200, lambda: client.refresh(self.app, refresh, timeout=30))
            if resp is None:
                continue  # the token may be spent: the account is left, not refreshed again
            access = resp.json["data"]["access_token"]
            self.call("me", 200, lambda: client.me(self.app, access, timeout=30))

    def start(self):
        for worker in self.workers:
            worker.start()

    def stop(self):
        self.stop_flag.set()
        for worker in self.workers:
            worker.join(timeout=60)

    def failures(self):
        expected = {"sign-up": 201, "me": 200, "refresh": 200}
        return [r for r in self.requests if r[3] != expected[r[2]]]


def _amqp_parameters():
    """guest's parameters for every node (pika tries them in turn)."""
    params = []
    for url in os.environ["IDENTITY_AMQP_URL"].split(","):
        p = pika.URLParameters(url)
        p.heartbeat = 0
        p.connection_attempts = 1
        params.append(p)
    return params


def _events_queue(app_id):
    """A durable quorum queue (it must outlive a node) bound to the app's user.created events."""
    connection = pika.BlockingConnection(_amqp_parameters())
    channel = connection.channel()
    channel.exchange_declare(exchange=EXCHANGE, exchange_type="topic", durable=True)
    channel.queue_declare(queue=EVENTS_QUEUE, durable=True, arguments={"x-queue-type": "quorum"})
    channel.queue_purge(EVENTS_QUEUE)
    channel.queue_bind(queue=EVENTS_QUEUE, exchange=EXCHANGE, routing_key=f"{app_id}.user.created")
    connection.close()


def _drain_events(wanted, timeout=60):
    uids = set()
    deadline = time.monotonic() + timeout
    connection = pika.BlockingConnection(_amqp_parameters())
    channel = connection.channel()
    try:
        while time.monotonic() < deadline:
            method, _, body = channel.basic_get(queue=EVENTS_QUEUE, auto_ack=True)
            if method is None:
                if wanted <= uids:
                    break
                time.sleep(0.2)
                continue
            uids.add(json.loads(body)["uid"])
    finally:
        connection.close()
    return uids


def _window(load, fault_at, until):
    """Failures answered between the fault and `until` (the next fault): (count, statuses,
    seconds from the fault to the answer of the last failed request, failures per second
    after the fault)."""
    failed = [r for r in load.failures() if fault_at <= r[1] < until]
    statuses = sorted({str(r[3]) for r in failed})
    recovery = max((r[1] for r in failed), default=fault_at) - fault_at
    per_second = {}
    for r in failed:
        second = int(r[1] - fault_at)
        per_second[second] = per_second.get(second, 0) + 1
    return len(failed), statuses, recovery, per_second


def _gateway_node(process):
    """The node (1-3) a process's bus link is connected to now: its last `bus connected` line."""
    port = None
    with open(process.log_path, encoding="utf-8", errors="replace") as log:
        for line in log:
            if "bus connected" in line and "link=gateway" in line:
                port = line.rsplit("port=", 1)[1].split()[0]
    assert port, "the gateway never logged its bus connection"
    return str(_node_ports().index(int(port)) + 1)


def _node_ports():
    """The AMQP port of node 1, 2, 3 (IDENTITY_AMQP_URL lists them in that order)."""
    return [urllib.parse.urlsplit(url).port for url in os.environ["IDENTITY_AMQP_URL"].split(",")]


def _connections_on(node):
    """The broker users connected to `node` (whose loss cuts them off)."""
    listed = json.loads(cluster("ctl", node, "-q", "list_connections", "user", "port", "--formatter", "json"))
    port = _node_ports()[int(node) - 1]
    return sorted(entry["user"] for entry in listed if entry["port"] == port)


def _wait_outbox_empty(timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db_tools.value("SELECT count(*) FROM outbox") == "0":
            return
        time.sleep(0.5)


def test_a_poisoned_command_is_dead_lettered_at_the_delivery_limit(stack):
    """A command handed out five times without an ack (here: taken and handed back by a consumer
    of the test's own, as a worker that crashes on it would) is not run a sixth time: the worker
    refuses it, the queue's policy moves it to identity.provider.dead, with an error line and a
    metric. Runs first: the failover test below promotes the database."""
    import ops_metrics
    body = json.dumps({"poison": uuid.uuid4().hex}).encode()
    stack.provider_worker.stop()
    connection = pika.BlockingConnection(_amqp_parameters())
    try:
        channel = connection.channel()
        channel.queue_purge(DEAD_PROVIDER)
        channel.basic_publish("", "identity.provider.commands", body,
                              pika.BasicProperties(type="identity.provider.v1.Poison", delivery_mode=2))
        counts = []
        for _ in range(5):
            deadline = time.monotonic() + 10
            while True:
                method, properties, got = channel.basic_get("identity.provider.commands", auto_ack=False)
                if method is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert method is not None and got == body, "the command did not come back"
            counts.append((properties.headers or {}).get("x-delivery-count", 0))
            channel.basic_nack(method.delivery_tag, requeue=True)
    finally:
        connection.close()
    stack.provider_worker.start()
    deadline = time.monotonic() + 30
    dead = None
    while time.monotonic() < deadline:
        connection = pika.BlockingConnection(_amqp_parameters())
        try:
            method, _, dead = connection.channel().basic_get(DEAD_PROVIDER, auto_ack=True)
        finally:
            connection.close()
        if method is not None:
            break
        dead = None
        time.sleep(0.3)
    assert dead == body, f"the poisoned command never reached identity.provider.dead (x-delivery-count seen: {counts})"
    with open(stack.provider_worker.log_path, encoding="utf-8", errors="replace") as log:
        assert "command dead-lettered: delivery limit reached" in log.read()
    families = ops_metrics.scrape(stack.metrics_url(stack.provider_worker))
    assert ops_metrics.value(families, "identity_commands_dead_lettered_total",
                             type="identity.provider.v1.Poison") == 1


@pytest.fixture(scope="module")
def second_gateway(stack):
    port = _free_port()
    process = ServiceProcess("identity-gateway#2", [stack.binary("identity-gateway")],
                             stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                           IDENTITY_METRICS_PORT=str(_free_port())),
                             os.path.join(stack.log_dir, "gateway-2.log"))
    process.start()
    client = Client(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if client.get("/healthz").status == 200:
                break
        except Exception:
            pass
        time.sleep(0.2)
    yield client
    process.stop()


def test_node_loss_and_database_promotion_under_load(stack, second_gateway):
    vhost = os.environ["IDENTITY_AMQP_URL"].split(",")[0].rsplit("/", 1)[1]
    app = stack.create_app(name="cluster-failover")
    _events_queue(app["app_id"])
    load = Load([stack.client, second_gateway], app, THREADS)
    marks = {}
    started = time.monotonic()
    load.start()
    try:
        time.sleep(PHASE / 2)
        leader = cluster("leader", vhost, "identity.token.commands")
        assert leader in ("1", "2", "3"), f"identity.token.commands has no quorum leader: {leader!r}"
        on_leader = _connections_on(leader)
        marks["node_stop"] = time.monotonic()
        cluster("stop-node", leader)
        marks["node_stopped"] = time.monotonic()
        time.sleep(NODE_DOWN_SECONDS)
        marks["node_start"] = time.monotonic()
        cluster("start-node", leader)
        marks["node_started"] = time.monotonic()
        new_leader = cluster("leader", vhost, "identity.token.commands")
        time.sleep(PHASE)
        gateway_node = _gateway_node(stack.gateway)
        on_gateway_node = _connections_on(gateway_node)
        marks["gateway_node_stop"] = time.monotonic()
        cluster("stop-node", gateway_node)
        time.sleep(NODE_DOWN_SECONDS)
        cluster("start-node", gateway_node)
        time.sleep(PHASE)
        marks["pg_stop"] = time.monotonic()
        cluster("stop-pg", "1")
        marks["pg_stopped"] = time.monotonic()
        cluster("promote-pg", "2")
        marks["pg_promoted"] = time.monotonic()
        time.sleep(max(PHASE, RECOVERY_LIMIT_SECONDS))
    finally:
        load.stop()
    ended = time.monotonic()

    node_failed, node_statuses, node_recovery, node_seconds = _window(load, marks["node_stop"], marks["gateway_node_stop"])
    gw_failed, gw_statuses, gw_recovery, gw_seconds = _window(load, marks["gateway_node_stop"], marks["pg_stop"])
    pg_failed, pg_statuses, pg_recovery, pg_seconds = _window(load, marks["pg_stop"], ended + 60)
    before = [r for r in load.failures() if r[1] < marks["node_stop"]]
    late = [r for r in load.failures() if r[1] >= marks["pg_stop"] + RECOVERY_LIMIT_SECONDS]

    # Committed accounts (whatever their answer), each exactly once, each with its event.
    _wait_outbox_empty()
    app_id = db_tools.literal(app["app_id"])
    uids = {row[0] for row in db_tools.rows(f"SELECT uid FROM users WHERE app_id = {app_id}")}
    received = _drain_events(uids)
    lost = uids - received
    doubled_sessions = db_tools.rows(
        f"SELECT uid, count(*) FROM sessions WHERE app_id = {app_id} GROUP BY uid HAVING count(*) > 1")

    figures = {
        "requests": len(load.requests), "seconds": round(ended - started, 1),
        "requests_per_second": round(len(load.requests) / (ended - started), 1),
        "token_queue_leader_stopped": leader, "token_queue_leader_after_restart": new_leader,
        "node_stop_took_s": round(marks["node_stopped"] - marks["node_stop"], 2),
        "node_restart_took_s": round(marks["node_started"] - marks["node_start"], 2),
        "node_loss": {"failed_requests": node_failed, "statuses": node_statuses,
                      "recovered_after_s": round(node_recovery, 2), "failures_per_second": node_seconds,
                      "connections_cut": on_leader},
        "gateway_node_stopped": gateway_node,
        "gateway_node_loss": {"failed_requests": gw_failed, "statuses": gw_statuses,
                              "recovered_after_s": round(gw_recovery, 2), "failures_per_second": gw_seconds,
                              "connections_cut": on_gateway_node},
        "pg_stop_took_s": round(marks["pg_stopped"] - marks["pg_stop"], 2),
        "pg_promote_took_s": round(marks["pg_promoted"] - marks["pg_stopped"], 2),
        "db_failover": {"failed_requests": pg_failed, "statuses": pg_statuses,
                        "recovered_after_s": round(pg_recovery, 2), "failures_per_second": pg_seconds},
        "committed_sign_ups": len(uids), "answered_sign_ups": len(load.signed_up),
        "user_created_missing": len(lost),
        "ran_twice_visible": {"sign_up_409": len(load.conflicts), "refresh_401": len(load.reuse_refusals),
                              "accounts_with_two_sessions": len(doubled_sessions)},
    }
    with open(os.path.join(stack.log_dir, "cluster-failover.json"), "w") as out:
        json.dump(figures, out, indent=1)
    print("\ncluster failover:", json.dumps(figures))

    assert not before, f"failures before any fault: {before[:10]}"
    assert not late, f"failures {RECOVERY_LIMIT_SECONDS} s after the database fault: {late[:10]}"
    allowed = {"503", "ConnectionError", "RemoteDisconnected", "ConnectionResetError", "ConnectionRefusedError"}
    assert set(node_statuses) | set(gw_statuses) | set(pg_statuses) <= allowed, figures
    assert node_recovery < RECOVERY_LIMIT_SECONDS and gw_recovery < RECOVERY_LIMIT_SECONDS, figures
    assert len(load.signed_up) >= 20, figures
    assert set(load.signed_up) <= uids, "an answered sign-up is not in the database"
    assert not lost, f"{len(lost)} committed sign-ups without user.created: {sorted(lost)[:10]}"
    assert not load.conflicts and not load.reuse_refusals and not doubled_sessions, figures
