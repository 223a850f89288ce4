"""deploy/systemd's units booted under systemd (scripts/systemd-test.sh unpacks a Debian 12 root
filesystem with systemd and the runtime libraries, the release executables, the Swift runtime,
the migrations and the units, and runs these tests): this fixture writes /etc/identity as
deploy/README.md tells an operator to (common.env, and every secret, each kind's database and
broker URLs and the keys, as a root-only file under /etc/identity/secrets handed over by
LoadCredential=, none in an environment file), enables one copy of each process under identity.target, boots the
machine with systemd-nspawn on the host's network (so the units reach the harness's PostgreSQL and
RabbitMQ on loopback), and powers it off at the end.

Each copy's ports come from /etc/identity/<kind>-1.env (read last by its unit), free ports on the
host, so the test never collides with another stack on this machine.

Environment (scripts/systemd-test.sh sets it): IDENTITY_SYSTEMD_ROOT (the unpacked machine),
IDENTITY_SYSTEMD_PIDFILE (where the nspawn process id goes, for the script's own cleanup),
IDENTITY_BIN_DIR (the host's identityctl, to make keys and an app), IDENTITY_DATABASE_URL and
IDENTITY_<ROLE>_DATABASE_URL (scripts/services.sh db-roles), IDENTITY_AMQP_URL (the vhost) and the
broker users' URLs."""

import os
import secrets
import socket
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))

from broker_users import amqp_url  # noqa: E402
from identity_client import Client  # noqa: E402
from smtp_sink import SMTPSink  # noqa: E402

# The kinds as deploy/systemd names them: unit identity-<kind>@1.service, env file <kind>.env.
KINDS = ("gateway", "token-worker", "provider-worker", "mailer-worker", "revocation-worker",
         "webhook-worker")
UNITS = ("identity-migrate.service",) + tuple(f"identity-{kind}@1.service" for kind in KINDS)
BOOT_TIMEOUT = 90.0
STOP_TIMEOUT = 60.0


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _role_url(role):
    """identity-gateway → $IDENTITY_GATEWAY_DATABASE_URL (scripts/services.sh db-roles)."""
    variable = role.upper().replace("-", "_") + "_DATABASE_URL"
    url = os.environ.get(variable)
    if not url:
        pytest.fail(f"{variable} is not set (scripts/systemd-test.sh sets it)", pytrace=False)
    return url


def _write(path, text, mode):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as out:
        out.write(text)
    os.chmod(path, mode)


def _env_file(settings):
    # systemd's EnvironmentFile= syntax: double quotes keep spaces and angle brackets.
    return "".join(f'{name}="{value}"\n' for name, value in settings.items())


def _children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


