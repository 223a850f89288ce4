"""Starts the real service once per session (migrate, token worker, revocation worker, provider
worker, mailer worker, gateway) in front of a stand-in for Apple, Google and Firebase
(provider_standin.py) and an SMTP sink (smtp_sink.py), and hands tests a client, fresh apps
(plain, with the providers configured, or with any settings), the stand-in, the sink, an
event-stream reader, and handles to stop/start the workers, the stand-in, the sink, the broker and
the database (and to SIGKILL the token worker).

The harness (scripts/test.sh) provides everything through the environment: IDENTITY_BIN_DIR
(identity-gateway, identity-token-worker, identity-revocation-worker, identity-provider-worker,
identity-mailer-worker, identityctl),
IDENTITY_DATABASE_URL (a fresh database),
IDENTITY_AMQP_URL (a fresh vhost; guest, for the harness's own checks), IDENTITY_AMQP_URL_<KIND>
(one broker user per process kind, scripts/broker-users.sh: each process connects as its own, to
IDENTITY_AMQP_URL's vhost), IDENTITY_MASTER_KEY, IDENTITY_MIGRATIONS_DIR,
IDENTITY_SERVICES_SCRIPT (stop-broker / start-broker, stop-db / start-db) and IDENTITY_RUN_DIR
(logs go under it).

Each process logs in to PostgreSQL as its own role (docs/architecture.md, "Database roles"): its URL is
IDENTITY_<ROLE>_DATABASE_URL (IDENTITY_GATEWAY_DATABASE_URL, ..., IDENTITY_OWNER_DATABASE_URL for
`identityctl migrate`, IDENTITYCTL_DATABASE_URL for the rest of identityctl), which scripts/test.sh
sets with `scripts/services.sh db-roles`; when they are missing or name another database, the
stack runs that itself. IDENTITY_DATABASE_URL (a superuser's) is left to the tests' own look into
the database (db_tools.py).
"""

import json
import os
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import uuid

import pytest

import provider_standin
from broker_users import KINDS as BROKER_KINDS, amqp_url
from event_tools import EventStream
from identity_client import Client
from mail_flows import EMAIL_VERIFICATION_COOLDOWN_SECONDS, MAIL_FROM, MAIL_RETRY_DELAYS_MS
from provider_flows import APPLE_REVOKE_RETRY_DELAYS_MS
from provider_standin import ProviderStandin
# code_from(message): the 6-digit code in a mail's text part. Defined next to the sink; tests
# import it from smtp_sink (conftest is not meant to be imported).
from smtp_sink import SMTPSink, code_from  # noqa: F401
from push_standin import APNsStandin, FCMStandin

REQUIRED_ENV = ("IDENTITY_BIN_DIR", "IDENTITY_DATABASE_URL", "IDENTITY_AMQP_URL",
                "IDENTITY_MASTER_KEY", "IDENTITY_MIGRATIONS_DIR")
READY_TIMEOUT = 30.0
STOP_GRACE = 10.0
STACK_KEY = pytest.StashKey()
# The spent-refresh-token grace period (30 s in production), short so tests can outwait it.
REFRESH_GRACE_SECONDS = 3
# An unknown `kid` refetches a provider's JWKS at most once per this many seconds (60 in
# production), short so a key-rotation test can outwait it.
JWKS_REFETCH_INTERVAL_SECONDS = 1
# IDENTITY_SMS_SHARED_CALLING_CODES of every process (test_sms_ceilings.py texts outside it).
SHARED_CALLING_CODES = "1,33,44,52"
# IDENTITY_RATE_LIMIT_CEILINGS of every process.
RATE_LIMIT_CEILINGS = "guest_per_ip=none,sign_up_per_ip=40/1h,sms_breaker_hourly=5000/1h"
# What `provider_app` is configured with: every provider, pointing at the stand-in's world.
PROVIDER_SETTINGS = {
    "google": {"google_client_ids": provider_standin.GOOGLE_CLIENT_IDS},
    "apple": {"apple_bundle_ids": (provider_standin.APPLE_BUNDLE_ID,),
              "apple_services_ids": (provider_standin.APPLE_SERVICES_ID,),
              "apple_team_id": provider_standin.APPLE_TEAM_ID,
              "apple_key_id": provider_standin.APPLE_KEY_ID,
              "apple_private_key_file": None},  # the stand-in's .p8, filled in by the stack
    "firebase": {"firebase_project_id": provider_standin.FIREBASE_PROJECT_ID},
}


