"""The Swift client SDK (Sources/IdentityClient) against the real running service: runs
the XCTest target IdentityClientE2ETests (`swift test --skip-build --filter IdentityClientE2ETests`)
with the gateway's URL and a fresh app's key in IDENTITY_CLIENT_E2E_* variables, and asserts that
every one of its tests ran and passed.

What a Swift test cannot get from the service itself comes from a small HTTP helper served here,
on loopback, for the duration of the run (IDENTITY_CLIENT_E2E_HELPER_URL):
  POST /mail/mark                     → {"mark"}: the SMTP sink's newest message so far
  POST /mail/code {email, after}      → {"code", "link"}: the code (and sign-in link) of the first
                                        mail to `email` after `after`, as the user reads it
  POST /apple/token {nonce, sub?}     → {"identity_token", "authorization_code"} from the stand-in
  POST /google/token {sub?, email?}   → {"id_token"}
  POST /firebase/token {email?}       → {"id_token"}
  POST /passkey/create {options}      → the software authenticator's PublicKeyCredential (JSON)
  POST /passkey/get {options, credential_id} → its assertion
  POST /tap/reset                     → {}: forget what the tap saw, lose no answer
  POST /tap/lose {path, count}        → {}: the next `count` answers to `path` are thrown away
  POST /tap/requests {path}           → {"requests": [{method, path, body (base64)}]}

The tap (IDENTITY_CLIENT_E2E_TAP_URL) is a loopback proxy between an SDK client and the gateway:
every request is really sent and recorded, and a chosen answer can be thrown away after the
service processed it (the connection closes with no answer), which is what the SDK's retry of a
refresh exists for. It is a separate server rather than a URLProtocol inside the test process:
swift-corelibs-foundation's URLProtocol client must only be called on the session's own work
queue, which a custom protocol cannot reach (a crash under 100 concurrent calls).
The tokens are signed by the provider stand-in's real keys and the passkeys made by the real
software authenticator (webauthn_authenticator.py): nothing of the service is faked.

The test binary is the debug test build (`swift build --build-tests`, which scripts/test.sh runs
before the e2e tests); a build older than the SDK or its tests fails this module rather than
testing stale code.
"""

import base64
import http.client
import json
import os
import re
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

import webauthn_authenticator as wa
from conftest import REFRESH_GRACE_SECONDS, REPO_DIR
from mail_flows import MAIL_TIMEOUT
from smtp_sink import code_from

RP_ID = "sdk.example.test"
ORIGIN = "https://sdk.example.test"
DEEP_LINK_URL = "https://sdk.example.test/auth"
# The Swift tests run from one address (loopback, no X-Forwarded-For): room for all of them.
RATE_LIMITS = {"sign_up_per_ip": "1000/1h", "guest_per_ip": "1000/1h", "code_send_per_ip": "1000/1h",
               "sign_in_per_ip": "1000/1m", "nonce_per_ip": "1000/1m", "code_verify_per_ip": "1000/1h",
               "mfa_verify_per_ip": "1000/1h", "passkey_options_per_ip": "1000/1m",
               # The tests mail one address several times within a minute (code, then link; reset).
               "code_send_per_address": "100/1h", "code_resend_per_address": "100/1m"}
SWIFT_TIMEOUT = 600
LINK_RE = re.compile(r"https://\S+mode=sign_in\S*")


class Tap:
    """The loopback proxy the SDK's tapped clients talk to (see the module's docstring)."""

    HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}

    def __init__(self, upstream):
        self.upstream = urlsplit(upstream)
        self.lock = threading.Lock()
        self.seen, self.to_lose = [], {}
        tap = self

        class Handler(BaseHTTPRequestHandler):
            def forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = urlsplit(self.path).path
                with tap.lock:
                    tap.seen.append({"method": self.command, "path": path, "body": base64.b64encode(body).decode()})
                    lose = tap.to_lose.get(path, 0) > 0
                    if lose:
                        tap.to_lose[path] -= 1
                headers = {k: v for k, v in self.headers.items() if k.lower() not in Tap.HOP_BY_HOP}
                connection = http.client.HTTPConnection(tap.upstream.hostname, tap.upstream.port, timeout=30)
                try:
                    connection.request(self.command, self.path, body=body or None, headers=headers)
                    answer = connection.getresponse()
                    data = answer.read()
                finally:
                    connection.close()
                if lose:  # processed by the service, lost on the way back: close with no answer
                    self.close_connection = True
                    return
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in Tap.HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = forward

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # 100 calls at once connect together
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, path, body):
        with self.lock:
            if path == "/tap/reset":
                self.seen, self.to_lose = [], {}
                return {}
            if path == "/tap/lose":
                self.to_lose[body["path"]] = int(body.get("count", 1))
                return {}
            if path == "/tap/requests":
                return {"requests": [r for r in self.seen if r["path"] == body["path"]]}
        raise ValueError(f"no tap control at {path}")


