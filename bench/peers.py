"""The peer stacks of make bench: Django + djangorestframework-simplejwt (RS256, refresh rotation
with the blacklist) and fastapi-users (database strategy), from bench/peers/requirements.txt in
a virtual environment (scripts/bench.sh makes it), each on its own database of the same
PostgreSQL, each with two worker processes, the same Argon2id cost, driven by the same wrk
scripts as the service, in the same rounds as the service (run.py alternates them). A peer
path whose answers are not all 2xx is marked invalid."""
import os
import secrets
import signal
import subprocess
import time
import urllib.request

PEERS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers")


def _rsa_pair():
    private = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                             check=True, capture_output=True, text=True).stdout
    public = subprocess.run(["openssl", "pkey", "-pubout"], input=private, check=True, capture_output=True,
                            text=True).stdout
    return private, public


class Peer:
    """One peer: how to set it up, serve it, and which of the service's paths it has."""

    def __init__(self, name, label, folder, setup, serve, refresh_field, access_field):
        self.name, self.label, self.folder = name, label, folder
        self.setup, self.serve = setup, serve
        self.refresh_field, self.access_field = refresh_field, access_field


PEERS = [
    Peer("django", "Django + simplejwt (gunicorn, 2 workers)", "django_peer",
         setup=["peer_setup.py"],
         serve=lambda venv, port: [os.path.join(venv, "bin", "gunicorn"), "-w", "2", "-b", "127.0.0.1:%d" % port,
                                   "--log-level", "warning", "peer_wsgi:application"],
         refresh_field="refresh", access_field="access"),
    Peer("fastapi", "fastapi-users (uvicorn, 2 workers)", "fastapi_peer",
         setup=["peer_app.py"],
         serve=lambda venv, port: [os.path.join(venv, "bin", "uvicorn"), "--workers", "2", "--port", str(port),
                                   "--host", "127.0.0.1", "--log-level", "warning", "--no-access-log", "peer_app:app"],
         refresh_field=None, access_field="access_token"),
]


def _post(url, body):
    import json
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _wait_healthy(base, proc, seconds=90):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


class Started:
    """A peer set up and serving on `base` (or `error`: it cannot be measured)."""

    def __init__(self, peer, log_path):
        self.peer, self.log_path = peer, log_path
        self.error = self.proc = self.base = self.log = None
        self.email, self.password = "peer-%s@example.com" % secrets.token_hex(4), "peer-" + secrets.token_hex(8)


def start_peers(venv, admin_url, db_prefix, log_dir, free_port, psql):
    """Each peer set up on its own database and serving; a peer that cannot be set up or start
    carries `error` instead: it costs its own rows, never the service's figures of the run."""
    started = []
    cost_env = {"PEER_ARGON2_" + k: os.environ[v] for k, v in (
        ("MEMORY_KIB", "IDENTITY_ARGON2_MEMORY_KIB"), ("ITERATIONS", "IDENTITY_ARGON2_ITERATIONS"),
        ("PARALLELISM", "IDENTITY_ARGON2_PARALLELISM")) if os.environ.get(v)}
    private, public = _rsa_pair()
    for peer in PEERS:
        one = Started(peer, os.path.join(log_dir, "peer-%s.log" % peer.name))
        started.append(one)
        try:
            one.log = open(one.log_path, "w")
            database = "%s_%s" % (db_prefix, peer.name)
            psql(admin_url, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % database)
            psql(admin_url, "CREATE DATABASE %s" % database)
            env = dict(os.environ, PEER_DATABASE_URL=admin_url.rsplit("/", 1)[0] + "/" + database,
                       PEER_SECRET=secrets.token_hex(32), PEER_PRIVATE_PEM=private, PEER_PUBLIC_PEM=public, **cost_env)
            cwd = os.path.join(PEERS_DIR, peer.folder)
            subprocess.run([os.path.join(venv, "bin", "python"), *peer.setup, one.email, one.password], cwd=cwd,
                           env=env, check=True, stdout=one.log, stderr=subprocess.STDOUT)
            port = free_port()
            one.base = "http://127.0.0.1:%d" % port
            one.proc = subprocess.Popen(peer.serve(venv, port), cwd=cwd, env=env, stdout=one.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
            if not _wait_healthy(one.base, one.proc):
                one.error = "did not start (log: %s)" % one.log_path
        except (OSError, KeyError, ValueError, subprocess.CalledProcessError) as error:
            one.error = "failed: %s (log: %s)" % (error, one.log_path)
    return started


def measure_peer(one, wrk, seconds, connections, sign_in_connections):
    """One round of the peer's paths: {"label", "paths": {path key: wrk figure, with "valid"}}
    or {"label", "error"}."""
    if one.error:
        return {"label": one.peer.label, "error": one.error}
    peer, base = one.peer, one.base
    try:
        paths = {}
        extra = {"BENCH_APP_KEY": "peer"}
        paths["sign_in"] = wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds, sign_in_connections, 2,
                               dict(extra, BENCH_EMAIL=one.email, BENCH_PASSWORD=one.password))
        pair = _post(base + "/v1/auth/sign-in", {"email": one.email, "password": one.password})
        paths["me"] = wrk("me.lua", base + "/v1/me", seconds, connections, 2,
                          dict(extra, BENCH_TOKEN=pair[peer.access_field]))
        if peer.refresh_field:
            tokens = os.path.join(os.path.dirname(one.log_path), "peer-%s-refresh-tokens.txt" % peer.name)
            with open(tokens, "w") as file:
                for _ in range(connections + 2):
                    file.write(_post(base + "/v1/auth/sign-in", {"email": one.email, "password": one.password})
                               [peer.refresh_field] + "\n")
            paths["refresh"] = wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds, connections, 2,
                                   dict(extra, BENCH_TOKENS_FILE=tokens, BENCH_REFRESH_FIELD=peer.refresh_field))
        for figure in paths.values():
            figure["valid"] = not (figure.get("non_2xx") or figure.get("errors"))
        return {"label": peer.label, "paths": paths}
    except (OSError, KeyError, ValueError, StopIteration, subprocess.CalledProcessError) as error:
        return {"label": peer.label, "error": "failed: %s (log: %s)" % (error, one.log_path)}


def stop_peers(started):
    for one in started:
        if one.proc is None:
            continue
        try:
            os.killpg(one.proc.pid, signal.SIGTERM)
            one.proc.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(one.proc.pid, signal.SIGKILL)
        if one.log:
            one.log.close()