# The processes' database logins (migrations/0010_process_roles.sql): the owner migrates.
DB_ROLES = ("identity-owner", "identity-gateway", "identity-token-worker", "identity-provider-worker",
            "identity-mailer-worker", "identity-revocation-worker", "identity-webhook-worker", "identityctl")
# Seconds between a webhook delivery's attempts (production: 5 s to 10 h, over 27 hours in all):
# a delivery is dead-lettered after 8 attempts, 11.9 s after its first.
WEBHOOK_RETRY_SCHEDULE = (0.2, 0.4, 0.8, 1.5, 2, 3, 4)
REPO_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def db_url_variable(name):
    """identity-gateway → IDENTITY_GATEWAY_DATABASE_URL."""
    return name.upper().replace("-", "_") + "_DATABASE_URL"


def _database_of(url):
    return urllib.parse.urlsplit(url).path.lstrip("/")


def database_urls():
    """{process name: its role's URL} for the database of IDENTITY_DATABASE_URL."""
    database = _database_of(os.environ["IDENTITY_DATABASE_URL"])
    urls = {name: os.environ.get(db_url_variable(name)) for name in DB_ROLES}
    if all(url and _database_of(url) == database for url in urls.values()):
        return urls
    script = os.path.join(REPO_DIR, "scripts", "services.sh")
    done = subprocess.run(["bash", script, "db-roles", database], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"scripts/services.sh db-roles {database} failed:\n{done.stdout}\n{done.stderr}", pytrace=False)
    exported = {}
    for line in done.stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            exported[key] = shlex.split(value)[0]
    return {name: exported[db_url_variable(name)] for name in DB_ROLES}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "disruptive: stops shared processes (worker, broker, database); runs last")


def pytest_collection_modifyitems(session, config, items):
    # Disruptive tests stop the worker and the broker that every other test shares: run them
    # after everything else, whatever the file names or -k selection.
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    # rep_setup / rep_call / rep_teardown: a fixture's teardown can see how its test went (the
    # browser fixture keeps a screenshot of a failure).
    setattr(item, "rep_" + report.when, report)
    stack = item.config.stash.get(STACK_KEY, None)
    if report.failed and stack is not None:
        report.sections.append(("identity service logs (tail)", stack.log_tails()))


