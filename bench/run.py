#!/usr/bin/env python3
"""make bench: the service's throughput beside this machine's own limits.

Starts the gateway and the workers (release builds) on their own database and vhost, makes an
app and users, drives load with wrk from a separate process over loopback, measures each
path's limit in the same run, prints one table and writes it as JSON under bench/results/.
`--smoke` runs everything for a second or so: make test runs it so the bench cannot rot.
"""
import argparse
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone

import hook_cost
import hook_fairness
import peers
import profile as cpu_profile
import scale
import soak
import summary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(ROOT, "bench")
# The bench's database; its pgbench and peer databases are named after it.
BENCH_DB = os.environ.get("BENCH_DB", "identity_bench")
PROCESSES = ["identity-token-worker", "identity-revocation-worker", "identity-provider-worker",
             "identity-mailer-worker", "identity-gateway"]


def amqp_env(env, name):
    """`env` with IDENTITY_AMQP_URL = the broker user of process `name` (identity-token-worker →
    IDENTITY_AMQP_URL_TOKEN_WORKER, scripts/broker-users.sh) on IDENTITY_AMQP_URL's vhost, when
    the harness gave one."""
    own = env.get("IDENTITY_AMQP_URL_" + name.removeprefix("identity-").upper().replace("-", "_"))
    if not own:
        return env
    return dict(env, IDENTITY_AMQP_URL=own.rsplit("/", 1)[0] + "/" + env["IDENTITY_AMQP_URL"].rsplit("/", 1)[1])


def sign_in_connections(cores):
    """Sign-in load: two connections per core (ours and the peers alike). The hash is most of a
    sign-in but not all of it (the rate-limit check, the bus, the account read, the session's
    commit, the signature): with one request per core the cores idle during the rest, and the
    figure measured that idle time rather than the throughput. The worker hashes at most one per
    core at once (IDENTITY_PASSWORD_HASH_CONCURRENCY), so the second request waits its turn."""
    return 2 * max(1, cores)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def sign_up(base, key, prefix="bench"):
    """A new password user of app `key` for a load: (email, password, the sign-up's data)."""
    email, password = "%s-%s@example.com" % (prefix, secrets.token_hex(4)), "bench-" + secrets.token_hex(8)
    status, body = http("POST", base + "/v1/auth/sign-up", {"email": email, "password": password}, {"X-App-Key": key})
    assert status == 201, body
    return email, password, body["data"]