class Helper:
    """The loopback HTTP helper the Swift tests call (see the module's docstring)."""

    def __init__(self, smtp_sink, providers, stack):
        self.smtp_sink, self.providers, self.stack = smtp_sink, providers, stack
        self.credentials = {}
        self.lock = threading.Lock()
        self.tap = Tap(stack.base_url)
        helper = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                try:
                    status, answer = 200, helper.answer(self.path, body)
                except Exception as exc:  # reported to the Swift test, which fails with it
                    status, answer = 500, {"error": repr(exc)}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, path, body):
        if path.startswith("/tap/"):
            return self.tap.answer(path, body)
        if path == "/mail/mark":
            return {"mark": self.smtp_sink.mark()}
        if path == "/mail/code":
            message = self.smtp_sink.wait_for(body["email"], after=body["after"], timeout=MAIL_TIMEOUT)
            link = LINK_RE.search(message.text or "")
            return {"code": code_from(message), "link": link.group(0) if link else None}
        if path == "/sms/code":
            # The texted code, as the dev transport wrote it (a .sms file beside the mail).
            from test_phone import code_of, wait_sms_file
            return {"code": code_of(wait_sms_file(self.stack, body["phone"], count=body.get("count", 1)))}
        if path == "/apple/token":
            claims = {"sub": body["sub"]} if body.get("sub") else {}
            token, _ = self.providers.apple_token(nonce=body["nonce"], **claims)
            return {"identity_token": token, "authorization_code": "c" + os.urandom(16).hex()}
        if path == "/google/token":
            claims = {k: body[k] for k in ("sub", "email") if body.get(k)}
            return {"id_token": self.providers.google_token(**claims)[0]}
        if path == "/firebase/token":
            claims = {"email": body["email"]} if body.get("email") else {}
            return {"id_token": self.providers.firebase_token(**claims)[0]}
        if path == "/passkey/create":
            cred, registration = wa.create(body["options"], ORIGIN)
            with self.lock:
                self.credentials[registration["id"]] = cred
            return registration
        if path == "/passkey/get":
            with self.lock:
                cred = self.credentials[body["credential_id"]]
            return wa.get(cred, body["options"], ORIGIN)
        raise ValueError(f"no helper at {path}")

    def __enter__(self):
        self.thread.start()
        self.tap.thread.start()
        return self

    def __exit__(self, *exc):
        for server in (self.server, self.tap.server):
            server.shutdown()
            server.server_close()


def swift():
    return shutil.which("swift") or "/opt/swift/usr/bin/swift"


def xctest_binary_path():
    done = subprocess.run([swift(), "build", "--show-bin-path"], cwd=REPO_DIR, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return os.path.join(done.stdout.strip(), "identityPackageTests.xctest")


def newest_source_mtime():
    newest = 0.0
    for folder in ("Sources/IdentityClient", "Tests/IdentityClientE2ETests"):
        for root, _, files in os.walk(os.path.join(REPO_DIR, folder)):
            for name in files:
                newest = max(newest, os.path.getmtime(os.path.join(root, name)))
    return newest


@pytest.fixture
def sdk_app(stack, provider_app_factory):
    app = provider_app_factory()
    stack.configure_app(app["app_id"], webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN], deep_link_url=DEEP_LINK_URL,
                        rate_limits=RATE_LIMITS, sms_allowed_calling_codes="33")
    return app


def test_swift_client_sdk_end_to_end(stack, sdk_app, smtp_sink, providers):
    binary = xctest_binary_path()
    if not os.path.exists(binary) or os.path.getmtime(binary) < newest_source_mtime():
        pytest.fail(f"{binary} is missing or older than the SDK or its tests: run `swift build --build-tests` "
                    "(scripts/test.sh does) before the e2e tests", pytrace=False)
    with Helper(smtp_sink, providers, stack) as helper:
        env = dict(os.environ,
                   IDENTITY_CLIENT_E2E_BASE_URL=stack.base_url,
                   IDENTITY_CLIENT_E2E_APP_KEY=sdk_app["app_key"],
                   IDENTITY_CLIENT_E2E_HELPER_URL=helper.url,
                   IDENTITY_CLIENT_E2E_TAP_URL=helper.tap.url,
                   IDENTITY_CLIENT_E2E_REFRESH_GRACE_SECONDS=str(REFRESH_GRACE_SECONDS))
        done = subprocess.run([swift(), "test", "--skip-build", "--filter", "IdentityClientE2ETests"],
                              cwd=REPO_DIR, env=env, capture_output=True, text=True, timeout=SWIFT_TIMEOUT)
    output = done.stdout + done.stderr
    # What ran, for `pytest -s` (and the report of a failure below).
    print("\n".join(line for line in output.splitlines() if line.startswith(("Test Case", "\t Executed"))))
    tail = "\n".join(output.splitlines()[-150:])
    assert done.returncode == 0, f"swift test failed ({done.returncode}):\n{tail}"
    executed = re.findall(r"Executed (\d+) tests?, with (?:\d+ tests? skipped and )?(\d+) failures?", output)
    assert executed, f"no XCTest summary in the output:\n{tail}"
    total, failures = map(int, executed[-1])
    assert failures == 0, tail
    skipped = re.findall(r"Test Case '([^']+)' skipped", output)
    # Every test ran against the service (the variables were set).
    assert skipped == [], f"skipped: {skipped}\n{tail}"
    assert total >= 15, f"only {total} tests ran:\n{tail}"
