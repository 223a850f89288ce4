"""Two releases of the service on one database and one vhost, as during a rolling upgrade:
the previous release's processes and this checkout's, started and stopped one by one, each
process with its own database role and broker user (as in Tests/e2e), delivering mail to the e2e
tests' SMTP sink. scripts/upgrade-test.sh builds the previous release, prepares the database and
the vhost, and runs these tests.

Environment (scripts/upgrade-test.sh sets it): IDENTITY_OLD_BIN_DIR and IDENTITY_NEW_BIN_DIR (the
two releases' executables), IDENTITY_OLD_PROCESSES and IDENTITY_NEW_PROCESSES (the long-running
executables each release has, space-separated), IDENTITY_OLD_COMMIT, IDENTITY_MIGRATIONS_DIR (this
checkout's migrations), IDENTITY_DATABASE_URL (the database), IDENTITY_<ROLE>_DATABASE_URL
(scripts/services.sh db-roles), IDENTITY_AMQP_URL (the vhost) and IDENTITY_AMQP_URL_<KIND> (the
broker users)."""

import hashlib
import hmac
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))

import ops_metrics  # noqa: E402
from broker_users import amqp_url  # noqa: E402
from identity_client import Client  # noqa: E402
from smtp_sink import SMTPSink  # noqa: E402

READY_TIMEOUT = 60.0
STOP_GRACE = 20.0
# The processes that hold a sub-key instead of the master key, and the sub-keys' labels (what
# `identityctl keys ...` prints: HKDF-SHA-256 of the master key, salt "identity-service").
SUB_KEYS = {
    "identity-mailer-worker": {"IDENTITY_MAIL_PAYLOAD_KEY": b"mail-payload-v1",
                               "IDENTITY_PUSH_CREDENTIAL_KEY": b"seal-push-credential-v1"},
    "identity-webhook-worker": {"IDENTITY_WEBHOOK_SECRET_KEY": b"seal-webhook-secret-v1"},
}


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _sub_key(master_key_hex, label):
    """HKDF-SHA-256 (RFC 5869) with one output block: 32 bytes."""
    prk = hmac.new(b"identity-service", bytes.fromhex(master_key_hex), hashlib.sha256).digest()
    return hmac.new(prk, label + b"\x01", hashlib.sha256).hexdigest()


def _required(variable):
    value = os.environ.get(variable)
    if not value:
        pytest.fail(f"{variable} is not set (scripts/upgrade-test.sh sets it)", pytrace=False)
    return value


class Release:
    def __init__(self, label, bin_dir, processes):
        self.label, self.bin_dir = label, bin_dir
        self.processes = processes.split()
        self.workers = [name for name in self.processes if name != "identity-gateway"]

    def binary(self, name):
        path = os.path.join(self.bin_dir, name)
        if not os.access(path, os.X_OK):
            pytest.fail(f"{path} is missing or not executable", pytrace=False)
        return path


