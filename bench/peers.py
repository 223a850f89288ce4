"""The peer stacks of make bench: Django + djangorestframework-simplejwt (RS256, refresh rotation
with the blacklist) and fastapi-users (database strategy), from bench/peers/requirements.txt in
a virtual environment (scripts/bench.sh makes it), each on its own database of the same
PostgreSQL, each with two worker processes, the same Argon2id cost, driven by the same wrk
scripts as the service. A peer path whose answers are not all 2xx is marked invalid."""
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


def run_peers(venv, admin_url, db_prefix, log_dir, wrk, free_port, psql, seconds, connections, sign_in_connections):
    """{peer name: {"label", "paths": {path key: wrk figure, with "valid"}}}; a peer that
    cannot be set up, start or answer gets {"label", "error"} instead: it costs its own rows,
    never the service's figures of the run."""
    out = {}
    cost_env = {"PEER_ARGON2_" + k: os.environ[v] for k, v in (
        ("MEMORY_KIB", "IDENTITY_ARGON2_MEMORY_KIB"), ("ITERATIONS", "IDENTITY_ARGON2_ITERATIONS"),
        ("PARALLELISM", "IDENTITY_ARGON2_PARALLELISM")) if os.environ.get(v)}
    private, public = _rsa_pair()
    for peer in PEERS:
        log_path = os.path.join(log_dir, "peer-%s.log" % peer.name)
        try:
            with open(log_path, "w") as log:
                database = "%s_%s" % (db_prefix, peer.name)
                psql(admin_url, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % database)
                psql(admin_url, "CREATE DATABASE %s" % database)
                env = dict(os.environ, PEER_DATABASE_URL=admin_url.rsplit("/", 1)[0] + "/" + database,
                           PEER_SECRET=secrets.token_hex(32), PEER_PRIVATE_PEM=private, PEER_PUBLIC_PEM=public,
                           **cost_env)
                out[peer.name] = dict(_measure(peer, venv, env, log, wrk, free_port(), seconds, connections,
                                               sign_in_connections), label=peer.label)
        except (OSError, KeyError, ValueError, StopIteration, subprocess.CalledProcessError) as error:
            out[peer.name] = {"label": peer.label, "error": "failed: %s (log: %s)" % (error, log_path)}
    return out


def _measure(peer, venv, env, log, wrk, port, seconds, connections, sign_in_connections):
    base = "http://127.0.0.1:%d" % port
    cwd = os.path.join(PEERS_DIR, peer.folder)
    email, password = "peer-%s@example.com" % secrets.token_hex(4), "peer-" + secrets.token_hex(8)
    subprocess.run([os.path.join(venv, "bin", "python"), *peer.setup, email, password], cwd=cwd, env=env,
                   check=True, stdout=log, stderr=subprocess.STDOUT)
    proc = subprocess.Popen(peer.serve(venv, port), cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        if not _wait_healthy(base, proc):
            return {"error": "did not start (log: %s)" % log.name}
        paths = {}
        extra = {"BENCH_APP_KEY": "peer"}
        paths["sign_in"] = wrk("sign_in.lua", base + "/v1/auth/sign-in", seconds, sign_in_connections, 2,
                               dict(extra, BENCH_EMAIL=email, BENCH_PASSWORD=password))
        pair = _post(base + "/v1/auth/sign-in", {"email": email, "password": password})
        paths["me"] = wrk("me.lua", base + "/v1/me", seconds, connections, 2,
                          dict(extra, BENCH_TOKEN=pair[peer.access_field]))
        if peer.refresh_field:
            tokens = os.path.join(os.path.dirname(log.name), "peer-%s-refresh-tokens.txt" % peer.name)
            with open(tokens, "w") as file:
                for _ in range(connections + 2):
                    file.write(_post(base + "/v1/auth/sign-in", {"email": email, "password": password})
                               [peer.refresh_field] + "\n")
            paths["refresh"] = wrk("refresh.lua", base + "/v1/auth/token/refresh", seconds, connections, 2,
                                   dict(extra, BENCH_TOKENS_FILE=tokens, BENCH_REFRESH_FIELD=peer.refresh_field))
        for figure in paths.values():
            figure["valid"] = not (figure.get("non_2xx") or figure.get("errors"))
        return {"paths": paths}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