class SystemdMachine:
    def __init__(self):
        self.root = os.environ["IDENTITY_SYSTEMD_ROOT"]
        self.pidfile = os.environ["IDENTITY_SYSTEMD_PIDFILE"]
        self.bin_dir = os.environ["IDENTITY_BIN_DIR"]
        self.master_key = secrets.token_hex(32)
        self.mail = SMTPSink()
        self.http_port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.http_port}"
        self.metrics_ports = {kind: _free_port() for kind in KINDS}
        self.client = Client(self.base_url)
        self.process = None
        self.init_pid = None
        self.log_path = self.root + ".console.log"

    # identityctl on the host, as identityctl's role and broker user.
    def ctl(self, *args, role="identityctl"):
        env = dict(os.environ, IDENTITY_MASTER_KEY=self.master_key, IDENTITY_DATABASE_URL=_role_url(role),
                   IDENTITY_AMQP_URL=amqp_url("identityctl"), IDENTITY_LOG_LEVEL="warning")
        done = subprocess.run([os.path.join(self.bin_dir, "identityctl"), *args], env=env, text=True,
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"identityctl {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
        return done.stdout

    def configure(self):
        etc = os.path.join(self.root, "etc/identity")
        common = {"IDENTITY_LOG_FORMAT": "json", "IDENTITY_LOG_LEVEL": "info",
                  "IDENTITY_METRICS_HOST": "127.0.0.1", "IDENTITY_HTTP_HOST": "127.0.0.1",
                  "IDENTITY_PUBLIC_BASE_URL": self.base_url, "IDENTITY_TRUSTED_PROXIES": "127.0.0.1/32",
                  "IDENTITY_ARGON2_MEMORY_KIB": "1024", "IDENTITY_ARGON2_ITERATIONS": "1",
                  "IDENTITY_MAIL_FROM": "Identity <no-reply@identity.example>", **self.mail.env()}
        _write(os.path.join(etc, "common.env"), _env_file(common), 0o640)
        secret_files = {"owner/database-url": _role_url("identity-owner"),
                        "master-key": self.master_key,
                        "mail-payload-key": self.ctl("keys", "mail-payload-key").strip(),
                        "push-credential-key": self.ctl("keys", "push-credential-key").strip(),
                        "webhook-secret-key": self.ctl("keys", "webhook-secret-key").strip()}
        for kind in KINDS:
            name = f"identity-{kind}"
            secret_files[f"{kind}/database-url"] = _role_url(name)
            secret_files[f"{kind}/amqp-url"] = amqp_url(name)
            own = {"IDENTITY_METRICS_PORT": self.metrics_ports[kind]}
            if kind == "gateway":
                own["IDENTITY_HTTP_PORT"] = self.http_port
            _write(os.path.join(etc, f"{kind}-1.env"), _env_file(own), 0o640)
        for name, value in secret_files.items():
            _write(os.path.join(etc, "secrets", name), value + "\n", 0o600)
        for folder, _, _ in os.walk(os.path.join(etc, "secrets")):
            os.chmod(folder, 0o700)
        self.secrets = set(secret_files.values())
        # What `systemctl enable identity-<kind>@1 ... identity.target` links.
        system = os.path.join(self.root, "etc/systemd/system")
        for target, unit, template in [("identity.target.wants", f"identity-{kind}@1.service", f"identity-{kind}@.service")
                                       for kind in KINDS] + [("multi-user.target.wants", "identity.target", "identity.target")]:
            os.makedirs(os.path.join(system, target), exist_ok=True)
            os.symlink(f"../{template}", os.path.join(system, target, unit))

    def boot(self):
        log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            ["systemd-nspawn", "--quiet", "--register=no", "--keep-unit", "--boot", "-D", self.root,
             "--machine", "identity-systemd-test"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        with open(self.pidfile, "w") as out:
            out.write(f"{self.process.pid}\n")
        deadline = time.monotonic() + BOOT_TIMEOUT
        while self.init_pid is None and time.monotonic() < deadline:
            assert self.process.poll() is None, f"systemd-nspawn exited {self.process.returncode}\n{self.console()}"
            self.init_pid = self._find_init()
            time.sleep(0.2)
        assert self.init_pid, f"no systemd in the machine after {BOOT_TIMEOUT}s\n{self.console()}"

    def _find_init(self):
        pending = [self.process.pid]
        while pending:
            pid = pending.pop()
            try:
                with open(f"/proc/{pid}/comm") as comm:
                    if comm.read().strip() == "systemd" and pid != self.process.pid:
                        return pid
            except OSError:
                continue
            pending.extend(_children(pid))
        return None

    def run(self, *command, timeout=30):
        """A command inside the machine (its mount, PID, IPC and UTS namespaces)."""
        return subprocess.run(["nsenter", "-t", str(self.init_pid), "-m", "-p", "-i", "-u", "--", *command],
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)

    def states(self):
        done = self.run("systemctl", "show", "--property=Id,ActiveState,SubState,NRestarts", *UNITS)
        states, current = {}, {}
        for line in done.stdout.splitlines() + [""]:
            if not line:
                if current:
                    restarted = " restarted" if current.get("NRestarts", "0") != "0" else ""
                    states[current["Id"]] = f"{current['ActiveState']}/{current['SubState']}{restarted}"
                current = {}
                continue
            key, _, value = line.partition("=")
            current[key] = value
        return states

    def wait_ready(self):
        import ops_metrics
        deadline = time.monotonic() + BOOT_TIMEOUT
        pending = set(KINDS)
        while pending and time.monotonic() < deadline:
            assert self.process.poll() is None, f"systemd-nspawn exited {self.process.returncode}\n{self.console()}"
            # A unit that failed, or that died and was restarted (Restart=on-failure), fails at once.
            failed = [unit for unit, state in self.states().items() if state.startswith("failed") or "restarted" in state]
            assert not failed, f"failed: {failed}\n{self.journal()}"
            for kind in sorted(pending):
                try:
                    status, _, _ = ops_metrics.fetch(self.metrics_url(kind, "/readyz"), timeout=2)
                except OSError:
                    continue
                if status == 200:
                    pending.discard(kind)
            time.sleep(0.3)
        assert not pending, f"not ready within {BOOT_TIMEOUT}s: {sorted(pending)}\n{self.journal()}"

    def metrics_url(self, kind, path="/metrics"):
        return f"http://127.0.0.1:{self.metrics_ports[kind]}{path}"

    def journal(self, lines=60):
        done = self.run("journalctl", "--no-pager", "-o", "cat", "-n", str(lines), "-u", "identity-*")
        return done.stdout + done.stderr

    def console(self):
        try:
            with open(self.log_path) as log:
                return log.read()[-4000:]
        except OSError:
            return ""

    def start(self):
        self.mail.start()
        self.configure()
        self.boot()
        self.wait_ready()

    def stop(self):
        """Powers the machine off (SIGTERM to systemd-nspawn halts its systemd) and waits."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.mail.stop()


@pytest.fixture(scope="session")
def machine():
    machine = SystemdMachine()
    try:
        machine.start()
        yield machine
    finally:
        machine.stop()
