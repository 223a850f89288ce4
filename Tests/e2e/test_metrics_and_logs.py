"""What operators' tools read from every process: /metrics that `promtool check metrics` finds
clean, with the standard process_* metrics, the build, the database pool, the broker links and
(the gateway) open HTTP connections, each process exporting its own families only; and JSON
logs (IDENTITY_LOG_FORMAT=json) where every line is one JSON object from the first on, with
numbers and booleans typed, and no secret in any line."""

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

import ops_metrics
from conftest import ServiceProcess
from identity_client import Client
from ops_metrics import scrape, value

WORKERS = ("identity-token-worker", "identity-revocation-worker", "identity-provider-worker",
           "identity-mailer-worker")
PROCESS_FAMILIES = ("process_cpu_seconds", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                    "process_open_fds", "process_max_fds", "process_start_time_seconds")
GATEWAY_ONLY = ("identity_http_requests", "identity_http_request_duration_seconds", "identity_http_open_connections",
                "identity_http_max_connections", "identity_bus_round_trip_seconds")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _text(url):
    status, _, body = ops_metrics.fetch(url)
    assert status == 200, (url, status)
    return body


def _promtool():
    path = shutil.which("promtool")
    assert path, "promtool is missing (Debian's prometheus package; scripts/deps.sh installs it)"
    return path


def test_every_process_metrics_pass_promtool(stack, client, app):
    # Traffic first, so histograms and labelled series are there to be checked too.
    assert client.sign_up(app).status == 201
    for process in stack.processes:
        text = _text(stack.metrics_url(process))
        checked = subprocess.run([_promtool(), "check", "metrics"], input=text, capture_output=True,
                                 text=True, timeout=30)
        assert (checked.returncode, checked.stdout + checked.stderr) == (0, ""), process.name


def test_every_process_exports_process_build_pool_and_broker_metrics(stack):
    for process in stack.processes:
        families = scrape(stack.metrics_url(process))
        missing = [name for name in PROCESS_FAMILIES if name not in families]
        assert not missing, f"{process.name} lacks {missing}"
        name = process.name
        open_fds = value(families, "process_open_fds")
        assert 0 < open_fds <= value(families, "process_max_fds"), name
        assert value(families, "process_resident_memory_bytes") > 1_000_000, name
        assert value(families, "process_virtual_memory_bytes") >= value(families, "process_resident_memory_bytes")
        assert value(families, "process_cpu_seconds_total") > 0, name
        started = value(families, "process_start_time_seconds")
        assert time.time() - 86_400 < started <= time.time() + 1, name
        # The kernel's start (exec) and the process's own record of it agree to a few seconds.
        assert abs(started - value(families, "identity_process_start_time_seconds", program=name)) < 30, name
        build = ops_metrics.samples(families, "identity_build_info")
        assert [s.value for s in build if s.labels.get("program") == name] == [1.0], (name, build)
        assert all(s.labels.get("version") for s in build), build
        size = value(families, "identity_db_pool_connections_max")
        assert size >= 1, name
        in_use, idle = (value(families, "identity_db_pool_connections_in_use"),
                        value(families, "identity_db_pool_connections_idle"))
        assert 0 <= in_use <= size and 0 <= idle <= size and in_use + idle <= size, (name, in_use, idle, size)
        links = ops_metrics.samples(families, "identity_broker_connected")
        assert links and all(s.value == 1 for s in links), (name, [(s.labels, s.value) for s in links])
    # The revocation worker's outbox relay is a link of its own.
    revocation = scrape(stack.metrics_url(stack.revocation))
    assert value(revocation, "identity_broker_connected", link="outbox-relay") == 1


def test_the_gateway_counts_its_open_http_connections(stack):
    limit = value(scrape(stack.metrics_url(stack.gateway)), "identity_http_max_connections")
    assert limit >= 1
    before = value(scrape(stack.metrics_url(stack.gateway)), "identity_http_open_connections")
    held = [socket.create_connection(("127.0.0.1", stack.port), timeout=5) for _ in range(3)]
    try:
        deadline = time.monotonic() + 5
        while True:
            now = value(scrape(stack.metrics_url(stack.gateway)), "identity_http_open_connections")
            if now >= before + 3 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert now >= before + 3, (before, now)
        assert now <= limit
    finally:
        for sock in held:
            sock.close()


def test_each_process_exports_its_own_families_only(stack):
    gateway = scrape(stack.metrics_url(stack.gateway))
    assert all(name in gateway for name in GATEWAY_ONLY), sorted(gateway)
    assert "identity_commands" not in gateway and "identity_outbox_relayed" not in gateway
    for process in (stack.worker, stack.revocation, stack.provider_worker, stack.mailer_worker):
        families = scrape(stack.metrics_url(process))
        leaked = [name for name in families if name.startswith("identity_http_") or name in GATEWAY_ONLY]
        assert not leaked, f"{process.name} exports the gateway's {leaked}"
    # Each worker's own business, and not another's.
    token, mailer = scrape(stack.metrics_url(stack.worker)), scrape(stack.metrics_url(stack.mailer_worker))
    revocation = scrape(stack.metrics_url(stack.revocation))
    assert "identity_sign_ins" in token and "identity_deliveries" not in token
    assert "identity_deliveries" in mailer and "identity_sign_ins" not in mailer
    assert "identity_outbox_relayed" in revocation and "identity_outbox_relayed" not in mailer