def mail_payload_key(master_key_hex, label=b"mail-payload-v1"):
    """HKDF-SHA-256(master key, salt "identity-service", info "mail-payload-v1"): what
    `identityctl keys mail-payload-key` prints (MailPayloadSeal), computed independently here;
    with label "seal-push-credential-v1", what `identityctl keys push-credential-key` prints."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"identity-service",
                info=label).derive(bytes.fromhex(master_key_hex)).hex()


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# PGPool.nestedAcquireMessage: a thread that holds a database connection asked its pool for another.
NESTED_ACQUIRE = "a thread holding a database connection asked the same pool for another"


class ServiceProcess:
    """One long-running executable, its output appended to a log file (kept across restarts so
    the tail tells the whole story)."""

    def __init__(self, name, argv, env, log_path):
        self.name, self.argv, self.env, self.log_path = name, argv, env, log_path
        self.proc = None
        self.stopped_on_purpose = False

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self):
        with open(self.log_path, "ab") as log:
            log.write(f"\n=== start {self.argv} at {time.strftime('%H:%M:%S')} ===\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT)
        self.stopped_on_purpose = False

    def stop(self):
        """SIGTERM, then SIGKILL after STOP_GRACE seconds; returns the exit code."""
        self.stopped_on_purpose = True
        if not self.alive():
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=5)

    def kill(self):
        """SIGKILL at once (a crash: no clean-up, nothing acked); returns the exit code."""
        self.stopped_on_purpose = True
        if not self.alive():
            return self.proc.returncode if self.proc else None
        self.proc.kill()
        return self.proc.wait(timeout=5)

    def died(self):
        return self.proc is not None and not self.stopped_on_purpose and not self.alive()

    def state(self):
        if self.proc is None:
            return "not started"
        if self.alive():
            return f"pid {self.proc.pid} running"
        return f"pid {self.proc.pid} exited {self.proc.returncode}"

    def logged(self, text):
        """Whether `text` appears anywhere in this process's log."""
        try:
            with open(self.log_path, "rb") as log:
                return text.encode() in log.read()
        except OSError:
            return False

    def tail(self, lines=60):
        try:
            with open(self.log_path, "rb") as log:
                text = log.read().decode("utf-8", "replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


class Stack:
    def __init__(self):
        missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
        if missing:
            pytest.fail(f"e2e tests need {', '.join(missing)} (make test sets them)", pytrace=False)
        self.bin_dir = os.environ["IDENTITY_BIN_DIR"]
        run_dir = os.environ.get("IDENTITY_RUN_DIR") or None
        if run_dir:
            os.makedirs(run_dir, exist_ok=True)
        self.log_dir = tempfile.mkdtemp(prefix="identity-e2e-", dir=run_dir)
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.request_timeout_ms = 2000
        # Apple, Google and Firebase: listening before any service process starts, so no
        # process ever sees them missing unless a test stops them on purpose.
        self.providers = ProviderStandin(self.log_dir)
        self.providers.start()
        # The SMTP server the mailer worker delivers to: likewise listening before anything starts.
        self.mail = SMTPSink()
        self.mail.start()
        # APNs (HTTP/2 over TLS, a CA the mailer trusts through IDENTITY_PUSH_CA_FILE) and FCM.
        self.apns = APNsStandin(self.log_dir)
        self.apns.start()
        self.fcm = FCMStandin()
        self.fcm.start()
        self.jwks_refetch_interval = JWKS_REFETCH_INTERVAL_SECONDS
        self.env = dict(os.environ)
        self.env.update({
            "IDENTITY_HTTP_PORT": str(self.port),
            "IDENTITY_HTTP_HOST": "127.0.0.1",
            "IDENTITY_PUBLIC_BASE_URL": self.base_url,
            # Cheap hashes: the tests exercise the flows, not Argon2's cost.
            "IDENTITY_ARGON2_MEMORY_KIB": "1024",
            "IDENTITY_ARGON2_ITERATIONS": "1",
            "IDENTITY_REQUEST_TIMEOUT_MS": str(self.request_timeout_ms),
            "IDENTITY_REFRESH_GRACE_SECONDS": str(REFRESH_GRACE_SECONDS),
            "IDENTITY_JWKS_REFETCH_INTERVAL_SECONDS": str(JWKS_REFETCH_INTERVAL_SECONDS),
            **self.providers.env(),
            # IDENTITY_SMTP_HOST, IDENTITY_SMTP_PORT, IDENTITY_SMTP_TLS=none
            **self.mail.env(),
            "IDENTITY_MAIL_FROM": MAIL_FROM,
            # SMS of apps without an account of their own: .sms files here (test_phone.py).
            "IDENTITY_SMS_DIR": os.path.join(self.log_dir, "sms"),
            "IDENTITY_APNS_URL": self.apns.url,
            "IDENTITY_FCM_URL": self.fcm.url,
            "IDENTITY_FCM_TOKEN_URL": self.fcm.token_url,
            "IDENTITY_PUSH_CA_FILE": self.apns.ca_file,
            # A failed delivery is retried after 0.3 s, 0.6 s and 1.2 s, then dead-lettered.
            "IDENTITY_MAIL_RETRY_DELAYS_MS": ",".join(str(ms) for ms in MAIL_RETRY_DELAYS_MS),
            "IDENTITY_EMAIL_VERIFICATION_COOLDOWN_SECONDS": str(EMAIL_VERIFICATION_COOLDOWN_SECONDS),
            # A failed revocation at Apple (account deletion) is retried after 0.3 s, 0.6 s,
            # then every 1.2 s until Apple answers 200.
            "IDENTITY_APPLE_REVOKE_RETRY_DELAYS_MS": ",".join(
                str(ms) for ms in APPLE_REVOKE_RETRY_DELAYS_MS),
            # The tests' client is a proxy (identity_client.Client sends X-Forwarded-For), so the
            # per-IP rate limits count the addresses it forwards, not 127.0.0.1.
            "IDENTITY_TRUSTED_PROXIES": "127.0.0.1/32",
            # The provider stand-in speaks plain HTTP on loopback (production URLs must be https).
            "IDENTITY_ALLOW_INSECURE_PROVIDER_URLS": "1",
            # The SMS and push stand-ins an app's settings point at listen on loopback over plain
            # HTTP too: URLs apps set may reach them (production: public https only; the gateway
            # and the token worker check at save, the mailer at connect). test_outbound_addresses.py
            # starts processes without these to show the refusals.
            "IDENTITY_ALLOW_PRIVATE_OUTBOUND": "1",
            "IDENTITY_ALLOW_INSECURE_OUTBOUND": "1",
            # An app's hook breaker, open after 5 failures in a row, probes again after 2 s
            # (30 s in production): test_hook_fairness.py sees it close.
            "IDENTITY_HOOK_BREAKER_SECONDS": "2",
            # At most 4 calls to one app's hooks at once (16 in production), so that a burst of a
            # dozen shows the bound.
            "IDENTITY_HOOK_APP_CONCURRENCY": "4",
            # The retention purge runs every second (every minute in production); what it deletes
            # is decided by the (production) retention periods, which tests outwait by ageing rows.
            "IDENTITY_PURGE_INTERVAL_SECONDS": "1",
            # identityctl may turn a limit off (tests only).
            "IDENTITY_RATE_LIMIT_OFF_ALLOWED": "1",
            # The calling codes the tests' apps text through the shared account (the .sms files):
            # France and the UK (test_phone.py), Mexico (test_graphql.py), and +1, which the
            # apps' own lists refuse (none by default: the operator names where its account texts).
            "IDENTITY_SMS_SHARED_CALLING_CODES": SHARED_CALLING_CODES,
            # Tenants' ceilings (test_tenant_ceilings.py): one limit tenants may turn off, one
            # lower than built in; every other limit keeps its built-in ceiling.
            "IDENTITY_RATE_LIMIT_CEILINGS": RATE_LIMIT_CEILINGS,
        })
        self.refresh_grace_seconds = REFRESH_GRACE_SECONDS
        self.db_urls = database_urls()

        # Each worker gets its own HTTP port in case it serves /healthz or /metrics on
        # IDENTITY_HTTP_PORT: it must not take the gateway's port (nor the other worker's).
        self.worker = ServiceProcess("identity-token-worker", [self.binary("identity-token-worker")],
                                     self.env_for("identity-token-worker", IDENTITY_HTTP_PORT=str(_free_port()),
                                                  IDENTITY_METRICS_PORT=str(_free_port())),
                                     os.path.join(self.log_dir, "token-worker.log"))
        # Ends sessions (and unregisters their push devices), relays the outbox to the broker,
        # and revokes a deleted account's Apple tokens at Apple (decrypting them with
        # IDENTITY_MASTER_KEY, which every process has from the harness's environment).
        self.revocation = ServiceProcess(
            "identity-revocation-worker", [self.binary("identity-revocation-worker")],
            self.env_for("identity-revocation-worker", IDENTITY_HTTP_PORT=str(_free_port()),
                         IDENTITY_METRICS_PORT=str(_free_port())),
            os.path.join(self.log_dir, "revocation-worker.log"))
        # Verifies Google, Apple and Firebase tokens, issues and spends nonces, exchanges Apple
        # authorization codes.
        self.provider_worker = ServiceProcess(
            "identity-provider-worker", [self.binary("identity-provider-worker")],
            self.env_for("identity-provider-worker", IDENTITY_HTTP_PORT=str(_free_port()),
                         IDENTITY_METRICS_PORT=str(_free_port())),
            os.path.join(self.log_dir, "provider-worker.log"))
        # Delivers the mails (codes, password resets, email verification) to the SMTP sink.
        self.mailer_worker = ServiceProcess(
            "identity-mailer-worker", [self.binary("identity-mailer-worker")],
            self.env_for("identity-mailer-worker", IDENTITY_HTTP_PORT=str(_free_port()),
                         IDENTITY_METRICS_PORT=str(_free_port())),
            os.path.join(self.log_dir, "mailer-worker.log"))
        # Delivers the apps' events to their webhook endpoints (the tests' receivers on loopback,
        # which IDENTITY_ALLOW_PRIVATE_OUTBOUND allows), on a schedule of seconds.
        self.webhook_worker = ServiceProcess(
            "identity-webhook-worker", [self.binary("identity-webhook-worker")],
            self.env_for("identity-webhook-worker", IDENTITY_HTTP_PORT=str(_free_port()),
                         IDENTITY_METRICS_PORT=str(_free_port()),
                         IDENTITY_WEBHOOK_RETRY_SCHEDULE=",".join(f"{int(s * 1000)}ms" for s in WEBHOOK_RETRY_SCHEDULE),
                         IDENTITY_WEBHOOK_TIMEOUT_MS="2000"),
            os.path.join(self.log_dir, "webhook-worker.log"))
        self.gateway = ServiceProcess("identity-gateway", [self.binary("identity-gateway")],
                                      self.env_for("identity-gateway", IDENTITY_METRICS_PORT=str(_free_port())),
                                      os.path.join(self.log_dir, "gateway.log"))
        self.client = Client(self.base_url)

    @property
    def processes(self):
        return (self.gateway, self.worker, self.revocation, self.provider_worker,
                self.mailer_worker, self.webhook_worker)

    def metrics_url(self, process, path="/metrics"):
        """The URL of `path` on a process's operations listener (IDENTITY_METRICS_PORT)."""
        return f"http://127.0.0.1:{process.env['IDENTITY_METRICS_PORT']}{path}"

    def env_for(self, name, **extra):
        """The environment of executable `name` (identity-gateway, identity-token-worker, ...,
        identityctl; identity-owner for migrations): the stack's, with its own database login and
        its own broker user, and only the secrets it needs: the gateway never gets the master
        key, the mailer gets the sub-key that opens mail codes instead of it."""
        env = dict(self.env, IDENTITY_DATABASE_URL=self.db_urls[name])
        if name in BROKER_KINDS:
            env["IDENTITY_AMQP_URL"] = amqp_url(name)
        if name in ("identity-gateway", "identity-mailer-worker", "identity-webhook-worker"):
            env.pop("IDENTITY_MASTER_KEY", None)
        if name == "identity-webhook-worker":
            env["IDENTITY_WEBHOOK_SECRET_KEY"] = mail_payload_key(self.env["IDENTITY_MASTER_KEY"],
                                                                  label=b"seal-webhook-secret-v1")
        if name == "identity-mailer-worker":
            env["IDENTITY_MAIL_PAYLOAD_KEY"] = mail_payload_key(self.env["IDENTITY_MASTER_KEY"])
            env["IDENTITY_PUSH_CREDENTIAL_KEY"] = mail_payload_key(self.env["IDENTITY_MASTER_KEY"],
                                                                   label=b"seal-push-credential-v1")
        env.update(extra)
        return env

    def binary(self, name):
        path = os.path.join(self.bin_dir, name)
        if not os.access(path, os.X_OK):
            pytest.fail(f"{path} is missing or not executable", pytrace=False)
        return path

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self):
        migrate = self.ctl("migrate")
        assert migrate.returncode == 0, f"identityctl migrate failed:\n{migrate.stdout}\n{migrate.stderr}"
        self.worker.start()
        self.revocation.start()
        self.provider_worker.start()
        self.mailer_worker.start()
        self.webhook_worker.start()
        self.gateway.start()
        self.wait_ready()
        self.warm_up()

    def wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT
        last = None
        while time.monotonic() < deadline:
            for proc in self.processes:
                if not proc.alive():
                    raise RuntimeError(f"{proc.name} exited ({proc.proc.returncode}) during "
                                       f"start-up\n{self.log_tails()}")
            try:
                last = self.client.get("/readyz", timeout=2)
                if last.status == 200:
                    return
            except OSError as exc:
                last = exc
            time.sleep(0.2)
        raise RuntimeError(f"GET /readyz not 200 within {READY_TIMEOUT}s (last: {last!r})\n"
                           f"{self.log_tails()}")

    def warm_up(self):
        """Waits (without failing) until the worker answers commands: /readyz covers the store and
        the broker, not whether the worker has its queue yet. Broken sign-up is left for the
        tests to report."""
        app = self.create_app(name="warm-up")
        self.client.wait_for(
            lambda: self.client.sign_up(app, email=f"warm-{uuid.uuid4().hex}@example.com").status != 503,
            timeout=20)
        # The revocation worker: a sign-out goes through it.
        def signed_out():
            resp = self.client.sign_up(app, email=f"warm-{uuid.uuid4().hex}@example.com")
            if resp.status != 201:
                return False
            token = resp.json["data"]["access_token"]
            return self.client.sign_out(app, token).status != 503
        self.client.wait_for(signed_out, timeout=20)
        # The provider worker likewise (nonces are its business).
        self.client.wait_for(lambda: self.client.auth_nonce(app).status != 503, timeout=20)
        # And the mailer worker: a first mail through to the sink.
        email = f"warm-{uuid.uuid4().hex}@example.com"
        self.client.wait_for(lambda: self.client.email_code_send(app, email).status != 503,
                             timeout=20)
        self.mail.first(email, timeout=20)

    def stop(self):
        for proc in self.processes:
            proc.stop()
        self.providers.stop()
        self.mail.stop()

    def log_tails(self, lines=60):
        tails = [f"--- {p.name} [{p.state()}] {p.log_path} ---\n{p.tail(lines)}"
                 for p in self.processes]
        tails.append(f"--- provider stand-in ---\n{self.providers.summary()}")
        tails.append(f"--- SMTP sink ---\n{self.mail.summary()}")
        return "\n".join(tails)

    # --- handles for tests ---------------------------------------------------------------------

    def stop_worker(self):
        return self.worker.stop()

    def start_worker(self):
        self.worker.start()

    def kill_token_worker(self):
        """SIGKILL: the token worker dies mid-command. start_worker() brings it back."""
        return self.worker.kill()

    def stop_revocation_worker(self):
        return self.revocation.stop()

    def start_revocation_worker(self):
        self.revocation.start()

    def stop_provider_worker(self):
        return self.provider_worker.stop()

    def start_provider_worker(self):
        self.provider_worker.start()

    def stop_mailer_worker(self):
        return self.mailer_worker.stop()

    def start_mailer_worker(self):
        self.mailer_worker.start()

    def restart_provider_worker(self):
        """A fresh provider worker: nothing cached (no JWKS fetched yet). Returns at once; the new
        process needs a moment before it takes commands."""
        self.provider_worker.stop()
        self.provider_worker.start()

    def services_script(self, command):
        script = os.environ.get("IDENTITY_SERVICES_SCRIPT")
        assert script, "IDENTITY_SERVICES_SCRIPT is not set"
        argv = [script, command] if os.access(script, os.X_OK) else ["bash", script, command]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"

    def stop_broker(self):
        self.services_script("stop-broker")

    def start_broker(self):
        self.services_script("start-broker")

    def stop_database(self):
        """PostgreSQL only (pg_ctl stop -m fast): every open connection is cut."""
        self.services_script("stop-db")

    def start_database(self):
        """Returns once PostgreSQL accepts connections again."""
        self.services_script("start-db")

    def ctl(self, *args):
        """identityctl as its own role; `migrate` as the owner."""
        env = self.env_for("identity-owner" if args[:1] == ("migrate",) else "identityctl")
        return subprocess.run([self.binary("identityctl"), *args], env=env,
                              capture_output=True, text=True, timeout=120)

    def create_app(self, name=None, access_token_ttl=None):
        args = ["apps", "create", "--name", name or f"e2e-{uuid.uuid4().hex[:8]}"]
        if access_token_ttl is not None:
            args += ["--access-token-ttl", str(access_token_ttl)]
        done = self.ctl(*args)
        assert done.returncode == 0, f"identityctl {args} failed:\n{done.stdout}\n{done.stderr}"
        try:
            return json.loads(done.stdout)
        except ValueError:
            raise AssertionError(f"identityctl apps create printed no JSON object:\n{done.stdout}")

    def settings_args(self, app_id, **settings):
        """identityctl arguments for `apps settings`: google_client_ids=[...] becomes
        --google-client-ids a,b; deep_link_url="https://..." becomes --deep-link-url https://...
        (likewise mail_from_name, mail_from_address); rate_limits={"sign_in_per_ip": "5/1m"}
        becomes one --rate-limit NAME=VALUE per entry; mail_templates={"email_code.subject":
        "Code for {{app_name}}", ...} becomes one --mail-template KIND.PART=VALUE per entry; None
        leaves a flag out."""
        args = ["apps", "settings", app_id]
        for key, value in settings.items():
            if value is None:
                continue
            if key == "mail_templates":
                for name, template in value.items():
                    args += ["--mail-template", f"{name}={template}"]
                continue
            if key == "rate_limits":
                for name, limit in value.items():
                    args += ["--rate-limit", f"{name}={limit}"]
                continue
            if isinstance(value, (list, tuple)):
                value = ",".join(value)
            args += ["--" + key.replace("_", "-"), str(value)]
        return args

    def configure_app(self, app_id, **settings):
        """Runs identityctl apps settings; returns the settings JSON it printed."""
        args = self.settings_args(app_id, **settings)
        done = self.ctl(*args)
        assert done.returncode == 0, f"identityctl {args} failed:\n{done.stdout}\n{done.stderr}"
        try:
            return json.loads(done.stdout)
        except ValueError:
            raise AssertionError(f"identityctl apps settings printed no JSON object:\n{done.stdout}")

    def provider_settings(self, providers=("apple", "google", "firebase")):
        """The settings that configure these providers against the stand-in."""
        settings = {}
        for provider in providers:
            settings.update(PROVIDER_SETTINGS[provider])
        if "apple" in providers:
            settings["apple_private_key_file"] = self.providers.apple_p8_path
        return settings


