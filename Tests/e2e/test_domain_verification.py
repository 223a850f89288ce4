"""Custom domains need a proof (AppDomainStore.swift, identityctl apps domains verify): a host set
through the admin API is only requested (listed in `domains`, with a token in
`domains_pending`) and selects no app by `Host` until the operator's
`identityctl apps domains verify APP_ID HOST` finds the token at
https://HOST/.well-known/identity-domain-verification; here IDENTITY_DOMAIN_VERIFICATION_URL_TEMPLATE
points identityctl at a local server. Requests never conflict and never tell whose a host is;
one app at most holds a host verified. The operator may also allow a host outright
(`identityctl apps settings --domains`)."""

import json
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from admin_tools import admin
from identity_client import PASSWORD, assert_problem, unique_email

PATH = "/.well-known/identity-domain-verification"


class VerificationFiles:
    """Serves /{host}/.well-known/identity-domain-verification from `files` (host → text)."""

    def __init__(self):
        self.files = {}
        files = self.files

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                host, _, rest = self.path.lstrip("/").partition("/")
                body = files.get(host) if "/" + rest == PATH else None
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                payload = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.template = f"http://127.0.0.1:{self.server.server_address[1]}/{{domain}}{PATH}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def files():
    served = VerificationFiles()
    yield served
    served.stop()


def verify(stack, files, app, host):
    env = dict(stack.env_for("identityctl"), IDENTITY_DOMAIN_VERIFICATION_URL_TEMPLATE=files.template)
    return subprocess.run([stack.binary("identityctl"), "apps", "domains", "verify", app["app_id"], host],
                          env=env, capture_output=True, text=True, timeout=60)


def request(client, app, hosts):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {"domains": hosts})
    assert resp.status == 200, resp
    return resp.data


def selects(client, host):
    """The uid a sign-up through `Host` (no app key) creates, or None when the host selects no app."""
    resp = client.post("/v1/auth/sign-up", {"email": unique_email("host"), "password": PASSWORD},
                       headers={"Host": host})
    if resp.status == 401:
        assert_problem(resp, 401, "auth/invalid-app-key")
        return None
    assert resp.status == 201, resp
    return resp.data["user"]["uid"]


def owner_of(client, apps, uid):
    return [a["app_id"] for a in apps
            if admin(client, a, "GET", f"/v1/admin/users/{uid}").status == 200]


def wait_selected(client, host, timeout=10):
    """Unknown hosts are cached by the gateway for a few seconds: polls until `host` selects."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        uid = selects(client, host)
        if uid:
            return uid
        time.sleep(0.5)
    pytest.fail(f"{host} selects no app within {timeout}s")


def fresh_host(label="auth"):
    return f"{label}-{uuid.uuid4().hex[:10]}.example.test"


def test_a_requested_domain_selects_the_app_only_once_verified(stack, client, app, other_app, files):
    host = fresh_host()
    data = request(client, app, [host])
    assert data["domains"] == [host], data
    token = data["domains_pending"][host]
    assert token.startswith("idv_") and len(token) > 30, token
    # Requested, not proved: the host selects nothing.
    assert selects(client, host) is None
    # Another app may request it too: no conflict, and nothing in the answer about the first.
    other = request(client, other_app, [host])
    assert other["domains_pending"][host] != token
    answer = json.dumps(other)
    assert app["app_id"] not in answer and app["name"] not in answer, answer

    # No file, a wrong file, the other app's token: not verified.
    done = verify(stack, files, app, host)
    assert done.returncode != 0 and "404" in done.stderr, done.stderr
    files.files[host] = other["domains_pending"][host] + "\n"
    done = verify(stack, files, app, host)
    assert done.returncode != 0 and "does not hold the token" in done.stderr, done.stderr
    assert selects(client, host) is None

    # The app's token (among other lines): verified, and the host selects the app.
    files.files[host] = f"# identity\n  {token}  \n{other['domains_pending'][host]}\n"
    done = verify(stack, files, app, host)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["verified"] is True and shown["domain"] == host and shown["url"] == files.template.format(domain=host)
    after = admin(client, app, "GET", "/v1/admin/settings").data
    assert after["domains"] == [host] and after["domains_pending"] == {}, after
    uid = wait_selected(client, host)
    assert owner_of(client, [app, other_app], uid) == [app["app_id"]]

    # One app at most holds a host: the other's proof is refused (the operator is told whose).
    done = verify(stack, files, other_app, host)
    assert done.returncode != 0 and app["app_id"] in done.stderr, done.stderr
    # Verifying again is a no-op; a host the app never requested cannot be verified.
    assert verify(stack, files, app, host).returncode == 0
    done = verify(stack, files, app, fresh_host("never"))
    assert done.returncode != 0 and "has not requested" in done.stderr, done.stderr


def test_a_verified_domain_stays_verified_when_the_list_changes(stack, client, app, files):
    host, added = fresh_host(), fresh_host("more")
    files.files[host] = request(client, app, [host])["domains_pending"][host]
    assert verify(stack, files, app, host).returncode == 0
    data = request(client, app, [host, added])
    assert data["domains"] == sorted([host, added]) and list(data["domains_pending"]) == [added], data
    wait_selected(client, host)
    # Dropping a host from the list ends it, verified or not.
    data = request(client, app, [added])
    assert data["domains"] == [added], data


def test_the_operator_allows_a_domain_without_a_proof(stack, client, app):
    host = fresh_host("operator")
    shown = stack.configure_app(app["app_id"], domains=[host])
    assert shown["domains"] == [host] and shown["domains_pending"] == {}, shown
    uid = wait_selected(client, host)
    assert owner_of(client, [app], uid) == [app["app_id"]]


def test_a_host_verified_for_another_app_is_refused_to_the_operator_only(stack, client, app, other_app):
    host = fresh_host("taken")
    stack.configure_app(app["app_id"], domains=[host])
    done = stack.ctl("apps", "settings", other_app["app_id"], "--domains", host)
    assert done.returncode != 0 and "already another app's" in done.stderr, done.stderr
    # Through the admin API: a request like any other (no 422 that tells the host is taken).
    data = request(client, other_app, [host])
    assert list(data["domains_pending"]) == [host], data
    assert owner_of(client, [app, other_app], wait_selected(client, host)) == [app["app_id"]]