def http_form(url, body, secret_key):
    request = urllib.request.Request(url, data=body.encode(), method="POST", headers={
        "Authorization": "Bearer " + secret_key, "Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read() or b"null")


def db_env(env, name):
    """`env` with process `name`'s own database login (README, "Database roles"):
    $<NAME>_DATABASE_URL (identity-gateway: IDENTITY_GATEWAY_DATABASE_URL; identity-owner for
    migrations), as scripts/bench.sh sets them, or else IDENTITY_DATABASE_URL."""
    variable = name.upper().replace("-", "_") + "_DATABASE_URL"
    return dict(env, IDENTITY_DATABASE_URL=env.get(variable) or env["IDENTITY_DATABASE_URL"])


class Stack:
    """The service's processes on a bench database and vhost."""

    def __init__(self, bin_dir, env, log_dir):
        self.bin_dir, self.env, self.log_dir, self.procs = bin_dir, env, log_dir, {}

    def ctl(self, *args, env=None):
        role = "identity-owner" if args[:1] == ("migrate",) else "identityctl"
        # A measurement (`bench ...`) is tried once more after a failure: the services are
        # shared, and a broker out of reach for a moment should not cost the whole run.
        for attempt in range(2 if args[:1] == ("bench",) else 1):
            out = subprocess.run([os.path.join(self.bin_dir, "identityctl"), *args],
                                 env=amqp_env(db_env(env or self.env, role), "identityctl"), capture_output=True, text=True)
            if out.returncode == 0:
                return out.stdout
            print("bench: identityctl %s failed: %s" % (" ".join(args), out.stderr.strip()), file=sys.stderr, flush=True)
            time.sleep(5)
        raise SystemExit("bench: identityctl %s failed" % " ".join(args))

    def start(self):
        for name in PROCESSES:
            log = open(os.path.join(self.log_dir, name + ".log"), "w")
            self.procs[name] = subprocess.Popen([os.path.join(self.bin_dir, name)],
                                                env=amqp_env(db_env(self.env, name), name),
                                                stdout=log, stderr=subprocess.STDOUT)
        base = self.env["IDENTITY_PUBLIC_BASE_URL"]
        for _ in range(200):
            try:
                if http("GET", base + "/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()  # nothing of a failed start stays running
        raise SystemExit("bench: the gateway never became ready (logs in %s)" % self.log_dir)

    def add_copy(self, name):
        """Another copy of worker `name` on the same queue (the scale measurement)."""
        copy = "%s#%d" % (name, 1 + sum(1 for n in self.procs if n.split("#")[0] == name))
        log = open(os.path.join(self.log_dir, copy.replace("#", "-") + ".log"), "w")
        self.procs[copy] = subprocess.Popen([os.path.join(self.bin_dir, name)], env=amqp_env(db_env(self.env, name), name),
                                            stdout=log, stderr=subprocess.STDOUT)
        time.sleep(2)  # connected and consuming before the load starts
        return copy

    def rss_kib(self):
        out = {}
        for name, proc in self.procs.items():
            try:
                with open("/proc/%d/status" % proc.pid) as status:
                    out[name] = int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))
            except (OSError, AttributeError):
                out[name] = None
        return out

    def stop(self):
        for proc in self.procs.values():
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def wrk(script, url, seconds, connections, threads, extra_env):
    env = dict(os.environ, BENCH_DIR=BENCH_DIR, BENCH_THREADS=str(threads), **extra_env)
    out = subprocess.run(["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % max(1, int(seconds)),
                          "--timeout", "10s", "-s", os.path.join(BENCH_DIR, "wrk", script), url],
                         env=env, check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("WRK_JSON "))
    return json.loads(line[len("WRK_JSON "):])


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids):
    """User + system CPU seconds of these processes so far (gone ones count 0)."""
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / TICKS