@pytest.fixture(scope="session")
def stack(request):
    stack = Stack()
    request.config.stash[STACK_KEY] = stack
    try:
        stack.start()
    except BaseException:
        stack.stop()
        raise
    yield stack
    died = [p.name for p in stack.processes if p.died()]
    stack.stop()
    if died:
        # A teardown failure: pytest_runtest_makereport above attaches the log tails to it.
        pytest.fail(f"{', '.join(died)} died during the run", pytrace=False)
    nested = [p.name for p in stack.processes if p.logged(NESTED_ACQUIRE)]
    if nested:
        pytest.fail(f"{', '.join(nested)} logged {NESTED_ACQUIRE!r}: under load that waits on itself "
                    "until the pool's timeout (PGPool.nestedAcquire)", pytrace=False)


@pytest.fixture(scope="session")
def client(stack):
    return stack.client


@pytest.fixture(scope="session")
def base_url(stack):
    return stack.base_url


@pytest.fixture
def app_factory(stack):
    """Creates a fresh app: app_factory(access_token_ttl=600) → the identityctl JSON."""
    def make(name=None, access_token_ttl=None):
        return stack.create_app(name=name, access_token_ttl=access_token_ttl)
    return make


@pytest.fixture
def app(app_factory):
    return app_factory()


@pytest.fixture(autouse=True)
def _stack_serving_before_disruption(request):
    """A disruptive test starts only once every worker consumes again: the one before it may
    have restarted the broker or a worker, and a worker reconnects with a backoff of up to 5 s."""
    if request.node.get_closest_marker("disruptive") is not None:
        stack = request.getfixturevalue("stack")
        stack.wait_ready()
        stack.warm_up()
    yield


