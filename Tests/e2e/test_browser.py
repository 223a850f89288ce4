"""The service as a browser sees it: headless Chromium (browser_tools.Browser) against
the real gateway at `http://localhost:<port>`, from two web origins of its own on loopback
(browser_tools.PageServer): one in the app's `allowed_origins`, one not.

- `/api/docs` renders without a console error under its Content-Security-Policy, grouped by
  described tags, and its "try it" form signs up (201), fills the token field from that answer
  and reads `GET /v1/me` (200). Searching "sign-in" leaves sign-in shown (its fields, types,
  required marks, answers and `auth/invalid-credential`, its example in the body), sending it
  answers 401 then 200 and fills the token; a problem's `type` opens the section of its code.
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


def operation(browser, method, path):
    """The reference page's section of one operation."""
    found = browser.driver.find_elements(
        By.CSS_SELECTOR, f'section.op[data-method="{method.lower()}"][data-path="{path}"]')
    assert len(found) == 1, f"the reference shows {len(found)} sections for {method} {path}"
    return found[0]


def send_from_docs(browser, section, body=None):
    """Fills an operation's try-it body (else keeps its example), presses Send, and returns the
    answer it shows."""
    if body is not None:
        area = section.find_element(By.CSS_SELECTOR, ".try textarea.body")
        area.clear()
        area.send_keys(body)
    out = section.find_element(By.CSS_SELECTOR, ".try pre.out")
    browser.driver.execute_script("arguments[0].textContent = ''", out)
    section.find_element(By.CSS_SELECTOR, ".try button.send").click()
    WebDriverWait(browser.driver, WAIT).until(lambda _: out.text.strip() and out.text != "Sending…")
    return out.text


def open_reference(browser, gateway, fragment=""):
    browser.open(f"{gateway}/api/docs{fragment}")
    # The page's own script (/api/docs/reference.js) renders the document: were it blocked by
    # the CSP, "Loading…" would stay and the console would say why.
    WebDriverWait(browser.driver, WAIT).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "section.op")) > 20)


def refused_by_browser(result):
    return "error" in result and "Failed to fetch" in result["error"]


# --- the docs page -------------------------------------------------------------------------------

def test_docs_page_renders_under_its_csp_and_try_it_signs_up_then_reads_me(browser, gateway, configured_app_factory):
    app = web_app(configured_app_factory)
    open_reference(browser, gateway)
    assert browser.console_errors() == []
    # Grouped by tag, each tag described.
    tags = browser.driver.find_elements(By.CSS_SELECTOR, "section.tag")
    assert len(tags) > 10 and all(t.find_element(By.CSS_SELECTOR, "p.description").text for t in tags)

    browser.driver.find_element(By.ID, "appKey").send_keys(app["app_key"])
    email = unique_email("docs")
    signed_up = send_from_docs(browser, operation(browser, "POST", "/v1/auth/sign-up"),
                               f'{{"email": "{email}", "password": "{PASSWORD}"}}')
    assert signed_up.startswith("201 "), signed_up
    # The page put the new access token into the token field itself.
    token = browser.driver.find_element(By.ID, "bearer").get_attribute("value")
    assert token.count(".") == 2 and token in signed_up, token

    me = send_from_docs(browser, operation(browser, "GET", "/v1/me"))
    assert me.startswith("200 ") and email in me, me
    assert browser.console_errors() == []


def test_reference_finds_sign_in_shows_its_fields_and_codes_and_sends_it(browser, gateway, client, configured_app_factory):
    app = web_app(configured_app_factory)
    email = unique_email("reference")
    assert client.sign_up(app, email=email).status == 201
    open_reference(browser, gateway)
    browser.driver.find_element(By.ID, "appKey").send_keys(app["app_key"])

    browser.driver.find_element(By.ID, "search").send_keys("sign-in")
    sign_in = operation(browser, "POST", "/v1/auth/sign-in")
    WebDriverWait(browser.driver, WAIT).until(lambda _: not operation(browser, "GET", "/v1/me").is_displayed())
    assert sign_in.is_displayed()
    # Its fields with their types and rules, the password required.
    fields = {row.get_attribute("data-field"): row.text for row in sign_in.find_elements(By.CSS_SELECTOR, "tr.field")}
    assert {"email", "identifier", "password"} <= set(fields), fields
    assert "string" in fields["email"] and "254" in fields["email"], fields["email"]
    assert "required" in fields["password"].lower(), fields["password"]
    assert sign_in.find_element(By.CSS_SELECTOR, "p.description").text
    # Its answers: the session, the MFA challenge and its error codes, each linked.
    statuses = {r.get_attribute("data-status") for r in sign_in.find_elements(By.CSS_SELECTOR, ".response")}
    assert {"200", "202", "401", "422", "429"} <= statuses, statuses
    code = sign_in.find_element(By.CSS_SELECTOR, '.response[data-status="401"] li[data-code="auth/invalid-credential"]')
    assert code.is_displayed() and "wrong" in code.text, code.text
    assert code.find_element(By.TAG_NAME, "a").get_attribute("href").endswith("/api/docs#error-auth/invalid-credential")
    # The example request is in the try-it body already.
    example = sign_in.find_element(By.CSS_SELECTOR, ".try textarea.body").get_attribute("value")
    assert '"password"' in example and '"email"' in example, example

    wrong = send_from_docs(browser, sign_in, f'{{"email": "{email}", "password": "not-the-password-9"}}')
    assert wrong.startswith("401 ") and '"code": "auth/invalid-credential"' in wrong, wrong
    signed_in = send_from_docs(browser, sign_in, f'{{"email": "{email}", "password": "{PASSWORD}"}}')
    assert signed_in.startswith("200 ") and '"access_token"' in signed_in, signed_in
    token = browser.driver.find_element(By.ID, "bearer").get_attribute("value")
    assert token.count(".") == 2 and token in signed_in, token

    # The wrong answer's own link leads to what the code means.
    send_from_docs(browser, sign_in, f'{{"email": "{email}", "password": "not-the-password-9"}}')
    sign_in.find_element(By.LINK_TEXT, "What auth/invalid-credential means").click()
    section = browser.driver.find_element(By.ID, "error-auth/invalid-credential")
    WebDriverWait(browser.driver, WAIT).until(lambda _: section.is_displayed())
    assert "401" in section.text and "wrong" in section.text, section.text
    # Chromium logs each 401 it was answered; nothing else may be there.
    assert [e for e in browser.console_errors()
            if not (e.get("source") == "network" and "/v1/auth/sign-in" in e["message"] and "401" in e["message"])] == []


def test_a_problem_type_link_opens_the_section_of_its_code(browser, gateway, client):
    problem = client.get("/v1/me")
    assert problem.status in (401, 403), problem
    kind, code = problem.json["type"], problem.json["code"]
    assert kind == f"/api/docs#error-{code}", problem.json
    open_reference(browser, gateway, kind[len("/api/docs"):])
    section = browser.driver.find_element(By.ID, f"error-{code}")
    WebDriverWait(browser.driver, WAIT).until(
        lambda d: "targeted" in section.get_attribute("class")
        and d.execute_script("const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight;", section))
    assert section.is_displayed() and code in section.text and str(problem.status) in section.text, section.text
    description = section.find_element(By.CSS_SELECTOR, "p").text
    assert description.strip(), section.text
    # It says which operations answer it, each linked to its section.
    section.find_element(By.TAG_NAME, "summary").click()
    links = section.find_elements(By.CSS_SELECTOR, "li a")
    assert links and all(browser.driver.find_elements(By.ID, link.get_attribute("href").split("#", 1)[1]) for link in links)
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
