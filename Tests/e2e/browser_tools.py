"""A real browser for the e2e tests: headless Chromium (Debian's `chromium`) driven through
Debian's `chromium-driver` by Selenium, and static page servers that give it web origins of
its own on loopback.

Every origin is `http://localhost:<port>`: Chromium treats `localhost` as a secure context, so
`Secure` and `__Host-` cookies work there without TLS, and two ports of `localhost` are
different origins but the same site (as `app.example.com` and `api.example.com` are), so a
`SameSite=Lax` cookie travels between them, which is what seed 002's web app relies on.
`--host-resolver-rules` pins `localhost` to 127.0.0.1, where everything listens.
"""

import http.server
import json
import os
import re
import shutil
import tempfile
import threading

import pytest

CHROMIUM = os.environ.get("IDENTITY_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("IDENTITY_CHROMEDRIVER", "/usr/bin/chromedriver")
PAGE_TIMEOUT = 20

# A page with nothing of its own: tests run their fetches in it (Browser.run), as a web app's
# script would. The CSP-free, script-free body keeps the console empty unless a test's call
# makes noise.
BLANK_PAGE = b"<!doctype html><html><head><meta charset='utf-8'><title>test origin</title>" \
             b"<link rel='icon' href='data:,'></head><body>test origin</body></html>"


class PageServer:
    """Serves BLANK_PAGE (and 204 for /favicon.ico) on 127.0.0.1:<free port>; `origin` is the
    `http://localhost:<port>` a browser sees."""

    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = BLANK_PAGE if self.path.split("?")[0] in ("/", "/index.html") else b""
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.origin = f"http://localhost:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def chromium_available():
    return os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)


class Browser:
    """One headless Chromium with a fresh profile (no cookies, no cache)."""

    def __init__(self):
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError:
            pytest.fail("selenium is missing: scripts/deps.sh installs it", pytrace=False)
        if not chromium_available():
            pytest.fail(f"{CHROMIUM} or {CHROMEDRIVER} is missing: scripts/deps.sh installs Debian's "
                        "chromium and chromium-driver", pytrace=False)
        self.profile_dir = tempfile.mkdtemp(prefix="identity-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        # --no-sandbox: the harness runs as root (CI does), where Chromium's sandbox refuses to
        # start; the pages it loads are the tests' own. --disable-dev-shm-usage: a small /dev/shm
        # in containers crashes tabs.
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--no-first-run", "--disable-extensions", "--window-size=1280,1600",
                         "--host-resolver-rules=MAP localhost 127.0.0.1",
                         f"--user-data-dir={self.profile_dir}"):
            options.add_argument(argument)
        # Console messages (errors, CSP and CORS refusals) through WebDriver's log endpoint.
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # Service with an explicit path: Selenium Manager never tries to download a driver.
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(PAGE_TIMEOUT)
        self.driver.set_script_timeout(PAGE_TIMEOUT)
        self.console = []

    def open(self, url):
        self.driver.get(url)

    def run(self, script, *args):
        """Runs `script` (the body of an async function: `await`, `return`) in the page, with
        `args` as `args`, and returns what it returns (JSON-able)."""
        wrapped = ("const done = arguments[arguments.length - 1];"
                   "const args = Array.prototype.slice.call(arguments, 0, -1);"
                   f"(async () => {{ {script} }})()"
                   ".then(value => done({value}), error => done({error: String(error)}));")
        result = self.driver.execute_async_script(wrapped, *args)
        if "error" in result:
            raise BrowserScriptError(result["error"])
        return result.get("value")

    def fetch(self, url, **init):
        """`fetch(url, init)` in the page: {status, headers (lower-case names it may read), body
        (parsed JSON or text)}, or {error: "TypeError: Failed to fetch"} when the browser refuses."""
        return self.run("""
            try {
              const r = await fetch(args[0], args[1]);
              const text = await r.text();
              let body = text;
              try { body = JSON.parse(text); } catch (e) {}
              const headers = {};
              r.headers.forEach((value, name) => { headers[name] = value; });
              return {status: r.status, type: r.type, headers, body};
            } catch (e) {
              return {error: String(e)};
            }""", url, init)

    def console_messages(self):
        """Every console message since the last call (kept in self.console too)."""
        fresh = self.driver.get_log("browser")
        self.console.extend(fresh)
        return fresh

    def console_errors(self):
        return [m for m in self.console_messages() if m.get("level") == "SEVERE"]

    def cookies(self):
        """The cookies of the current page's host, HttpOnly ones included (WebDriver sees them)."""
        return self.driver.get_cookies()

    def screenshot(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return self.driver.save_screenshot(path)

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile_dir, ignore_errors=True)


class BrowserScriptError(AssertionError):
    pass


def screenshot_name(nodeid):
    """test_browser.py::test_x[a] → test_browser.py__test_x_a_.png"""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", nodeid.replace("::", "__")) + ".png"


def pretty(value):
    return json.dumps(value, indent=1, sort_keys=True, default=str)