def broker_pids():
    """The private RabbitMQ's Erlang VM (scripts/services.sh starts one beam.smp): shared with
    anything else on the broker, so its share is exact only on a quiet machine."""
    out = subprocess.run(["pgrep", "-x", "beam.smp"], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def children_cpu_seconds():
    """CPU of this process's finished children so far: the load generator (wrk) of a run."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(stack, run_load):
    """`run_load()`'s wrk figure with the CPU it cost, in milliseconds per request: the service's
    processes, the PostgreSQL backends of the bench database, the broker and the load generator.
    Robust where req/s is not: on a machine shared with other work, throughput moves with the
    neighbours, CPU per request less. `ceiling_per_second` is what the machine's cores would
    carry if this path's whole cost (ours, PostgreSQL and the broker; not the load generator)
    were all they did: no ratio to a limit can pass what that allows."""
    db = stack.env["IDENTITY_DATABASE_URL"]
    backends = lambda: [int(p) for p in psql(db, "SELECT pid FROM pg_stat_activity WHERE datname = "
                                                  "current_database() AND pid <> pg_backend_pid()").split()]
    ours = {name: proc.pid for name, proc in stack.procs.items()}
    brokers = broker_pids()
    before_pg = {pid: cpu_seconds([pid]) for pid in backends()}
    before = {name: cpu_seconds([pid]) for name, pid in ours.items()}
    before_broker, before_load = cpu_seconds(brokers), children_cpu_seconds()
    figure = run_load()
    spent = {name: cpu_seconds([pid]) - before[name] for name, pid in ours.items()}
    postgres = sum(cpu_seconds([pid]) - before_pg.get(pid, 0) for pid in backends())
    broker, load = cpu_seconds(brokers) - before_broker, children_cpu_seconds() - before_load
    requests = max(1, figure.get("requests", 0))
    per_request = lambda seconds: round(1000 * seconds / requests, 3)
    cost = per_request(sum(spent.values()) + postgres + broker)
    figure["cpu_ms_per_request"] = {"service": per_request(sum(spent.values())), "postgres": per_request(postgres),
                                    "broker": per_request(broker), "load_generator": per_request(load),
                                    "by_process": {name.removeprefix("identity-"): per_request(value)
                                                   for name, value in spent.items() if value > 0},
                                    "ceiling_per_second": round(1000 * os.cpu_count() / cost, 1) if cost > 0 else None}
    return figure


def psql(url, sql):
    return subprocess.run(["psql", url, "-X", "-q", "-At", "-c", sql], check=True, capture_output=True,
                          text=True).stdout.strip()


def pgbench(admin_url, seconds, clients):
    """pgbench -N on the same PostgreSQL with the service's connection count: the limit for refresh."""
    database = BENCH_DB + "_pgbench"
    url = admin_url.rsplit("/", 1)[0] + "/" + database
    psql(admin_url, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % database)
    psql(admin_url, "CREATE DATABASE %s" % database)
    subprocess.run(["pgbench", "-q", "-i", "-s", "4", url], check=True, capture_output=True)
    out = subprocess.run(["pgbench", "-N", "-c", str(clients), "-j", "2", "-T", str(max(1, int(seconds))), url],
                         check=True, capture_output=True, text=True).stdout
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    latency = re.search(r"latency average = ([\d.]+) ms", out)
    return {"per_second": tps, "clients": clients, "latency_avg_ms": float(latency.group(1)) if latency else None}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="a second per figure: checks the bench still runs")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=None,
                        help="alternating rounds of every figure (ours, each peer, the limits); 3 by default, 1 with --smoke")
    parser.add_argument("--peers", dest="peers", action="store_true", default=None,
                        help="also measure the peer stacks (the default except with --smoke)")
    parser.add_argument("--no-peers", dest="peers", action="store_false")
    parser.add_argument("--no-hook-cost", action="store_true", help="skip the before_token hook runs")
    parser.add_argument("--no-hook-fairness", action="store_true",
                        help="skip app B's runs beside apps whose hooks answer late or never")
    parser.add_argument("--no-rate-limit-cost", action="store_true",
                        help="skip the limits-on/off runs (a quicker before/after comparison)")
    parser.add_argument("--scale", action="store_true",
                        help="after the table, seed users and live sessions through SQL (bench/seed.sql) and "
                             "measure the table again, with the per-session footprint and the growing tables' sizes")
    parser.add_argument("--scale-users", type=int, default=None, help="seeded users (1,000,000; 2,000 with --smoke)")
    parser.add_argument("--scale-sessions-per-user", type=int, default=2)
    parser.add_argument("--profile", action="store_true",
                        help="instead of the table: refresh and sign-in under perf, CPU per request by process "
                             "and library (bench/profile.py)")
    parser.add_argument("--soak", type=int, default=None, metavar="SECONDS",
                        help="instead of the table: refresh and sign-in together for SECONDS (600: ten minutes), "
                             "the tables that grow with traffic sampled each minute (bench/soak.py)")
    args = parser.parse_args()
    if args.profile or args.soak:
        args.peers = False
    with_peers = (not args.smoke) if args.peers is None else args.peers
    seconds = 1 if args.smoke else args.seconds
    limit_seconds = 1 if args.smoke else min(5, seconds)
    rounds = args.rounds or (1 if args.smoke else 3)
    if not shutil.which("wrk"):
        raise SystemExit("bench: wrk is missing (scripts/deps.sh installs it)")

    bin_dir = os.environ["IDENTITY_BIN_DIR"]
    admin_db = os.environ.get("BENCH_ADMIN_URL", os.environ["IDENTITY_DATABASE_URL"])
    cores = os.cpu_count() or 2
    machine = machine_facts(cores)
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    log_dir = os.path.join(os.environ.get("IDENTITY_RUN_DIR", "/tmp"),
                           "bench-logs" if BENCH_DB == "identity_bench" else "bench-logs-" + BENCH_DB)
    os.makedirs(log_dir, exist_ok=True)
    env = dict(os.environ, IDENTITY_HTTP_PORT=str(port), IDENTITY_HTTP_HOST="127.0.0.1", IDENTITY_PUBLIC_BASE_URL=base,
               IDENTITY_LOG_LEVEL="warning", IDENTITY_MAIL_DIR=os.path.join(log_dir, "mail"),
               # The before_token hook's receiver (hook_cost.py) listens on loopback over plain http.
               IDENTITY_ALLOW_PRIVATE_OUTBOUND="1", IDENTITY_ALLOW_INSECURE_OUTBOUND="1")
    # Production Argon2id cost (OWASP): sign-in is measured at the real price.
    for name in ("IDENTITY_ARGON2_MEMORY_KIB", "IDENTITY_ARGON2_ITERATIONS", "IDENTITY_ARGON2_PARALLELISM"):
        env.pop(name, None)
    stack = Stack(bin_dir, env, log_dir)
    stack.ctl("migrate")
    # The load comes from one address, so every limit the measured paths pass is raised far
    # out of reach: each request still pays for its checks (one store round trip), none is
    # refused. A twin app with every limit off measures what the checks cost.
    app = json.loads(stack.ctl("apps", "create", "--name", "bench"))
    stack.ctl("apps", "settings", app["app_id"], *limit_flags("1000000000/1s"))
    # Refresh once more on an app that signs with ES256: what the signature algorithm costs.
    es256 = json.loads(stack.ctl("apps", "create", "--name", "bench-es256", "--alg", "ES256"))
    stack.ctl("apps", "settings", es256["app_id"], *limit_flags("1000000000/1s"))
    unlimited = json.loads(stack.ctl("apps", "create", "--name", "bench-unlimited"))
    stack.ctl("apps", "settings", unlimited["app_id"], *limit_flags("off"),
              env=dict(env, IDENTITY_RATE_LIMIT_OFF_ALLOWED="1"))
    started_peers = []
    stack.start()
    try:
        if args.profile:
            profiles = profile_paths(stack, app, base, max(8, seconds), cores)
            extra = {"profile": profiles, "machine": machine}
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            write(os.path.join(ROOT, "bench", "results", "profile-%s.json" % stamp), [], extra, stamp, False)
            return
        if args.soak:
            extra = {"soak": soak.measure(stack, app, base, args.soak, cores, wrk, sign_up, refresh_tokens,
                                          sign_in_connections, psql), "machine": machine}
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            name = "soak-smoke-latest.json" if args.smoke else "soak-%s.json" % stamp
            write(os.path.join(ROOT, "bench", "results", name), [], extra, stamp, args.smoke)
            soak.check(extra["soak"])
            return
        if with_peers:
            # Set up once; measured in every round between ours and the limits.
            started_peers = peers.start_peers(os.environ["BENCH_PEERS_VENV"], admin_db, BENCH_DB, log_dir, free_port,
                                              psql)
        measure_peers = lambda: {one.peer.name: peers.measure_peer(one, wrk, seconds, 32 if not args.smoke else 4,
                                                                   sign_in_connections(cores))
                                 for one in started_peers}
        rows, extra = run(stack, app, app["app_key"], base, seconds, limit_seconds, cores, admin_db, args.smoke, es256,
                          rounds, measure_peers)
        if not args.no_rate_limit_cost:
            extra["rate_limit_cost"] = rate_limit_cost(stack, app, unlimited, base, seconds, cores, args.smoke)
        if not args.no_hook_cost:
            extra["before_token_hook_5ms"] = hook_cost.measure(stack, app, base, seconds, cores, args.smoke, sign_up, wrk,
                                                               refresh_tokens, limit_flags, sign_in_connections)
        if not args.no_hook_fairness:
            extra["hook_fairness"] = hook_fairness.measure(stack, app, base, seconds, cores, args.smoke, sign_up, wrk,
                                                           refresh_tokens, limit_flags, sign_in_connections, rounds)
        peers.stop_peers(started_peers)
        started_peers = []
        extra["machine"] = machine
        # Written before the scale pass, so a failed seeding costs only its own part.
        path = report(rows, extra, args.smoke)
        if args.scale:
            users = args.scale_users or (2000 if args.smoke else 1_000_000)
            extra["at_scale"] = scale.measure(stack, [app, es256], users, args.scale_sessions_per_user, psql, lambda: run(
                stack, app, app["app_key"], base, seconds, limit_seconds, cores, admin_db, args.smoke, es256, rounds,
                lambda: {}, worker_copies=False))
            scale.report(rows, extra["at_scale"])
            write(path, rows, extra)
            check_failures(extra["at_scale"]["rows"], {})
    finally:
        peers.stop_peers(started_peers)
        stack.stop()