@pytest.fixture
def other_app(app_factory):
    return app_factory()


@pytest.fixture
def configured_app_factory(stack):
    """A fresh app with settings: configured_app_factory(name=None, access_token_ttl=None,
    **settings) → the identityctl apps create JSON plus "settings" (what apps settings printed).
    Settings as Stack.settings_args takes them: deep_link_url=..., mail_from_name=...,
    mail_from_address=..., mail_templates={"email_code.subject": ...}."""
    def make(name=None, access_token_ttl=None, **settings):
        app = stack.create_app(name=name, access_token_ttl=access_token_ttl)
        app["settings"] = stack.configure_app(app["app_id"], **settings)
        return app
    return make


@pytest.fixture
def smtp_sink(stack):
    """The SMTP server the mailer worker delivers to (smtp_sink.SMTPSink): wait_for(to,
    predicate=None, timeout=10, after=0), messages_to(address), mark(), reject(*addresses) /
    accept(*addresses), stop() / start(). Whatever a test made it refuse is accepted again, and a
    stopped sink started again, when the test ends."""
    yield stack.mail
    stack.mail.accept()
    stack.mail.start()


@pytest.fixture(scope="session")
def providers(stack):
    """The Apple/Google/Firebase stand-in (provider_standin.ProviderStandin) the service talks to."""
    return stack.providers


