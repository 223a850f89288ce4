"""The service as a browser sees it: headless Chromium (browser_tools.Browser) against
the real gateway at `http://localhost:<port>`, from two web origins of its own on loopback
(browser_tools.PageServer): one in the app's `allowed_origins`, one not.

- `/api/docs` renders without a console error under its Content-Security-Policy, and its
  "try it" form signs up (201), fills the token field from that answer and reads `GET /v1/me`
  (200).
- A web page on an allowed origin signs up and refreshes with `fetch` + `X-App-Key` (a
  preflighted request); the same page on the other origin is refused by the browser, and the
  request never reaches the service.
- A `session-object` app with `transport: "cookie"` (seed 002's web app): sign-in from the
  allowed origin sets an HttpOnly `__Host-` cookie that JavaScript cannot read, `GET /v1/me`
  with `credentials: "include"` works, a state-changing call from the other origin (same site,
  so the cookie goes with it) is refused 403 and changes nothing, sign-out clears the cookie.
- The GraphQL page (seed 003) runs a query; skipped while `GET /graphql` answers 404.

A failing test leaves a screenshot and the browser console under the run's log folder
(`<IDENTITY_RUN_DIR>/identity-e2e-*/browser/`), named in the failure report. Run alone:
`scripts/e2e.sh NAME Tests/e2e/test_browser.py` (docs/clients.md, "Browser tests").
"""

import os
import uuid

import pytest

from browser_tools import Browser, PageServer, pretty, screenshot_name
from identity_client import PASSWORD, unique_email

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 15


# --- fixtures ------------------------------------------------------------------------------------

@pytest.fixture
def origins():
    """Two web origins on loopback: `allowed` goes into the test's app's allowed_origins, `other`
    into none. Fresh ports for each test: the gateway caches what it knows of an origin (a
    minute when some app allows it, 5 s when none does), so no test sees another's."""
    allowed, other = PageServer().start(), PageServer().start()
    yield {"allowed": allowed.origin, "other": other.origin}
    allowed.stop()
    other.stop()


@pytest.fixture(scope="session")
def gateway(stack):
    """The gateway as the browser reaches it: `localhost`, a secure context without TLS."""
    return f"http://localhost:{stack.port}"


@pytest.fixture
def browser(request, stack):
    """A fresh headless Chromium; on failure, a screenshot and the console go to the run's log
    folder and are named in the report."""
    browser = Browser()
    yield browser
    report = getattr(request.node, "rep_call", None)
    try:
        if report is not None and report.failed:
            folder = os.path.join(stack.log_dir, "browser")
            shot = os.path.join(folder, screenshot_name(request.node.nodeid))
            saved = browser.screenshot(shot)
            browser.console_messages()
            console_path = shot[:-len(".png")] + ".console.json"
            with open(console_path, "w") as out:
                out.write(pretty(browser.console))
            report.sections.append(("browser", f"url: {browser.driver.current_url}\n"
                                    f"screenshot: {shot if saved else '(failed)'}\nconsole: {console_path}\n"
                                    f"{pretty(browser.console)[:4000]}"))
    finally:
        browser.quit()


def web_app(configured_app_factory, **settings):
    """An app for browser tests: the per-IP limits would count every browser request as
    127.0.0.1 across the run, so they are this app's own (limits are kept per app) and high."""
    limits = {"sign_up_per_ip": "100/1m", "sign_in_per_ip": "100/1m", "refresh_per_ip": "100/1m"}
    return configured_app_factory(rate_limits=limits, **settings)


def details_for(browser, method, path):
    """The docs page's <details> for one operation."""
    for details in browser.driver.find_elements(By.CSS_SELECTOR, "#ops details"):
        if (details.find_element(By.CSS_SELECTOR, ".m").text.strip() == method
                and details.find_element(By.CSS_SELECTOR, "input.path").get_attribute("value") == path):
            return details
    raise AssertionError(f"the docs page lists no {method} {path}")


def send_from_docs(browser, details, body=None):
    """Opens an operation, fills its body, presses Send, and returns the answer it shows."""
    details.find_element(By.TAG_NAME, "summary").click()
    if body is not None:
        area = details.find_element(By.CSS_SELECTOR, "textarea.body")
        area.clear()
        area.send_keys(body)
    details.find_element(By.TAG_NAME, "button").click()
    out = details.find_element(By.CSS_SELECTOR, "pre.out")
    WebDriverWait(browser.driver, WAIT).until(lambda _: out.text.strip())
    return out.text


def refused_by_browser(result):
    return "error" in result and "Failed to fetch" in result["error"]


# --- the docs page -------------------------------------------------------------------------------

