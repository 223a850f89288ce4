"""Graceful shutdown: SIGTERM to each kind of process, idle and under load.

Every process stopped here is one of this module's own (same database and broker as the shared
stack, which keeps running), so the other tests never see a process go away:

- a token worker competing with the shared one on the same queue is stopped in the middle of
  sign-ups, refreshes and reads: it exits 0 promptly having finished or handed back every
  command it had, so not one request is lost or answered 5xx (not even 503: the shared worker
  takes what it hands back);
- a gateway is stopped under the same load: it exits 0 within its grace, refuses new
  connections from the moment it stops listening, and every request that got a connection gets
  a whole answer (2xx/4xx, or 503 `auth/unavailable` for one whose worker had not answered by
  the grace's end: a token worker frozen with SIGSTOP holds a few commands to make sure some
  are still waiting then);
- the revocation, provider and mailer workers exit 0, idle and in the middle of their own kind
  of work, and that work is done by them or by the shared workers (every sign-out 204, every
  nonce 200, every mail delivered).

Each request goes on a connection of its own from a client address of its own
(`X-Forwarded-For`, the gateway trusting 127.0.0.1), so a refused connection, a cut answer and
an answer are told apart exactly.
"""

import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid

import asyncio

import pytest
from aiosmtpd.controller import Controller

import smtp_sink
from conftest import ServiceProcess, _free_port
from identity_client import PASSWORD, Client, random_client_ip, unique_email

LOAD_THREADS = 8
LOAD_BEFORE_STOP = 2.0     # seconds of load before the SIGTERM
LOAD_AFTER_STOP = 2.0      # seconds of load after it (workers only: the gateway refuses by then)
WORKER_STOPS_WITHIN = 5.0  # seconds from SIGTERM to exit, a worker under load
IDLE_STOPS_WITHIN = 3.0    # seconds from SIGTERM to exit, an idle worker
ANSWER_WITHIN = 20.0       # a request not answered by then is lost
# A gateway's grace when some requests are made to wait for a frozen worker: short, so the
# drain's deadline passes while they wait (their own timeout is far longer).
SHORT_GRACE_MS = 1500
LONG_REQUEST_TIMEOUT_MS = 10000
# Past the grace: the 503s are written, the daemon and the broker link stop.
GATEWAY_STOP_MARGIN = 3.0
# Every limit off for the apps made here: the load is one crowd of clients, not an attack.
RATE_LIMITS = ("sign_in_per_ip", "sign_in_per_identifier", "sign_up_per_ip", "guest_per_ip",
               "nonce_per_ip", "refresh_per_ip", "code_send_per_ip", "code_send_per_address",
               "code_resend_per_address", "code_verify_per_ip", "code_guess_per_address",
               "password_check_per_user")
REPLAYED = "redelivered command answered from its committed session"
# How long the slow SMTP sink takes to accept a recipient: the stopped mailer worker always has
# deliveries under way.
SLOW_RCPT_SECONDS = 0.5


# --- processes of this module's ---------------------------------------------------------------

def own_process(stack, binary, name, **env):
    """An executable of the stack's, with its own log (and its own HTTP port, unused by workers)."""
    port = env.pop("port", None) or _free_port()
    environment = dict(stack.env_for(binary), IDENTITY_HTTP_PORT=str(port), **env)
    log_path = os.path.join(stack.log_dir, f"{name}-{uuid.uuid4().hex[:6]}.log")
    process = ServiceProcess(name, [stack.binary(binary)], environment, log_path)
    process.port = port
    return process


def log_text(process):
    try:
        with open(process.log_path, "rb") as log:
            return log.read().decode("utf-8", "replace")
    except OSError:
        return ""