@pytest.fixture
def provider_app_factory(stack):
    """A fresh app with providers configured against the stand-in:
    provider_app_factory(providers=("google",), access_token_ttl=None, **settings) → the
    identityctl apps create JSON plus "settings" (what apps settings printed). Keyword settings
    (google_client_ids=[...], apple_team_id=..., None to leave a flag out) override the defaults."""
    def make(providers=("apple", "google", "firebase"), name=None, access_token_ttl=None,
             **overrides):
        app = stack.create_app(name=name, access_token_ttl=access_token_ttl)
        settings = dict(stack.provider_settings(providers), **overrides)
        app["settings"] = stack.configure_app(app["app_id"], **settings)
        return app
    return make


@pytest.fixture
def provider_app(provider_app_factory):
    """An app with Apple, Google and Firebase configured (see PROVIDER_SETTINGS)."""
    return provider_app_factory()


@pytest.fixture
def other_provider_app(provider_app_factory):
    """A second app configured exactly like provider_app (same client ids, bundle id, project)."""
    return provider_app_factory()


@pytest.fixture
def events(stack):
    """Every event published while the test runs: events.wait_for(routing_key, predicate=None,
    timeout=10) → the first Event whose JSON body satisfies predicate(body) (fails the test
    otherwise); events.collect(seconds) → all events received so far, after listening that long.
    An Event has routing_key, type, message_id, body (parsed JSON) and properties."""
    stream = EventStream(amqp_url("identity-events-reader"))
    yield stream
    stream.close()