def profile_paths(stack, app, base, seconds, cores):
    """bench/profile.py's loads: refresh at 32 connections and sign-in at the table's count."""
    key = app["app_key"]
    email, password, signed_up = sign_up(base, key, "profile")
    token = signed_up["access_token"]
    tokens_file = refresh_tokens(base, key, 34, os.path.join(stack.log_dir, "refresh-tokens-profile.txt"))
    loads = {
        "GET /v1/me": lambda: wrk("me.lua", base + "/v1/me", seconds, 32, 2, {"BENCH_APP_KEY": key, "BENCH_TOKEN": token}),
        "introspection": lambda: wrk("introspect.lua", base + "/v1/token/introspect", seconds, 32, 2,
                                     {"BENCH_SECRET_KEY": app["secret_key"], "BENCH_TOKEN": token}),
        "refresh RS256": lambda: wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds, 32, 2,
                                     {"BENCH_APP_KEY": key, "BENCH_TOKENS_FILE": tokens_file}),
        "sign-in": lambda: wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds, sign_in_connections(cores), 2,
                               {"BENCH_APP_KEY": key, "BENCH_EMAIL": email, "BENCH_PASSWORD": password}),
    }

    def names_by_pid():
        names = {proc.pid: name.removeprefix("identity-").replace("-", " ") for name, proc in stack.procs.items()}
        names.update({pid: "RabbitMQ" for pid in broker_pids()})
        postgres = subprocess.run(["pgrep", "-x", "postgres"], capture_output=True, text=True).stdout.split()
        names.update({int(pid): "PostgreSQL" for pid in postgres})
        return names
    return cpu_profile.run(loads, seconds, cores, stack.log_dir, names_by_pid)


