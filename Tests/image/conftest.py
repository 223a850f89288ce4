"""The stack started from the image (scripts/image.sh builds it; scripts/image-test.sh prepares a
database and a vhost of its own and runs these tests): the gateway and every worker as podman
containers on the host network, each with a read-only root filesystem, as user 10001, no
capabilities, its own database role and broker user, against the harness's PostgreSQL and
RabbitMQ, delivering mail to the e2e tests' SMTP sink. The master key is a fresh random one; it,
the sub-keys and the database and broker URLs are mounted as files (IDENTITY_*_FILE), never in an
environment.

Environment (scripts/image-test.sh sets it): IDENTITY_IMAGE, IDENTITY_DATABASE_URL (the database),
IDENTITY_<ROLE>_DATABASE_URL (scripts/services.sh db-roles), IDENTITY_AMQP_URL (the vhost) and
IDENTITY_AMQP_URL_<KIND> (the broker users), CONTAINERS_CONF (podman's settings for this machine), IDENTITY_IMAGE_TEST_RUN (the label value
of this run's containers, so the script can remove them too)."""

import os
import secrets
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))

from broker_users import amqp_url  # noqa: E402
from identity_client import Client  # noqa: E402
from smtp_sink import SMTPSink  # noqa: E402

WORKERS = ("identity-token-worker", "identity-revocation-worker", "identity-provider-worker",
           "identity-mailer-worker", "identity-webhook-worker")
PROCESSES = WORKERS + ("identity-gateway",)
READY_TIMEOUT = 60.0
UID = "10001"


def _free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _role_url(name):
    """identity-gateway → $IDENTITY_GATEWAY_DATABASE_URL (scripts/services.sh db-roles)."""
    variable = name.upper().replace("-", "_") + "_DATABASE_URL"
    url = os.environ.get(variable)
    if not url:
        pytest.fail(f"{variable} is not set (scripts/image-test.sh sets it)", pytrace=False)
    return url


def podman(*args, timeout=120, check=True):
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