def wait_for_log(process, text, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log_text(process):
            return
        assert process.alive(), f"{process.name} exited ({process.proc.returncode}):\n{process.tail()}"
        time.sleep(0.05)
    raise AssertionError(f"{process.name}: no {text!r} in its log within {timeout:.0f} s:\n{process.tail()}")


def log_fields(process, message):
    """The fields of the last log line with msg=`message`, as a dict of strings (empty when
    there is no such line)."""
    lines = [line for line in log_text(process).splitlines() if f'msg="{message}"' in line
             or f"msg={message} " in line]
    if not lines:
        return {}
    return {key: value.strip('"') for key, value in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', lines[-1])}


def field(fields, name):
    """A number from `log_fields`; -1 when the line or the field is missing."""
    try:
        return int(fields.get(name, "-1"))
    except ValueError:
        return -1


def start_worker(stack, binary, name, **env):
    worker = own_process(stack, binary, name, **env)
    worker.start()
    # The command consumer is on the broker once its link says so.
    wait_for_log(worker, 'msg="bus connected"')
    return worker


def start_gateway(stack, name, **env):
    gateway = own_process(stack, "identity-gateway", name, **env)
    gateway.env["IDENTITY_PUBLIC_BASE_URL"] = f"http://127.0.0.1:{gateway.port}"
    gateway.start()
    client = Client(f"http://127.0.0.1:{gateway.port}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert gateway.alive(), f"{gateway.name} exited:\n{gateway.tail()}"
        try:
            if client.get("/readyz", timeout=2).status == 200:
                return gateway
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{gateway.name} not ready:\n{gateway.tail()}")


def terminate(process, within):
    """SIGTERM; returns (exit status, seconds to exit). SIGKILL, and status None, past `within`."""
    started = time.monotonic()
    process.stopped_on_purpose = True
    process.proc.send_signal(signal.SIGTERM)
    try:
        status = process.proc.wait(timeout=within)
    except subprocess.TimeoutExpired:
        process.proc.kill()
        process.proc.wait(timeout=5)
        status = None
    return status, time.monotonic() - started


def cleanup(*processes):
    for process in processes:
        if process is not None and process.alive():
            process.proc.send_signal(signal.SIGCONT)
            process.stop()


# --- requests and their outcomes ---------------------------------------------------------------

class Outcome:
    """One request: `result` is "answered" (a whole HTTP answer), "refused" (no connection was
    made), "lost" (a connection was made, the answer did not come whole), or "error" (the test's
    own code failed)."""

    def __init__(self, kind, result, started, ended, status=None, body=b"", error=None):
        self.kind, self.result, self.started, self.ended = kind, result, started, ended
        self.status, self.body, self.error = status, body, error

    @property
    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            return None

    @property
    def code(self):
        body = self.json
        return body.get("code") if isinstance(body, dict) else None

    def __repr__(self):
        detail = f"{self.status} {self.body[:200]!r}" if self.result == "answered" else repr(self.error)
        return f"<{self.kind} {self.result} {detail} at {self.started:.3f}-{self.ended:.3f}>"


def exchange(port, kind, method, path, body=None, headers=None):
    """One request on a connection of its own; the Outcome."""
    hdrs = {"X-Forwarded-For": random_client_ip(), **(headers or {})}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
        hdrs["Content-Length"] = str(len(data))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_WITHIN)
    started = time.monotonic()
    try:
        try:
            conn.connect()
        except ConnectionRefusedError as exc:
            return Outcome(kind, "refused", started, time.monotonic(), error=exc)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            payload = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            return Outcome(kind, "lost", started, time.monotonic(), error=exc)
        return Outcome(kind, "answered", started, time.monotonic(), status=resp.status, body=payload)
    finally:
        conn.close()


class Load:
    """`threads` threads sending requests to the gateway on `port` until `stop()`, each pausing
    `pause` seconds between two; a thread ends early at its first refused connection (the
    gateway is gone). `step(index, state)` makes one request and returns its Outcome."""

    def __init__(self, step, threads=LOAD_THREADS, pause=0.0):
        self.step = step
        self.pause = pause
        self.outcomes = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(threads)]

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=ANSWER_WITHIN + 5)
        assert not any(t.is_alive() for t in self._threads), "a load thread hung"

    def _run(self, index):
        state = {}
        while not self._stop.is_set():
            try:
                outcome = self.step(index, state)
            except Exception as exc:  # a fault of the test's own: reported, not a silent thread death
                now = time.monotonic()
                outcome = Outcome("load-thread", "error", now, now, error=exc)
                self._stop.wait(0.1)
            with self._lock:
                self.outcomes.append(outcome)
            if outcome.result == "refused":
                return
            if self.pause:
                self._stop.wait(self.pause)

    def count(self, predicate):
        return sum(1 for outcome in self.outcomes if predicate(outcome))

    def summary(self):
        kinds = sorted({o.kind for o in self.outcomes})
        parts = []
        for kind in kinds:
            mine = [o for o in self.outcomes if o.kind == kind]
            statuses = {}
            for o in mine:
                key = o.status if o.result == "answered" else o.result
                statuses[key] = statuses.get(key, 0) + 1
            parts.append(f"{kind}: " + ", ".join(f"{k}×{v}" for k, v in sorted(statuses.items(), key=str)))
        return "; ".join(parts)