def machine_facts(cores):
    """What the figures depend on: the cores, their model and how busy the machine was before
    the run (load average over 1, 5 and 15 minutes: 0 on a quiet machine)."""
    model = None
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), None)
    except OSError:
        pass
    return {"cores": cores, "cpu_model": model, "load_average_before": list(os.getloadavg())}


LIMITED_PATHS = ("sign_in_per_ip", "sign_in_per_identifier", "sign_up_per_ip", "guest_per_ip", "refresh_per_ip")


def limit_flags(value):
    return [arg for name in LIMITED_PATHS for arg in ("--rate-limit", "%s=%s" % (name, value))]


def refresh_tokens(base, key, count, path):
    """One fresh guest session per connection to start the refresh chains (guests: no hashing),
    and one more per wrk thread: wrk builds one request per thread before any is sent."""
    with open(path, "w") as out:
        for _ in range(count):
            status, body = http("POST", base + "/v1/auth/guest", {"secret": secrets.token_urlsafe(32)},
                                {"X-App-Key": key})
            assert status == 200, body
            out.write(body["data"]["refresh_token"] + "\n")
    return path


def rate_limit_cost(stack, limited, unlimited, base, seconds, cores, smoke):
    """Refresh and sign-in with the limits checked (limited) and with none (unlimited), one
    after the other, alternating twice so a drift of the machine shows rather than hides."""
    connections = 32 if not smoke else 4
    rounds = 1 if smoke else 2
    out = {"refresh": {"on": [], "off": []}, "sign_in": {"on": [], "off": []}}
    users = {}
    for label, app in (("on", limited), ("off", unlimited)):
        email, password, _ = sign_up(base, app["app_key"])
        users[label] = (email, password)
    for _ in range(rounds):
        for label, app in (("on", limited), ("off", unlimited)):
            tokens = refresh_tokens(base, app["app_key"], connections + 2,
                                    os.path.join(stack.log_dir, "refresh-tokens-%s.txt" % label))
            out["refresh"][label].append(wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds, connections, 2,
                                             {"BENCH_APP_KEY": app["app_key"], "BENCH_TOKENS_FILE": tokens})["per_second"])
            email, password = users[label]
            out["sign_in"][label].append(wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds, sign_in_connections(cores), 2,
                                             {"BENCH_APP_KEY": app["app_key"], "BENCH_EMAIL": email,
                                              "BENCH_PASSWORD": password})["per_second"])
    for path in out.values():
        on, off = sum(path["on"]) / len(path["on"]), sum(path["off"]) / len(path["off"])
        path["ratio_on_to_off"] = on / off if off else None
    return out