class ImageStack:
    def __init__(self):
        self.image = os.environ.get("IDENTITY_IMAGE", "localhost/identity:latest")
        self.run_id = os.environ.get("IDENTITY_IMAGE_TEST_RUN") or uuid.uuid4().hex[:10]
        self.label = f"identity-image-test={self.run_id}"
        self.dir = tempfile.mkdtemp(prefix="identity-image-")
        os.chmod(self.dir, 0o755)
        # A fresh master key, readable by the containers' user only through the mount.
        self.master_key_file = os.path.join(self.dir, "master-key")
        master_key = secrets.token_hex(32)
        with open(self.master_key_file, "w") as key:
            key.write(master_key + "\n")
        os.chmod(self.master_key_file, 0o444)
        # Every secret value handed to a container, to look for in their environments.
        self.secrets = {master_key}
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.mail = SMTPSink()
        self.metrics_ports = {name: _free_port() for name in PROCESSES}
        self.containers = {}
        self.client = Client(self.base_url)

    def common_env(self):
        return {
            "IDENTITY_HTTP_HOST": "127.0.0.1",
            "IDENTITY_PUBLIC_BASE_URL": self.base_url,
            "IDENTITY_ARGON2_MEMORY_KIB": "1024",
            "IDENTITY_ARGON2_ITERATIONS": "1",
            "IDENTITY_TRUSTED_PROXIES": "127.0.0.1/32",
            "IDENTITY_MAIL_FROM": "Identity <no-reply@identity.example>",
            **self.mail.env(),
        }

    def env_for(self, name, role=None, **extra):
        env = dict(self.common_env(), IDENTITY_DATABASE_URL=_role_url(role or name),
                   IDENTITY_AMQP_URL=amqp_url(name if name != "identity-owner" else "identityctl"))
        env.update(extra)
        return env

    # Handed to the containers as files (IDENTITY_<NAME>_FILE), as deploy/kubernetes mounts them.
    SECRETS = ("IDENTITY_DATABASE_URL", "IDENTITY_AMQP_URL", "IDENTITY_MAIL_PAYLOAD_KEY",
               "IDENTITY_PUSH_CREDENTIAL_KEY", "IDENTITY_WEBHOOK_SECRET_KEY")

    def run_args(self, env, key=True):
        """podman run arguments: the settings in an env file, the secrets as files in a read-only
        mount (the master key too, when `key`)."""
        own = tempfile.mkdtemp(dir=self.dir)
        os.chmod(own, 0o755)
        settings = {}
        for name, value in env.items():
            if name not in self.SECRETS:
                settings[name] = value
                continue
            self.secrets.add(value)
            path = os.path.join(own, name.lower())
            with open(path, "w") as out:
                out.write(value + "\n")
            os.chmod(path, 0o444)
            settings[name + "_FILE"] = f"/run/secrets/identity/{name.lower()}"
        if key:
            os.link(self.master_key_file, os.path.join(own, "identity_master_key"))
            settings["IDENTITY_MASTER_KEY_FILE"] = "/run/secrets/identity/identity_master_key"
        env_file = os.path.join(own, "env")
        with open(env_file, "w") as out:
            out.writelines(f"{k}={v}\n" for k, v in settings.items())
        return ["--network", "host", "--read-only", "--user", f"{UID}:{UID}", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges", "--label", self.label, "--env-file", env_file,
                "-v", f"{own}:/run/secrets/identity:ro"]

    def ctl(self, *args, role="identityctl"):
        env = self.env_for("identityctl", role=role)
        done = podman("run", "--rm", *self.run_args(env), self.image, "/usr/local/bin/identityctl",
                      *args, check=False)
        assert done.returncode == 0, f"identityctl {' '.join(args)} in the image exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def start(self):
        self.mail.start()
        self.ctl("migrate", role="identity-owner")
        mailer_keys = {"IDENTITY_MAIL_PAYLOAD_KEY": self.ctl("keys", "mail-payload-key").strip(),
                       "IDENTITY_PUSH_CREDENTIAL_KEY": self.ctl("keys", "push-credential-key").strip()}
        webhook_key = {"IDENTITY_WEBHOOK_SECRET_KEY": self.ctl("keys", "webhook-secret-key").strip()}
        for name in PROCESSES:
            extra = {"IDENTITY_METRICS_PORT": str(self.metrics_ports[name]),
                     "IDENTITY_HTTP_PORT": str(self.port if name == "identity-gateway" else _free_port())}
            # The gateway never holds the master key; the mailer and the webhook worker hold their
            # sub-keys instead.
            key = name not in ("identity-gateway", "identity-mailer-worker", "identity-webhook-worker")
            if name == "identity-mailer-worker":
                extra.update(mailer_keys)
            if name == "identity-webhook-worker":
                extra.update(webhook_key)
            container = f"identity-image-{self.run_id}-{name}"
            podman("run", "-d", "--name", container, *self.run_args(self.env_for(name, **extra), key=key),
                   self.image, f"/usr/local/bin/{name}")
            self.containers[name] = container
        self.wait_ready()

    def running(self, name):
        done = podman("inspect", "-f", "{{.State.Running}}", self.containers[name], check=False)
        return done.stdout.strip() == "true"

    def wait_ready(self):
        import ops_metrics
        deadline = time.monotonic() + READY_TIMEOUT
        pending = set(PROCESSES)
        while pending and time.monotonic() < deadline:
            for name in sorted(pending):
                if not self.running(name):
                    raise AssertionError(f"{name} exited during start-up\n{self.logs()}")
                try:
                    status, _, _ = ops_metrics.fetch(self.metrics_url(name, "/readyz"), timeout=2)
                except OSError:
                    continue
                if status == 200:
                    pending.discard(name)
            time.sleep(0.3)
        assert not pending, f"not ready within {READY_TIMEOUT}s: {sorted(pending)}\n{self.logs()}"

    def metrics_url(self, name, path="/metrics"):
        return f"http://127.0.0.1:{self.metrics_ports[name]}{path}"

    def logs(self, lines=40):
        parts = []
        for name, container in self.containers.items():
            done = podman("logs", "--tail", str(lines), container, check=False)
            parts.append(f"--- {name} ---\n{done.stdout}{done.stderr}")
        return "\n".join(parts)

    def stop(self):
        """Removes every container of this run, running or not (also on failure)."""
        ids = podman("ps", "-aq", "--filter", f"label={self.label}", check=False).stdout.split()
        if ids:
            podman("rm", "-f", "-t", "10", *ids, check=False)
        self.mail.stop()


@pytest.fixture(scope="session")
def image_stack():
    stack = ImageStack()
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