def token_step(port, app):
    """Sign-up, refresh, read (GET /v1/me) in turn, each thread with a session of its own (a new
    sign-up after anything but a success)."""
    key = {"X-App-Key": app["app_key"]}

    def step(index, state):
        turn = state.get("turn", index) % 3
        state["turn"] = turn + 1
        session = state.get("session")
        if session is None or turn == 0:
            outcome = exchange(port, "sign-up", "POST", "/v1/auth/sign-up",
                               {"email": unique_email("stop"), "password": PASSWORD}, key)
        elif turn == 1:
            outcome = exchange(port, "refresh", "POST", "/v1/auth/token/refresh",
                               {"refresh_token": session["refresh_token"]}, key)
        else:
            outcome = exchange(port, "me", "GET", "/v1/me", None,
                               {**key, "Authorization": f"Bearer {session['access_token']}"})
        if outcome.result == "answered" and outcome.status in (200, 201) and outcome.kind != "me":
            state["session"] = outcome.json["data"]
        elif outcome.result != "answered" or outcome.status >= 300:
            state["session"] = None
        return outcome
    return step


class _SlowRecipients(smtp_sink._Handler):
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        await asyncio.sleep(SLOW_RCPT_SECONDS)
        return await super().handle_RCPT(server, session, envelope, address, rcpt_options)


class SlowSink(smtp_sink.SMTPSink):
    """An SMTP sink of this module's that takes SLOW_RCPT_SECONDS over each recipient. A mailer
    stopped mid-delivery without finishing it leaves the mail claimed ("being sent") in the
    delivery ledger, so the worker that gets it again drops it: the mail is lost."""

    def start(self):
        if self._controller is None:
            controller = Controller(_SlowRecipients(self), hostname=smtp_sink.HOST, port=self.port,
                                    server_hostname=smtp_sink.SERVER_HOSTNAME, ready_timeout=10)
            controller.start()
            self._controller = controller


@pytest.fixture
def unlimited_app(configured_app_factory):
    return configured_app_factory(rate_limits={name: "off" for name in RATE_LIMITS})


# --- the token worker ---------------------------------------------------------------------------