def test_docs_page_renders_under_its_csp_and_try_it_signs_up_then_reads_me(browser, gateway, configured_app_factory):
    app = web_app(configured_app_factory)
    browser.open(f"{gateway}/api/docs")
    # The page's own inline script renders the document: were it blocked by the CSP (a hash
    # that no longer matches), "Loading…" would stay and the console would say why.
    WebDriverWait(browser.driver, WAIT).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#ops details")) > 20)
    assert browser.console_errors() == []

    browser.driver.find_element(By.ID, "appKey").send_keys(app["app_key"])
    email = unique_email("docs")
    signed_up = send_from_docs(browser, details_for(browser, "POST", "/v1/auth/sign-up"),
                               f'{{"email": "{email}", "password": "{PASSWORD}"}}')
    assert signed_up.startswith("201 "), signed_up
    # The page put the new access token into the token field itself.
    token = browser.driver.find_element(By.ID, "bearer").get_attribute("value")
    assert token.count(".") == 2 and token in signed_up, token

    me = send_from_docs(browser, details_for(browser, "GET", "/v1/me"))
    assert me.startswith("200 ") and email in me, me
    assert browser.console_errors() == []


# --- CORS with X-App-Key -------------------------------------------------------------------------

def test_allowed_origin_signs_up_and_refreshes_with_fetch(browser, gateway, origins, configured_app_factory, client):
    app = web_app(configured_app_factory, allowed_origins=[origins["allowed"]])
    browser.open(origins["allowed"] + "/")
    email = unique_email("cors")
    # JSON and X-App-Key make this a preflighted request: it is sent only if the OPTIONS passes.
    signed_up = browser.fetch(f"{gateway}/v1/auth/sign-up", method="POST",
                              headers={"Content-Type": "application/json", "X-App-Key": app["app_key"]},
                              body=f'{{"email": "{email}", "password": "{PASSWORD}"}}')
    assert signed_up.get("status") == 201, signed_up
    # Access-Control-Expose-Headers lets the page read the request id and the rate limits.
    assert signed_up["headers"].get("x-request-id"), signed_up["headers"]
    assert '"sign_up_per_ip";r=' in signed_up["headers"].get("ratelimit", ""), signed_up["headers"]
    assert '"sign_up_per_ip";q=100;w=60' in signed_up["headers"].get("ratelimit-policy", ""), signed_up["headers"]
    data = signed_up["body"]["data"]

    refreshed = browser.fetch(f"{gateway}/v1/auth/token/refresh", method="POST",
                              headers={"Content-Type": "application/json", "X-App-Key": app["app_key"]},
                              body=f'{{"refresh_token": "{data["refresh_token"]}"}}')
    assert refreshed.get("status") == 200, refreshed
    assert refreshed["body"]["data"]["refresh_token"] != data["refresh_token"]

    me = browser.fetch(f"{gateway}/v1/me", headers={"X-App-Key": app["app_key"],
                       "Authorization": "Bearer " + refreshed["body"]["data"]["access_token"]})
    assert me.get("status") == 200 and me["body"]["data"]["email"] == email, me
    assert browser.console_errors() == []


def test_other_origin_is_refused_by_the_browser(browser, gateway, origins, configured_app_factory, client):
    app = web_app(configured_app_factory, allowed_origins=[origins["allowed"]])
    browser.open(origins["other"] + "/")
    email = unique_email("cors-other")
    refused = browser.fetch(f"{gateway}/v1/auth/sign-up", method="POST",
                            headers={"Content-Type": "application/json", "X-App-Key": app["app_key"]},
                            body=f'{{"email": "{email}", "password": "{PASSWORD}"}}')
    assert refused_by_browser(refused), refused
    console = " ".join(m["message"] for m in browser.console_errors())
    assert "CORS policy" in console and origins["other"] in console, console
    # The preflight failed, so the sign-up itself was never sent: the address is still free.
    assert client.sign_up(app, email=email).status == 201

    # A read without preflight reaches the service, but the page may not see the answer.
    token = client.sign_in(app, email=email).json["data"]["access_token"]
    unreadable = browser.fetch(f"{gateway}/v1/me", headers={"Authorization": "Bearer " + token})
    assert refused_by_browser(unreadable), unreadable


# --- session-object, cookie transport ------------------------------------------------------------

@pytest.fixture
def cookie_app(configured_app_factory, gateway, origins, stack):
    """Seed 002's web app: profile session-object, found by `Host` (the guide sends no app key),
    so its domain is the gateway's `localhost:<port>` (one app of the run can have it)."""
    app = web_app(configured_app_factory, profile="session-object", domains=[f"localhost:{stack.port}"],
                  allowed_origins=[origins["allowed"]])
    assert app["settings"]["profile"] == "session-object", app["settings"]
    return app


