"""The TypeScript client (clients/typescript) against the real running service, as
test_swift_client.py does for the Swift SDK: compiles the package with Debian's tsc into a
temporary folder, then runs its end-to-end tests (`node --test <out>/test/e2e/`) with the
gateway's URL and a fresh app's key in IDENTITY_TS_E2E_* variables, and asserts that every one of
them ran and passed. The unit tests (stubbed fetch) run first, from the same build.

What a Node test cannot get from the service comes from test_swift_client.Helper on loopback
(IDENTITY_TS_E2E_HELPER_URL): mail codes, SMS codes, the provider stand-in's tokens, the software
passkey authenticator, plus two routes of its own here:
  POST /token/expired {access_token} → {"access_token"}: the same claims, signed with the app's real
                                       key (read from PostgreSQL), expired ten minutes ago
  POST /totp/code {secret, offset?}  → {"code"}: pyotp's code for now (+ offset steps)
  POST /apple/token {nonce_hash, sub?} → an Apple identity token whose `nonce` claim is nonce_hash
                                       verbatim, as Apple puts what the app asked for

The browser test at the end loads a tiny page that imports the built package (ES modules, as a web
app's bundle would) in headless Chromium, on a `session-object` app with cookie transport: signs
in, survives a page reload (`refresh()`, no token in JavaScript), signs out.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import REFRESH_GRACE_SECONDS, REPO_DIR
from test_swift_client import DEEP_LINK_URL, ORIGIN, RATE_LIMITS, RP_ID, Helper

PACKAGE_DIR = os.path.join(REPO_DIR, "clients", "typescript")
NODE_TIMEOUT = 600
TAP_COUNT = re.compile(r"^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$", re.M)


def tool(name, debian_path):
    found = shutil.which(name) or (debian_path if os.access(debian_path, os.X_OK) else None)
    if not found:
        pytest.fail(f"{name} is missing: scripts/deps.sh installs Debian's nodejs and node-typescript", pytrace=False)
    return found


class TSHelper(Helper):
    """test_swift_client.Helper with the two routes only the TypeScript tests use."""

    def answer(self, path, body):
        if path == "/token/expired":
            from jwt_tools import load_signing_key, sign_rs256, split
            header, claims, _, _ = split(body["access_token"])
            kid, key = load_signing_key(claims["aud"])
            assert kid == header["kid"], (kid, header)
            now = int(time.time())
            ttl = claims["exp"] - claims["iat"]
            expired = dict(claims, jti=uuid.uuid4().hex, iat=now - 600 - ttl, exp=now - 600)
            return {"access_token": sign_rs256({"alg": "RS256", "typ": header.get("typ", "at+jwt"), "kid": kid},
                                               expired, key)}
        if path == "/apple/token" and "nonce_hash" in body:
            # As Apple does: the `nonce` claim is what the app put in its request, verbatim (the
            # client's own SHA-256 of the raw nonce), so the service's check tests the client's digest.
            claims = {"sub": body["sub"]} if body.get("sub") else {}
            token, _ = self.providers.apple_token(nonce_hash=body["nonce_hash"], **claims)
            return {"identity_token": token, "authorization_code": "c" + os.urandom(16).hex()}
        if path == "/totp/code":
            import pyotp
            return {"code": pyotp.TOTP(body["secret"]).at(time.time() + 30 * int(body.get("offset", 0)))}
        return super().answer(path, body)


@pytest.fixture(scope="module")
def built():
    """The package compiled (src and tests) into a temporary folder; the tree stays clean."""
    out = tempfile.mkdtemp(prefix="identity-ts-")
    done = subprocess.run([tool("tsc", "/usr/bin/tsc"), "-p", PACKAGE_DIR, "--outDir", out],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"tsc failed:\n{done.stdout}\n{done.stderr}"
    yield out
    shutil.rmtree(out, ignore_errors=True)


def node_test(folder, env=None):
    """`node --test folder/`: (counts from the TAP summary, output)."""
    done = subprocess.run([tool("node", "/usr/bin/node"), "--test", "--test-reporter=tap", folder + "/"], env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=NODE_TIMEOUT)
    output = done.stdout + done.stderr
    counts = {name: int(value) for name, value in TAP_COUNT.findall(output)}
    failed = [line for line in output.splitlines() if line.lstrip().startswith("not ok")]
    tail = "\n".join(output.splitlines()[-200:])
    assert counts, f"no TAP summary from node --test:\n{tail}"
    assert done.returncode == 0 and counts.get("fail", 0) == 0, f"node --test failed {failed}:\n{tail}"
    # What ran, for `pytest -s`.
    print("\n".join(line for line in output.splitlines() if re.match(r"^\s*(ok|not ok) ", line)))
    return counts, output


@pytest.fixture
def ts_app(stack, provider_app_factory):
    app = provider_app_factory()
    stack.configure_app(app["app_id"], webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN], deep_link_url=DEEP_LINK_URL,
                        rate_limits=dict(RATE_LIMITS, refresh_per_ip="1000/1m",
                                                    # the SMS factor texts one number three times in a row
                                                    sms_resend_per_number="off"),
                        sms_allowed_calling_codes="33")
    return app


def test_typescript_client_unit_tests(built):
    counts, _ = node_test(os.path.join(built, "test", "unit"))
    assert counts["skipped"] == 0 and counts["pass"] >= 20, counts


def test_typescript_client_end_to_end(stack, ts_app, smtp_sink, providers, built):
    with TSHelper(smtp_sink, providers, stack) as helper:
        env = dict(os.environ,
                   IDENTITY_TS_E2E_BASE_URL=stack.base_url,
                   IDENTITY_TS_E2E_APP_KEY=ts_app["app_key"],
                   IDENTITY_TS_E2E_HELPER_URL=helper.url,
                   IDENTITY_TS_E2E_REFRESH_GRACE_SECONDS=str(REFRESH_GRACE_SECONDS))
        counts, output = node_test(os.path.join(built, "test", "e2e"), env)
    # Every test ran against the service (the variables were set) and the headline one is there.
    assert counts["skipped"] == 0, output[-4000:]
    assert counts["pass"] >= 15, counts
    assert "100 parallel calls with an expired access token make one refresh" in output


# --- the built package in a browser, cookie transport --------------------------------------------

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>ts client</title>
<link rel="icon" href="data:,"></head><body><pre id="state">loading</pre>
<script type="module">
import { IdentityClient } from "/pkg/src/index.js";
// Seed 002's web app on cookie transport: the session is an HttpOnly cookie. (Its shipped client
// sends no app key and the gateway finds the app by Host; test_browser.py's app already holds
// this gateway's host, and a host is one app's, so this page names its app by key.)
const identity = new IdentityClient({ baseUrl: GATEWAY, appKey: APP_KEY, transport: "cookie" });
window.identity = identity;
window.states = [];
identity.onAuthStateChange((state) => {
  window.states.push(state.status + (state.event ? ":" + state.event : ""));
  document.getElementById("state").textContent = state.status;
});
</script></body></html>"""