def test_a_token_worker_stopped_under_load_finishes_or_hands_back_every_command(stack, unlimited_app):
    """SIGTERM to one of two token workers mid-load: it exits 0 within WORKER_STOPS_WITHIN, with
    commands running when it was told to stop (its hashes are slow on purpose) finished by it,
    and nothing is lost, answered 5xx (503 included), or run twice."""
    gateway = worker = None
    replayed_before = log_text(stack.worker).count(REPLAYED)
    try:
        gateway = start_gateway(stack, "shutdown-gateway-a")
        # Password hashes of ~50 ms: commands are in flight at any moment of the load.
        worker = start_worker(stack, "identity-token-worker", "stopped-token-worker",
                              IDENTITY_ARGON2_MEMORY_KIB="32768", IDENTITY_ARGON2_ITERATIONS="2")
        load = Load(token_step(gateway.port, unlimited_app)).start()
        time.sleep(LOAD_BEFORE_STOP)
        stopped_at = time.monotonic()
        status, took = terminate(worker, within=WORKER_STOPS_WITHIN + 5)
        time.sleep(LOAD_AFTER_STOP)
        load.stop()
    finally:
        cleanup(worker, gateway)

    drained = log_fields(worker, "command consumer drained")
    replayed = log_text(stack.worker).count(REPLAYED) - replayed_before
    bad = [o for o in load.outcomes if o.result != "answered" or o.status not in (200, 201)]
    figures = (f"token worker exited {status} in {took:.2f} s; drain: {drained or 'no drain line'}; "
               f"replayed by the shared worker: {replayed}; requests: {load.summary()}")
    print("\n" + figures)
    assert status == 0, f"{figures}\n{worker.tail()}"
    assert took < WORKER_STOPS_WITHIN, figures
    assert not bad, f"{len(bad)} request(s) not answered 2xx: {bad[:10]}\n{figures}"
    during = load.count(lambda o: o.started <= stopped_at <= o.ended)
    after = load.count(lambda o: o.started > stopped_at)
    assert during >= 1 and after >= LOAD_THREADS, f"the load did not span the stop\n{figures}"
    # A command the stopped worker had committed was answered by it, not run again elsewhere
    # (the shared worker logs such a replay).
    assert replayed == 0, figures
    # The worker was part of the load and was caught with commands running; it finished them.
    assert field(drained, "handled") > 0, figures
    assert field(drained, "running_at_stop") >= 1, figures
    assert field(drained, "abandoned") == 0, figures
    assert field(drained, "finished") == field(drained, "running_at_stop"), figures


# --- the gateway ----------------------------------------------------------------------------------