def run(stack, app, key, base, seconds, limit_seconds, cores, admin_db, smoke, es256, rounds, measure_peers,
        worker_copies=True):
    """`rounds` alternating rounds: in each, every path of ours, then each peer's (`measure_peers`),
    then every limit; so a drift of the machine lands on all of them alike. Rows carry every
    round's figure and their median and spread (summary.py)."""
    headers = {"X-App-Key": key}
    email, password, signed_up = sign_up(base, key)
    token = signed_up["access_token"]
    idle = stack.rss_kib()
    connections = 32 if not smoke else 4
    pool = int(os.environ.get("IDENTITY_WORKER_CONCURRENCY", str(max(2, cores * 2))))
    # Introspection answers 200 whether the token lives or not: check this one is active, so the
    # figure is that of the full path (signature, session and user), not of a quick "no".
    status, answer = http_form(base + "/v1/token/introspect", "token=" + token, app["secret_key"])
    assert status == 200 and answer.get("active") is True, answer
    ours, limits, peer_rounds = [], [], []
    loaded = None
    for number in range(rounds):
        figures = {}
        figures["me"] = measured(stack, lambda: wrk("me.lua", base + "/v1/me", seconds, connections, 2,
                                                    {"BENCH_APP_KEY": key, "BENCH_TOKEN": token}))
        figures["introspection"] = wrk("introspect.lua", base + "/v1/token/introspect", seconds, connections, 2,
                                       {"BENCH_SECRET_KEY": app["secret_key"], "BENCH_TOKEN": token})
        tokens_file = refresh_tokens(base, key, connections + 2,
                                     os.path.join(stack.log_dir, "refresh-tokens-%d.txt" % number))
        figures["refresh"] = measured(stack, lambda: wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds,
                                                         connections, 2,
                                                         {"BENCH_APP_KEY": key, "BENCH_TOKENS_FILE": tokens_file}))
        es256_tokens = refresh_tokens(base, es256["app_key"], connections + 2,
                                      os.path.join(stack.log_dir, "refresh-tokens-es256-%d.txt" % number))
        figures["refresh_es256"] = measured(stack, lambda: wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds,
                                                               connections, 2, {"BENCH_APP_KEY": es256["app_key"],
                                                                                "BENCH_TOKENS_FILE": es256_tokens}))
        loaded = stack.rss_kib()
        figures["sign_in"] = measured(stack, lambda: wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds,
                                                         sign_in_connections(cores), 2,
                                                         {"BENCH_APP_KEY": key, "BENCH_EMAIL": email,
                                                          "BENCH_PASSWORD": password}))
        figures["bus"] = json.loads(stack.ctl("bench", "bus", "--seconds", str(seconds), "--concurrency", "1"))
        ours.append(figures)
        peer_rounds.append(measure_peers())
        limits.append({
            "healthz": wrk("healthz.lua", base + "/healthz", limit_seconds, connections, 2, {}),
            "pgbench": pgbench(admin_db, limit_seconds, pool),
            "argon2": json.loads(stack.ctl("bench", "argon2", "--seconds", str(limit_seconds), "--threads", str(cores))),
            "broker": json.loads(stack.ctl("bench", "broker", "--seconds", str(limit_seconds)))})

    extra = {"rss_kib_idle": idle, "rss_kib_loaded": loaded, "cores": cores, "seconds": seconds, "rounds": rounds}
    if worker_copies:
        # A second token worker on the same queue, then refresh and sign-in again (sign-in with
        # as many connections as there are worker threads in all, so the copies have work).
        middle = summary.median_round([figures["refresh"] for figures in ours])
        copies = {"token_workers_1": {"refresh": ours[middle]["refresh"], "sign_in": ours[middle]["sign_in"]}}
        stack.add_copy("identity-token-worker")
        tokens_file = refresh_tokens(base, key, connections + 2, os.path.join(stack.log_dir, "refresh-tokens-2.txt"))
        copies["token_workers_2"] = {
            "refresh": measured(stack, lambda: wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds, connections,
                                                   2, {"BENCH_APP_KEY": key, "BENCH_TOKENS_FILE": tokens_file})),
            "sign_in": measured(stack, lambda: wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds,
                                                   2 * sign_in_connections(cores), 2,
                                                   {"BENCH_APP_KEY": key, "BENCH_EMAIL": email,
                                                    "BENCH_PASSWORD": password}))}
        extra["scale"] = copies

    db = stack.env["IDENTITY_DATABASE_URL"]
    live = int(psql(db, "SELECT count(*) FROM sessions WHERE ended_at IS NULL") or 0)
    session_bytes = int(psql(db, "SELECT pg_total_relation_size('sessions') + pg_total_relation_size('refresh_tokens')") or 0)
    refresh_rows = int(psql(db, "SELECT count(*) FROM refresh_tokens") or 0)
    extra.update({"live_sessions": live, "refresh_token_rows": refresh_rows, "session_bytes_total": session_bytes,
                  "bytes_per_live_session": round(session_bytes / live) if live else None})
    paths = [
        ("GET /v1/me", "me", "GET /healthz (same server)", "healthz", "me"),
        ("POST /v1/token/introspect (live access token)", "introspection", "GET /healthz (same server)", "healthz", None),
        ("POST /v1/auth/token/refresh", "refresh", "pgbench -N, %d clients" % pool, "pgbench", "refresh"),
        ("POST /v1/auth/token/refresh (ES256 app)", "refresh_es256", "pgbench -N, %d clients" % pool, "pgbench", None),
        ("POST /v1/auth/sign-in (Argon2id m=19MiB t=2)", "sign_in", "raw libsodium Argon2id, %d thr" % cores, "argon2",
         "sign_in"),
        ("bus round trip (no-op command)", "bus", "RabbitMQ publish+consume", "broker", None),
    ]
    rows = [summary.row(name, [r[ours_key] for r in ours], limit_name, [l[limit_key] for l in limits],
                        summary.peer_rounds(peer_rounds, peer_key) if peer_key else None)
            for name, ours_key, limit_name, limit_key, peer_key in paths]
    return rows, extra