# --- JSON logs -------------------------------------------------------------------------------


def _log_lines(path):
    with open(path, encoding="utf-8", errors="replace") as log:
        return [line for line in log.read().splitlines() if line.strip() and not line.startswith("=== start")]


def _wait_ready(url, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} not ready within {timeout} s")


@pytest.fixture
def json_logging_processes(stack):
    """One more copy of every process, logging JSON at debug level into files of their own
    (they share the stack's database and queues, as extra replicas would). The mailer is given
    IDENTITY_MASTER_KEY instead of its payload key: it then warns while reading its
    configuration, before anything else is logged."""
    logging = {"IDENTITY_LOG_FORMAT": "json", "IDENTITY_LOG_LEVEL": "debug"}
    directory = os.path.join(stack.log_dir, f"json-logs-{int(time.time() * 1000)}")
    os.makedirs(directory)
    processes = []
    for kind in WORKERS:
        env = stack.env_for(kind, IDENTITY_HTTP_PORT=str(_free_port()), IDENTITY_METRICS_PORT=str(_free_port()),
                            **logging)
        if kind == "identity-mailer-worker":
            env.pop("IDENTITY_MAIL_PAYLOAD_KEY", None)
            env["IDENTITY_MASTER_KEY"] = stack.env["IDENTITY_MASTER_KEY"]
        processes.append(ServiceProcess(kind, [stack.binary(kind)], env, os.path.join(directory, f"{kind}.log")))
    gateway_port = _free_port()
    env = stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(gateway_port),
                        IDENTITY_METRICS_PORT=str(_free_port()), **logging)
    processes.append(ServiceProcess("identity-gateway", [stack.binary("identity-gateway")], env,
                                    os.path.join(directory, "identity-gateway.log")))
    try:
        for process in processes:
            process.start()
        for process in processes:
            _wait_ready(stack.metrics_url(process, "/readyz"))
        yield processes, Client(f"http://127.0.0.1:{gateway_port}")
    finally:
        for process in processes:
            process.stop()


def test_json_logs_are_json_from_the_first_line_with_typed_values(stack, app, json_logging_processes):
    processes, client = json_logging_processes
    assert client.sign_up(app).status == 201
    assert client.get("/v1/no-such-route").status == 404
    for process in processes:
        assert process.stop() == 0, process.name
    secrets = [stack.env["IDENTITY_MASTER_KEY"]] + [
        p.env[k] for p in processes for k in ("IDENTITY_MAIL_PAYLOAD_KEY", "IDENTITY_PUSH_CREDENTIAL_KEY") if k in p.env]
    entries = {}
    for process in processes:
        lines = _log_lines(process.log_path)
        assert lines, process.name
        parsed = []
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                pytest.fail(f"{process.name}: not a JSON log line: {line!r}")
            assert isinstance(entry, dict) and {"time", "level", "msg"} <= set(entry), (process.name, line)
            assert not any(secret in line for secret in secrets), (process.name, line)
            parsed.append(entry)
        entries[process.name] = parsed
    # The mailer's warning about its configuration is its first line, and JSON like the rest.
    first = entries["identity-mailer-worker"][0]
    assert first["level"] == "warning" and "IDENTITY_MASTER_KEY" in first["msg"], first
    # Numbers are JSON numbers: the access log's status and duration, a process's settings.
    answered = [e for e in entries["identity-gateway"] if e["msg"] == "request answered"]
    statuses = {e["route"]: e["status"] for e in answered}
    assert statuses.get("/v1/auth/sign-up") == 201 and statuses.get("unmatched") == 404, statuses
    assert all(type(e["status"]) is int and type(e["took_ms"]) is int for e in answered), answered
    for name, process_entries in entries.items():
        started = [e for e in process_entries if e["msg"] == f"{name} started"]
        assert started, (name, [e["msg"] for e in process_entries])
        if name == "identity-gateway":
            assert type(started[0]["port"]) is int, started
        else:
            assert type(started[0]["concurrency"]) is int, started
        stopped = [e for e in process_entries if e["msg"] == f"{name} stopped"]
        assert stopped and type(stopped[0]["took_ms"]) is int, (name, stopped)


def test_an_invalid_configuration_is_a_json_line_in_json_mode(stack):
    env = stack.env_for("identity-token-worker", IDENTITY_LOG_FORMAT="json", IDENTITY_WORKER_CONCURRENCY="0",
                        IDENTITY_METRICS_PORT=str(_free_port()))
    done = subprocess.run([stack.binary("identity-token-worker")], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    entry = json.loads(lines[0])
    assert entry["level"] == "error" and "invalid configuration" in entry["msg"], entry
    assert "IDENTITY_WORKER_CONCURRENCY=0" in entry["problems"], entry