@pytest.mark.parametrize("waiting", ["none-waiting", "some-waiting-for-a-frozen-worker"])
def test_b_gateway_stopped_under_load_answers_every_connection(stack, unlimited_app, waiting):
    """SIGTERM to a gateway mid-load: exit 0 within its grace (+ GATEWAY_STOP_MARGIN); refused
    connections from the moment it stops listening; an idle keep-alive connection closed; every
    request that got a connection answered whole: 2xx/4xx, or 503 auth/unavailable only for the
    requests a frozen worker held past the grace."""
    frozen = None
    env = {}
    if waiting != "none-waiting":
        env = {"IDENTITY_SHUTDOWN_GRACE_MS": str(SHORT_GRACE_MS),
               "IDENTITY_REQUEST_TIMEOUT_MS": str(LONG_REQUEST_TIMEOUT_MS)}
    gateway = start_gateway(stack, f"shutdown-gateway-b-{waiting}", **env)
    grace = (SHORT_GRACE_MS / 1000 if env else (stack.request_timeout_ms + 2000) / 1000)
    try:
        if waiting != "none-waiting":
            # Takes two commands (its prefetch) and never answers them while frozen.
            frozen = start_worker(stack, "identity-token-worker", "frozen-token-worker",
                                  IDENTITY_WORKER_CONCURRENCY="2")
            frozen.proc.send_signal(signal.SIGSTOP)
        keep_alive = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=5)
        keep_alive.request("GET", "/healthz", headers={"X-Forwarded-For": random_client_ip()})
        first = keep_alive.getresponse()
        first.read()
        assert first.status == 200 and not first.will_close

        load = Load(token_step(gateway.port, unlimited_app)).start()
        time.sleep(LOAD_BEFORE_STOP)
        stopped_at = time.monotonic()
        gateway.stopped_on_purpose = True
        gateway.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and gateway.alive() and 'msg="http draining"' not in log_text(gateway):
            time.sleep(0.01)
        quiesced_at = time.monotonic()
        # Stopped listening: a new connection is refused while the drain goes on.
        refused = exchange(gateway.port, "after-quiesce", "GET", "/healthz")
        alive_while_refusing = gateway.alive()
        # The idle keep-alive connection is closed by the gateway.
        keep_alive.sock.settimeout(2)
        try:
            idle_closed = keep_alive.sock.recv(1) == b""
        except OSError:
            idle_closed = True
        keep_alive.close()
        try:
            status = gateway.proc.wait(timeout=grace + GATEWAY_STOP_MARGIN + 10)
        except subprocess.TimeoutExpired:
            gateway.proc.kill()
            status = None
        took = time.monotonic() - stopped_at
        load.stop()
        if frozen is not None:
            # Thawed, it finishes (or hands back) the two commands it held, and stops.
            frozen.proc.send_signal(signal.SIGCONT)
            frozen_status, frozen_took = terminate(frozen, within=WORKER_STOPS_WITHIN + 5)
    finally:
        cleanup(frozen, gateway)

    stopped = log_fields(gateway, "http stopped")
    answered_503 = field(stopped, "answered_503_at_deadline")
    lost = [o for o in load.outcomes if o.result in ("lost", "error")]
    refusals = [o for o in load.outcomes if o.result == "refused"]
    answered = [o for o in load.outcomes if o.result == "answered"]
    unavailable = [o for o in answered if o.status == 503]
    wrong = [o for o in answered if not (200 <= o.status < 500 or (o.status == 503 and o.code == "auth/unavailable"))]
    in_flight = [o for o in answered if o.started <= stopped_at <= o.ended]
    figures = (f"gateway exited {status} in {took:.2f} s (grace {grace:.1f} s); "
               f"{len(answered)} answered ({len(unavailable)} × 503, {len(in_flight)} in flight at SIGTERM), "
               f"{len(refusals)} refused, {len(lost)} lost; drain: {stopped or 'no drain line'}; "
               f"requests: {load.summary()}")
    print("\n" + figures)
    assert status == 0, f"{figures}\n{gateway.tail()}"
    assert took < grace + GATEWAY_STOP_MARGIN, figures
    assert not lost, f"cut mid-request: {lost[:10]}\n{figures}"
    assert not wrong, f"answered 5xx other than 503 auth/unavailable: {wrong[:10]}\n{figures}"
    for outcome in unavailable:
        assert outcome.code == "auth/unavailable", outcome
    assert refused.result == "refused", f"a connection after quiesce was {refused!r}\n{figures}"
    assert alive_while_refusing or waiting == "none-waiting", figures
    assert idle_closed, f"the idle keep-alive connection stayed open\n{figures}"
    # The threads saw the gateway go: refused, and only after the SIGTERM. A connect begun just
    # before the signal may be refused once the listener is closed: what counts is when the
    # refusal came.
    assert refusals and all(o.ended >= stopped_at for o in refusals), figures
    assert in_flight, f"no request was in flight at the SIGTERM\n{figures}"
    if waiting == "none-waiting":
        assert not unavailable and answered_503 == 0, figures
        # Answered normally after the SIGTERM, not just before it.
        assert any(o.ended > quiesced_at for o in answered) or len(in_flight) >= 1, figures
    else:
        # The two commands the frozen worker held: their requests were still waiting at the
        # grace's end, and the drain answered them 503 itself.
        assert answered_503 >= 1 and len(unavailable) >= answered_503, figures
        assert frozen_status == 0 and frozen_took < WORKER_STOPS_WITHIN, \
            f"frozen worker exited {frozen_status} in {frozen_took:.2f} s\n{frozen.tail()}"


# --- the other workers ---------------------------------------------------------------------------

def revocation_step(port, app):
    """Sign up, then sign out (a revocation command), in turn."""
    key = {"X-App-Key": app["app_key"]}

    def step(index, state):
        session = state.pop("session", None)
        if session is None:
            outcome = exchange(port, "sign-up", "POST", "/v1/auth/sign-up",
                               {"email": unique_email("rev"), "password": PASSWORD}, key)
            if outcome.result == "answered" and outcome.status == 201:
                state["session"] = outcome.json["data"]
            return outcome
        return exchange(port, "sign-out", "POST", "/v1/auth/sign-out", None,
                        {**key, "Authorization": f"Bearer {session['access_token']}"})
    return step


