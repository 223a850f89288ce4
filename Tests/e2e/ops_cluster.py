"""A cluster of the service for operations tests: nginx (Debian's) in front of several gateways,
and several copies of each worker, all real processes on the test's database and vhost, started
like conftest.Stack starts its own (each with its own role and broker user). While it runs, the
session's shared stack is stopped, so this cluster alone consumes the queues and relays the
outbox; `close` brings the shared stack back."""

import os
import shutil
import socket
import subprocess
import time
import urllib.request

from conftest import ServiceProcess
from identity_client import Client

WORKER_KINDS = ("identity-token-worker", "identity-provider-worker", "identity-mailer-worker",
                "identity-revocation-worker")

NGINX_CONF = """
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {dir}/nginx-access.log;
    # Nothing spills to temporary files (nginx's workers may not be able to reach this folder
    # when the master runs as root): bodies are under 64 KiB, answers small.
    client_body_buffer_size 128k;
    proxy_max_temp_file_size 0;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    upstream identity {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://identity;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            # The gateways trust 127.0.0.1 (IDENTITY_TRUSTED_PROXIES): the client's address is the
            # hop before this one.
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            # A gateway that stopped listening refuses the connection: nothing was sent, so the
            # request goes to the other one. Nothing else is retried (a POST is not idempotent).
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 2;
            proxy_connect_timeout 2s;
            proxy_read_timeout 30s;
        }}
    }}
}}
"""


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    def __init__(self, stack, copies=2, log_format="json", log_level="debug"):
        self.stack = stack
        self.dir = os.path.join(stack.log_dir, f"cluster-{int(time.time())}")
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)
        os.chmod(self.dir, 0o755)
        os.chmod(os.path.join(self.dir, "tmp"), 0o777)
        common = {"IDENTITY_LOG_FORMAT": log_format, "IDENTITY_LOG_LEVEL": log_level,
                  "IDENTITY_REQUEST_TIMEOUT_MS": "5000", "IDENTITY_SHUTDOWN_GRACE_MS": "7000"}
        self.gateways = []
        for index in range(copies):
            port = free_port()
            env = stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                IDENTITY_METRICS_PORT=str(free_port()), **common)
            self.gateways.append(ServiceProcess(f"identity-gateway#{index + 1}", [stack.binary("identity-gateway")],
                                                env, os.path.join(self.dir, f"gateway-{index + 1}.log")))
        self.workers = []
        for kind in WORKER_KINDS:
            for index in range(copies):
                env = stack.env_for(kind, IDENTITY_HTTP_PORT=str(free_port()),
                                    IDENTITY_METRICS_PORT=str(free_port()), **common)
                short = kind[len("identity-"):]
                self.workers.append(ServiceProcess(f"{kind}#{index + 1}", [stack.binary(kind)], env,
                                                   os.path.join(self.dir, f"{short}-{index + 1}.log")))
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.client = Client(self.base_url)
        self.nginx = None

    @property
    def processes(self):
        return self.gateways + self.workers

    def start(self):
        for process in self.stack.processes:
            process.stop()
        for process in self.workers + self.gateways:
            process.start()
        for process in self.processes:
            self.wait_ready(process)
        self.start_nginx()

    def start_nginx(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        # max_fails=0: a refused connection sends that request to the other gateway but never
        # takes a gateway out of the rotation, so one restarted right after the other (which
        # nginx would still count as failed for fail_timeout) is not "no live upstreams".
        servers = "\n".join(f"        server 127.0.0.1:{g.env['IDENTITY_HTTP_PORT']} max_fails=0;"
                            for g in self.gateways)
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as out:
            out.write(NGINX_CONF.format(dir=self.dir, port=self.port, servers=servers))
        self.nginx = subprocess.Popen([nginx, "-c", conf, "-p", self.dir, "-g", "daemon off;"],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=open(os.path.join(self.dir, "nginx-stderr.log"), "ab"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.client.get("/healthz", timeout=2).status == 200:
                    return
            except OSError:
                pass
            assert self.nginx.poll() is None, f"nginx exited:\n{self.nginx_log()}"
            time.sleep(0.1)
        raise AssertionError(f"nginx not answering:\n{self.nginx_log()}")

    def nginx_log(self):
        text = ""
        for name in ("nginx-stderr.log", "nginx-error.log"):
            try:
                with open(os.path.join(self.dir, name)) as log:
                    text += log.read()[-3000:]
            except OSError:
                pass
        return text

    def metrics_url(self, process, path="/metrics"):
        return f"http://127.0.0.1:{process.env['IDENTITY_METRICS_PORT']}{path}"

    def wait_ready(self, process, timeout=30):
        """Until the process's /readyz (operations listener) answers 200."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            assert process.alive(), f"{process.name} exited:\n{process.tail()}"
            try:
                with urllib.request.urlopen(self.metrics_url(process, "/readyz"), timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError as error:
                last = error
            time.sleep(0.1)
        raise AssertionError(f"{process.name} not ready within {timeout} s ({last!r}):\n{process.tail()}")

    def restart(self, process):
        """SIGTERM, wait for the exit (its code returned), start again, wait until ready."""
        code = process.stop()
        process.start()
        self.wait_ready(process)
        return code

    def close(self):
        if self.nginx is not None and self.nginx.poll() is None:
            self.nginx.terminate()
            self.nginx.wait(timeout=10)
        for process in self.processes:
            process.stop()
        for process in self.stack.processes:
            process.start()
        self.stack.wait_ready()
        self.stack.warm_up()

    def tails(self, lines=30):
        return "\n".join(f"--- {p.name} [{p.state()}] ---\n{p.tail(lines)}" for p in self.processes) \
            + f"\n--- nginx ---\n{self.nginx_log()}"