class Process:
    """One executable of one release, its output in a log file of its own."""

    def __init__(self, release, name, env, log_dir):
        self.release, self.name, self.env = release, name, env
        self.log_path = os.path.join(log_dir, f"{release.label}-{name}.log")
        self.proc = None

    def __repr__(self):
        return f"{self.release.label} {self.name}"

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([self.release.binary(self.name)], env=self.env,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM, SIGKILL after STOP_GRACE seconds; the exit status."""
        if self.proc is None:
            return None
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        return self.proc.returncode

    def readyz(self):
        return f"http://127.0.0.1:{self.env['IDENTITY_METRICS_PORT']}/readyz"

    def tail(self, lines=30):
        try:
            with open(self.log_path, "rb") as log:
                return "\n".join(log.read().decode("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


class Upgrade:
    """Both releases' processes on one database and vhost; `running` is what runs now."""

    def __init__(self):
        self.old = Release("old", _required("IDENTITY_OLD_BIN_DIR"), _required("IDENTITY_OLD_PROCESSES"))
        self.new = Release("new", _required("IDENTITY_NEW_BIN_DIR"), _required("IDENTITY_NEW_PROCESSES"))
        self.old_commit = os.environ.get("IDENTITY_OLD_COMMIT", "the previous release")
        self.migrations_dir = _required("IDENTITY_MIGRATIONS_DIR")
        self.log_dir = tempfile.mkdtemp(prefix="identity-upgrade-")
        self.master_key = secrets.token_hex(32)
        self.mail = SMTPSink()
        self.ports = {"old": _free_port(), "new": _free_port()}
        # Both gateways stand for one service behind one address (the tokens' issuer).
        self.public_base_url = f"http://127.0.0.1:{self.ports['old']}"
        self.clients = {label: Client(f"http://127.0.0.1:{port}") for label, port in self.ports.items()}
        self.running = []

    def env_for(self, name, role=None, **extra):
        env = {key: value for key, value in os.environ.items() if not key.startswith("IDENTITY_")}
        env.update({
            "IDENTITY_HTTP_HOST": "127.0.0.1",
            "IDENTITY_PUBLIC_BASE_URL": self.public_base_url,
            "IDENTITY_ARGON2_MEMORY_KIB": "1024",
            "IDENTITY_ARGON2_ITERATIONS": "1",
            "IDENTITY_TRUSTED_PROXIES": "127.0.0.1/32",
            "IDENTITY_MAIL_FROM": "Identity <no-reply@identity.example>",
            "IDENTITY_DATABASE_URL": _required((role or name).upper().replace("-", "_") + "_DATABASE_URL"),
            "IDENTITY_AMQP_URL": amqp_url(name),
            **self.mail.env(),
        })
        # Least privilege, as deployed: the gateway never holds the master key, the mailer and
        # the webhook worker hold only their sub-keys.
        if name == "identity-gateway" or name in SUB_KEYS:
            for variable, label in SUB_KEYS.get(name, {}).items():
                env[variable] = _sub_key(self.master_key, label)
        else:
            env["IDENTITY_MASTER_KEY"] = self.master_key
        env.update(extra)
        return env

    def ctl(self, release, *args, role="identityctl"):
        env = self.env_for("identityctl", role=role, IDENTITY_MIGRATIONS_DIR=self.migrations_dir)
        done = subprocess.run([release.binary("identityctl"), *args], env=env, capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, \
            f"{release.label} identityctl {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def start(self, release, *names):
        """Starts these executables of `release` beside whatever runs, and waits for each one's
        /readyz."""
        started = []
        for name in names:
            extra = {"IDENTITY_METRICS_PORT": str(_free_port()),
                     "IDENTITY_HTTP_PORT": str(self.ports[release.label] if name == "identity-gateway"
                                               else _free_port())}
            process = Process(release, name, self.env_for(name, **extra), self.log_dir)
            process.start()
            self.running.append(process)
            started.append(process)
        self.wait_ready(started)

    def stop(self, release, *names):
        for process in [p for p in self.running if p.release is release and p.name in names]:
            status = process.stop()
            self.running.remove(process)
            # 0: drained and stopped on SIGTERM, as a rolling upgrade stops it.
            assert status == 0, f"{process} stopped with status {status}\n{process.tail()}"

    def wait_ready(self, processes):
        deadline = time.monotonic() + READY_TIMEOUT
        pending = list(processes)
        while pending and time.monotonic() < deadline:
            for process in list(pending):
                if not process.alive():
                    raise AssertionError(f"{process} exited ({process.proc.returncode}) during start-up\n"
                                         f"{self.logs()}")
                try:
                    status, _, _ = ops_metrics.fetch(process.readyz(), timeout=2)
                except OSError:
                    continue
                if status == 200:
                    pending.remove(process)
            time.sleep(0.3)
        assert not pending, f"not ready within {READY_TIMEOUT}s: {pending}\n{self.logs()}"

    def dead(self):
        return [process for process in self.running if not process.alive()]

    def logs(self, lines=30):
        return "\n".join(f"--- {p} [{'running' if p.alive() else p.proc.returncode}] ---\n{p.tail(lines)}"
                         for p in self.running)

    def stop_all(self):
        for process in reversed(self.running):
            process.stop()
        self.running.clear()
        self.mail.stop()


@pytest.fixture(scope="session")
def upgrade():
    stack = Upgrade()
    stack.mail.start()
    try:
        yield stack
    finally:
        stack.stop_all()
        shutil.rmtree(stack.log_dir, ignore_errors=True)