def provider_step(port, app):
    key = {"X-App-Key": app["app_key"]}
    return lambda index, state: exchange(port, "nonce", "GET", "/v1/auth/nonce", None, key)


def mailer_step(port, app, addresses):
    key = {"X-App-Key": app["app_key"]}

    def step(index, state):
        address = unique_email("mail")
        outcome = exchange(port, "email-code", "POST", "/v1/auth/email-code/send", {"email": address}, key)
        if outcome.result == "answered" and outcome.status == 202:
            addresses.append(address)
        return outcome
    return step


WORKERS = {
    "revocation": ("identity-revocation-worker", {"sign-up": 201, "sign-out": 204}),
    "provider": ("identity-provider-worker", {"nonce": 200}),
    "mailer": ("identity-mailer-worker", {"email-code": 202}),
}


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_c_workers_exit_0_idle_and_under_load(stack, unlimited_app, kind):
    binary, expected = WORKERS[kind]
    idle = start_worker(stack, binary, f"idle-{kind}-worker")
    try:
        status, took = terminate(idle, within=IDLE_STOPS_WITHIN + 5)
    finally:
        cleanup(idle)
    assert status == 0 and took < IDLE_STOPS_WITHIN, \
        f"idle {kind} worker exited {status} in {took:.2f} s\n{idle.tail()}"
    idle_took = took

    gateway = worker = slow_sink = None
    addresses = []
    env = {}
    if kind == "mailer":
        slow_sink = SlowSink()
        slow_sink.start()
        env = slow_sink.env()
    try:
        gateway = start_gateway(stack, f"shutdown-gateway-c-{kind}")
        worker = start_worker(stack, binary, f"stopped-{kind}-worker", **env)
        step = {"revocation": lambda: revocation_step(gateway.port, unlimited_app),
                "provider": lambda: provider_step(gateway.port, unlimited_app),
                "mailer": lambda: mailer_step(gateway.port, unlimited_app, addresses)}[kind]()
        # A little load: some 100 requests a second.
        load = Load(step, threads=4, pause=0.04).start()
        time.sleep(LOAD_BEFORE_STOP)
        status, took = terminate(worker, within=WORKER_STOPS_WITHIN + 5)
        time.sleep(LOAD_AFTER_STOP)
        load.stop()
        undelivered = []
        if kind == "mailer":
            # Every mail asked for is delivered: by the stopped worker (to the slow sink) before
            # it went, or by the shared one (to the shared sink) from what it handed back.
            deadline = time.monotonic() + 20
            undelivered = list(addresses)
            while undelivered and time.monotonic() < deadline:
                undelivered = [a for a in undelivered if not stack.mail.messages_to(a)
                               and not slow_sink.messages_to(a)]
                time.sleep(0.2)
    finally:
        cleanup(worker, gateway)
        if slow_sink is not None:
            slow_sink.stop()

    drained = log_fields(worker, "command consumer drained")
    bad = [o for o in load.outcomes if o.result != "answered" or o.status != expected[o.kind]]
    figures = (f"{kind} worker: idle exit in {idle_took:.2f} s; under load exited {status} in {took:.2f} s, "
               f"drain: {drained or 'no drain line'}; requests: {load.summary()}"
               + (f"; mails: {len(addresses)} asked, {len(undelivered)} undelivered" if kind == "mailer" else ""))
    print("\n" + figures)
    assert status == 0 and took < WORKER_STOPS_WITHIN, f"{figures}\n{worker.tail()}"
    assert not bad, f"{len(bad)} request(s) not answered as expected: {bad[:10]}\n{figures}"
    assert field(drained, "handled") > 0, figures
    assert field(drained, "abandoned") == 0, figures
    if kind == "revocation":
        # A stopped revocation worker also joins its outbox relay.
        assert "outbox relay did not stop" not in log_text(worker), figures
    if kind == "mailer":
        assert addresses and slow_sink.messages(), figures
        assert not undelivered, f"{len(undelivered)} of {len(addresses)} mails never delivered\n{figures}"