def report(rows, extra, smoke):
    machine = extra["machine"]
    print("\nmachine: %d cores, %s; load average before the run %s" % (
        machine["cores"], machine["cpu_model"], " ".join("%.2f" % v for v in machine["load_average_before"])))
    summary.print_table(rows, "%d round(s) of %g s per figure" % (extra["rounds"], extra["seconds"]))
    print("\nCPU per request (ms, median round; service processes, PostgreSQL backends of the bench database,"
          "\nthe broker, the load generator) and the rate the cores would carry at that cost (ceiling):")
    for row in rows:
        cpu = row["figure"].get("cpu_ms_per_request")
        if cpu:
            print("  %-44s service %7.3f   postgres %7.3f   broker %6.3f   wrk %6.3f   ceiling %9s/s   (%s)" % (
                row["path"], cpu["service"], cpu["postgres"], cpu.get("broker", 0), cpu.get("load_generator", 0),
                "{:,.0f}".format(cpu["ceiling_per_second"]) if cpu.get("ceiling_per_second") else "?",
                ", ".join("%s %.3f" % item for item in cpu["by_process"].items())))
    copies = extra.get("scale")
    if copies:
        print("\ntoken worker copies (same run; sign-in with 2 connections per copy and core):")
        for label, figures in copies.items():
            cpu = figures["refresh"].get("cpu_ms_per_request") or {}
            print("  %-16s refresh %8.1f/s p99 %7.2f ms (cpu ms: service %.3f, postgres %.3f)   "
                  "sign-in %6.1f/s p99 %7.2f ms" % (
                      label, figures["refresh"]["per_second"], figures["refresh"]["p99_ms"], cpu.get("service", 0),
                      cpu.get("postgres", 0), figures["sign_in"]["per_second"], figures["sign_in"]["p99_ms"]))
    print("\nresident memory (KiB) idle:   %s" % extra["rss_kib_idle"])
    print("resident memory (KiB) loaded: %s" % extra["rss_kib_loaded"])
    print("PostgreSQL after the load: %s live sessions, %s refresh-token rows (spent ones are kept for theft "
          "detection), %s bytes per live session (sessions + refresh tokens, with indexes)"
          % (extra["live_sessions"], extra["refresh_token_rows"], extra["bytes_per_live_session"]))
    cost = extra.get("rate_limit_cost")
    if cost:
        print("\nrate limits checked vs off (req/s per run; one store round trip per checked request):")
        for path, runs in cost.items():
            print("  %-8s on %-24s off %-24s on/off %.3f" % (
                path, ", ".join("%.1f" % v for v in runs["on"]), ", ".join("%.1f" % v for v in runs["off"]),
                runs["ratio_on_to_off"] or 0))
    if extra.get("before_token_hook_5ms"):
        hook_cost.report(extra["before_token_hook_5ms"])
    if extra.get("hook_fairness"):
        hook_fairness.report(extra["hook_fairness"])
    summary.print_peers(rows)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    name = "smoke-latest.json" if smoke else "bench-%s.json" % stamp
    os.makedirs(os.path.join(BENCH_DIR, "results"), exist_ok=True)
    path = os.path.join(BENCH_DIR, "results", name)
    write(path, rows, extra, stamp, smoke)
    check_failures(rows, copies or {})
    return path


def write(path, rows, extra, stamp=None, smoke=None):
    """The run as JSON; called again with the scale pass added (same time and smoke flag)."""
    if stamp is None:
        with open(path) as previous:
            old = json.load(previous)
        stamp, smoke = old["time"], old["smoke"]
    with open(path, "w") as out:
        json.dump({"time": stamp, "smoke": smoke, "rows": rows, **extra}, out, indent=2)
    print("written: %s" % os.path.relpath(path, ROOT))


def check_failures(rows, copies):
    checked = [("%s round %d" % (r["path"], i), figure) for r in rows for i, figure in enumerate(r["rounds"])] + [
        ("%s %s" % (label, path), figure) for label, figures in copies.items() for path, figure in figures.items()]
    errors = {name: figure.get("non_2xx") or figure.get("failures") for name, figure in checked
              if figure.get("non_2xx") or figure.get("failures")}
    if errors:
        raise SystemExit("bench: some requests failed: %s" % errors)


if __name__ == "__main__":
    main()