def cookie_named(browser, name):
    return [c for c in browser.cookies() if c["name"] == name]


def test_cookie_session_from_allowed_origin_and_refused_from_other(browser, gateway, origins, cookie_app, client):
    email = unique_email("cookie")
    assert client.sign_up(cookie_app, email=email).status == 201
    browser.open(origins["allowed"] + "/")
    signed_in = browser.fetch(f"{gateway}/v1/auth/login", method="POST", credentials="include",
                              headers={"Content-Type": "application/json"},
                              body=f'{{"email": "{email}", "password": "{PASSWORD}", "transport": "cookie"}}')
    assert signed_in.get("status") == 200, signed_in
    assert set(signed_in["body"]) == {"session", "user"}, signed_in  # no token in the body
    assert signed_in["body"]["user"]["email"] == email

    # The browser kept the cookie (a `__Host-` cookie needs Secure, Path=/ and no Domain, and
    # Secure needs a secure context: localhost is one) and JavaScript cannot read it.
    [cookie] = cookie_named(browser, "__Host-session")
    assert cookie["httpOnly"] is True and cookie["secure"] is True and cookie.get("sameSite") == "Lax", cookie
    assert cookie["path"] == "/" and cookie["domain"] == "localhost", cookie  # host-only, as __Host- requires
    assert browser.run("return document.cookie;") == ""

    me = browser.fetch(f"{gateway}/v1/me", credentials="include")
    assert me.get("status") == 200, me
    assert me["body"]["data"]["email"] == email, me

    # The other origin is the same site (another port of localhost): the cookie goes with its
    # requests, so only the service's Origin check stands between it and the session.
    browser.open(origins["other"] + "/")
    assert refused_by_browser(browser.fetch(f"{gateway}/v1/me", credentials="include"))
    # A "simple" POST needs no preflight: the browser sends it, cookie and Origin included.
    browser.fetch(f"{gateway}/v1/auth/sign-out", method="POST", mode="no-cors", credentials="include")
    # A plain HTML form posting to the service, as a cross-site request forgery would: the
    # browser navigates to the answer, which shows the refusal.
    browser.run("""
        const form = document.createElement("form");
        form.method = "POST"; form.action = args[0];
        document.body.appendChild(form); form.submit();""", f"{gateway}/v1/auth/sign-out")
    WebDriverWait(browser.driver, WAIT).until(lambda d: d.current_url.startswith(gateway))
    page = browser.driver.find_element(By.TAG_NAME, "body").text
    assert "auth/origin-not-allowed" in page, page

    # The session survived both.
    browser.open(origins["allowed"] + "/")
    me = browser.fetch(f"{gateway}/v1/me", credentials="include")
    assert me.get("status") == 200, me

    signed_out = browser.fetch(f"{gateway}/v1/auth/sign-out", method="POST", credentials="include")
    assert signed_out.get("status") == 204, signed_out
    assert cookie_named(browser, "__Host-session") == []
    after = browser.fetch(f"{gateway}/v1/me", credentials="include")
    assert after.get("status") == 401, after


# --- GraphQL (seed 003) --------------------------------------------------------------------------

@pytest.fixture
def graphql_page(client):
    """Skips (before any browser starts) while the GraphQL page is not in this build."""
    page = client.get("/graphql", headers={"Accept": "text/html"})
    if page.status == 404:
        pytest.skip("GET /graphql answers 404: the GraphQL page is not in this build yet")


def test_graphql_page_runs_a_query(graphql_page, browser, gateway, configured_app_factory, client):
    """The page as the graphql branch builds it: fields #appKey, #bearer, #query, a #run button,
    the answer in #out and the schema (fetched by its own script) in #sdl."""
    app = web_app(configured_app_factory)
    email = unique_email("graphql")
    signed_up = client.sign_up(app, email=email)
    assert signed_up.status == 201, signed_up
    browser.open(f"{gateway}/graphql")
    driver = browser.driver
    # Its inline script ran under its CSP: it fetched the schema into the page.
    WebDriverWait(driver, WAIT).until(lambda d: "me" in d.find_element(By.ID, "sdl").text)
    driver.find_element(By.ID, "appKey").send_keys(app["app_key"])
    driver.find_element(By.ID, "bearer").send_keys(signed_up.json["data"]["access_token"])
    query = driver.find_element(By.ID, "query")
    query.clear()
    query.send_keys("query Me { me { id email } }")
    driver.find_element(By.ID, "run").click()
    out = driver.find_element(By.ID, "out")
    WebDriverWait(driver, WAIT).until(lambda _: out.text.strip())
    assert out.text.startswith("200") and email in out.text and '"errors"' not in out.text, out.text
    assert browser.console_errors() == []