class PackagePage:
    """Serves PAGE at / and the compiled package under /pkg/ on 127.0.0.1:<free port>; `origin`
    is the `http://localhost:<port>` the browser sees."""

    def __init__(self, built, gateway):
        self.built, self.gateway, self.app_key = built, gateway, None

        def page():
            return PAGE.replace("GATEWAY", json.dumps(self.gateway)).replace("APP_KEY", json.dumps(self.app_key)).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path.split("?")[0]
                body, kind = None, "text/html; charset=utf-8"
                if path in ("/", "/index.html"):
                    body = page()
                elif path.startswith("/pkg/") and path.endswith(".js") and ".." not in path:
                    file = os.path.join(built, path[len("/pkg/"):])
                    if os.path.isfile(file):
                        with open(file, "rb") as f:
                            body, kind = f.read(), "text/javascript; charset=utf-8"
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://localhost:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def test_built_package_in_a_browser_with_cookie_transport(request, stack, configured_app_factory, client, built):
    from browser_tools import Browser, chromium_available, pretty, screenshot_name
    from identity_client import PASSWORD, unique_email
    from selenium.webdriver.support.ui import WebDriverWait

    if not chromium_available():
        pytest.fail("chromium or chromium-driver is missing: scripts/deps.sh installs them", pytrace=False)
    gateway = f"http://localhost:{stack.port}"
    page = PackagePage(built, gateway)
    app = configured_app_factory(profile="session-object", allowed_origins=[page.origin],
                                 rate_limits={"sign_up_per_ip": "100/1m", "sign_in_per_ip": "100/1m"})
    page.app_key = app["app_key"]
    email = unique_email("ts-cookie")
    assert client.sign_up(app, email=email).status == 201
    browser = Browser()
    failed = True
    try:
        def settle(status):
            WebDriverWait(browser.driver, 15).until(
                lambda d: d.find_element("id", "state").text == status)

        browser.open(page.origin + "/")
        settle("signedOut")  # asked the service: no cookie yet
        result = browser.run("""
            const r = await window.identity.signIn({email: args[0], password: args[1]});
            return {status: r.status, email: r.user && r.user.email, cookie: document.cookie};""", email, PASSWORD)
        assert result == {"status": "signedIn", "email": email, "cookie": ""}, result
        [cookie] = [c for c in browser.cookies() if c["name"] == "__Host-session"]
        assert cookie["httpOnly"] is True and cookie["secure"] is True, cookie
        # No token anywhere the page's JavaScript can reach.
        leaked = browser.run("""
            const seen = JSON.stringify([window.states, window.identity.currentUser, localStorage, sessionStorage]);
            let token = null;
            try { await window.identity.accessToken(); } catch (e) { token = e.code; }
            return {st: seen.includes("st_"), jwt: seen.includes("eyJ"), token};""")
        assert leaked == {"st": False, "jwt": False, "token": "client/unsupported"}, leaked

        # A reload: a new client finds the session through the cookie, and refresh() re-checks it.
        browser.open(page.origin + "/")
        settle("signedIn")
        refreshed = browser.run("""
            await window.identity.refresh();
            const me = await window.identity.me();
            return {email: me.email, states: window.states};""")
        assert refreshed["email"] == email, refreshed
        assert refreshed["states"][:2] == ["unknown", "signedIn:initial"], refreshed
        assert "signedIn:refreshed" in refreshed["states"], refreshed

        signed_out = browser.run("await window.identity.signOut(); return window.states;")
        assert signed_out[-1] == "signedOut:signedOut", signed_out
        assert [c for c in browser.cookies() if c["name"] == "__Host-session"] == []
        browser.open(page.origin + "/")
        settle("signedOut")
        errors = [m for m in browser.console_errors() if "401" not in m.get("message", "")]
        assert errors == [], errors  # the one 401 is the signed-out check itself
        failed = False
    finally:
        if failed:
            folder = os.path.join(stack.log_dir, "browser")
            shot = os.path.join(folder, screenshot_name(request.node.nodeid))
            browser.screenshot(shot)
            browser.console_messages()
            with open(shot[:-4] + ".console.json", "w") as out:
                out.write(pretty(browser.console))
            print(f"browser: screenshot {shot}\n{pretty(browser.console)[:4000]}")
        browser.quit()
        page.stop()
