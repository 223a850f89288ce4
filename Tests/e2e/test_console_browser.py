"""The web console (`/console`, docs/console.md) in a real browser: headless Chromium
(browser_tools.Browser) against the real gateway at `http://localhost:<port>`.

- A console owner (a user of the console app, with TOTP) signs in with password and code,
  sets the app's Google client IDs and Apple key on Settings (a bad key is refused next to its
  field first); a Google sign-in through the API, refused before, then succeeds against the
  stand-in: the setting took effect. The key shows only as "set".
- On Users the owner finds a user, disables them after a confirmation page, and that user's
  session is refused at once. The audit log (API and page) names the console user as actor; on
  Keys the owner rotates the signing key and the JWKS holds the next key.
- A viewer sees no edit controls; a forged POST with the viewer's own form token is refused 403
  and changes nothing; a form posted from another origin is refused too.

- The token worker itself holds a console session token to its role (commands published
  straight to it); disabling with a session older than the step-up window asks to sign in again.

Screenshots of each page go to `.run/console-shots/`.
"""

import json
import os
import pathlib
import re
import time

import pytest

import db_tools
from admin_tools import admin
from browser_tools import Browser, PageServer
from identity_client import PASSWORD, unique_email
from provider_flows import google_body
from provider_standin import GOOGLE_CLIENT_IDS
from test_mfa import code_at, enrol_totp

WAIT = 20
SHOTS = pathlib.Path(__file__).resolve().parents[2] / ".run" / "console-shots"


@pytest.fixture(scope="module")
def gateway(stack):
    return f"http://localhost:{stack.port}"


@pytest.fixture(scope="module")
def console(stack, gateway, client):
    """The console app (`identityctl console init`, once per database), with a secret key this
    test holds (rotated when another run made the app)."""
    done = stack.ctl("console", "init", "--origin", gateway)
    if done.returncode == 0:
        app = json.loads(done.stdout)
    else:
        assert "exists already" in done.stderr, done.stderr
        [[app_id]] = db_tools.rows("select app_id from console_app")
        rotated = stack.ctl("apps", "rotate-secret-key", app_id, "--overlap", "0")
        assert rotated.returncode == 0, rotated.stderr
        app = {"app_id": app_id, "secret_key": json.loads(rotated.stdout)["secret_key"]}
        [[app["app_key"]]] = db_tools.rows(f"select app_key from apps where id={db_tools.literal(app_id)}")
    [[app["name"]]] = db_tools.rows(f"select name from apps where id={db_tools.literal(app['app_id'])}")
    # These tests' console accounts mostly sign in with a password alone (test_console_account_browser.py
    # covers the requirement of a second step).
    assert stack.ctl("console", "require-mfa", "off").returncode == 0
    settings = stack.configure_app(app["app_id"], allowed_origins=[gateway])
    assert settings["profile"] == "session-object", settings
    return app


def console_user(stack, client, console, app, role, *, totp):
    """A console account (email verified, made with the console app's admin API) holding `role`
    in `app`; with `totp`, enrolled in TOTP: (email, secret or None)."""
    email = unique_email(f"console-{role}")
    made = admin(client, console, "POST", "/v1/admin/users",
                 {"email": email, "password": PASSWORD, "email_verified": True})
    assert made.status == 201, made
    secret = None
    if totp:
        signed_in = client.sign_in(console, email=email)
        assert signed_in.status == 200, signed_in
        secret, _ = enrol_totp(client, console, signed_in.data["access_token"])
    invited = stack.ctl("console", "invite", "--app", app["app_id"], "--email", email, "--role", role)
    assert invited.returncode == 0, invited.stderr
    return email, secret


@pytest.fixture
def browser():
    browser = Browser()
    yield browser
    browser.quit()


def shot(browser, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert browser.screenshot(str(SHOTS / f"{name}.png"))


def wait_for(browser, predicate, what):
    deadline = time.time() + WAIT
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}; at {browser.driver.current_url}:\n{text(browser)[:2000]}")


def text(browser):
    from selenium.webdriver.common.by import By
    return browser.driver.find_element(By.TAG_NAME, "body").text


def find(browser, css):
    from selenium.webdriver.common.by import By
    return browser.driver.find_elements(By.CSS_SELECTOR, css)


def submit(browser, css):
    """Clicks `css` and waits for the next page."""
    old = find(browser, "html")[0]
    find(browser, css)[0].click()
    wait_for(browser, lambda: _stale(old), f"no new page after clicking {css}")


def _stale(element):
    """The element is gone with its page (Chromium may also say its node left the document)."""
    from selenium.common.exceptions import WebDriverException
    try:
        element.tag_name
        return False
    except WebDriverException:
        return True


def sign_in(browser, gateway, email, secret=None):
    browser.open(gateway + "/console")
    wait_for(browser, lambda: browser.driver.current_url.endswith("/console/sign-in"), "not sent to sign-in")
    find(browser, "#email")[0].send_keys(email)
    find(browser, "#password")[0].send_keys(PASSWORD)
    submit(browser, "#sign-in")
    if secret:
        assert "Two-step verification" in text(browser), text(browser)
        shot(browser, "02-sign-in-code")
        # The next step's code: enrolment spent this one, and a code counts once.
        find(browser, "#code")[0].send_keys(code_at(secret, 1))
        submit(browser, "#verify")
    wait_for(browser, lambda: browser.driver.current_url.endswith("/console"), "not signed in")
    assert "Your apps" in text(browser), text(browser)


def set_field(browser, css, value):
    field = find(browser, css)[0]
    field.clear()
    field.send_keys(value)


def test_pages_are_served_under_a_strict_policy(client, console):
    page = client.get("/console/sign-in")
    assert page.status == 200, page
    csp = page.header("Content-Security-Policy") or ""
    directives = dict((d.strip().split(" ", 1) + [""])[:2] for d in csp.split(";") if d.strip())
    assert directives["default-src"] == "'self'" and directives["script-src"] == "'self'", csp
    assert directives["style-src"] == "'self'" and directives["frame-ancestors"] == "'none'", csp
    assert "unsafe" not in csp and page.header("X-Frame-Options") == "DENY"
    html = page.body.decode()
    assert "<style" not in html and " style=" not in html and not re.search(r"\son[a-z]+=", html), html
    assert re.findall(r"<script\b[^>]*>", html) == ['<script src="/console/console.js" defer>'], html
    assert "://" not in html, html  # nothing from another host
    for path in ("/console/console.css", "/console/console.js"):
        assert client.get(path).status == 200, path
    # Signed out, a page of an app is a redirect to sign-in, not the app's data.
    assert client.get("/console").status == 303
    settings = client.get(f"/console/apps/{console['app_id']}/settings")
    assert settings.status == 303 and settings.header("Location") == "/console/sign-in", settings
    # A POST without the console's origin is refused before anything is read.
    forged = client.request("POST", "/console/sign-in", data="email=a%40b.c&password=x",
                            content_type="application/x-www-form-urlencoded")
    assert forged.status == 403, forged


def test_owner_sets_providers_then_google_signs_in_and_a_disabled_user_is_refused(
        stack, client, console, gateway, browser, providers):
    app = stack.create_app(name=f"Console demo {os.getpid()}")
    email, secret = console_user(stack, client, console, app, "owner", totp=True)
    body, _ = google_body(providers)
    before = client.google_sign_in(app, **body)
    assert before.status == 422 and before.json["code"] == "auth/provider-not-configured", before

    browser.open(gateway + "/console")
    shot(browser, "01-sign-in")
    sign_in(browser, gateway, email, secret)
    assert app["name"] in text(browser)
    shot(browser, "03-apps")

    browser.open(f"{gateway}/console/apps/{app['app_id']}/settings")
    assert find(browser, "#apple_private_key_state")[0].text == "not set"
    set_field(browser, "#google_client_ids", "\n".join(GOOGLE_CLIENT_IDS))
    set_field(browser, "#apple_team_id", "TEAM123456")
    set_field(browser, "#apple_key_id", "KEY1234567")
    set_field(browser, "#apple_private_key", "not a key")
    submit(browser, "#save-providers")
    # Refused by the admin API's own rule, shown next to its field; nothing saved.
    assert "must be an EC private key in PEM" in text(browser), text(browser)
    assert find(browser, "#apple_private_key[aria-invalid=true]")
    shot(browser, "04-settings-refused")
    assert admin(client, app, "GET", "/v1/admin/settings").data["google_client_ids"] == []

    set_field(browser, "#apple_private_key", "")
    find(browser, "#apple_private_key_file")[0].send_keys(providers.apple_p8_path)  # the upload, read by console.js
    wait_for(browser, lambda: "BEGIN" in find(browser, "#apple_private_key")[0].get_attribute("value"), "key file not read")
    submit(browser, "#save-providers")
    assert "Saved." in text(browser), text(browser)
    assert find(browser, "#apple_private_key_state")[0].text == "set"
    # The key is never shown back: neither its body on the page nor in the field.
    key_body = pathlib.Path(providers.apple_p8_path).read_text().splitlines()[1]
    assert key_body not in browser.driver.page_source
    assert find(browser, "#apple_private_key")[0].get_attribute("value") == ""
    shot(browser, "05-settings-saved")
    # Message texts: the preview renders the typed text with sample values, markup as text.
    set_field(browser, "#template_text", "Hi <b>{{email}}</b>, {{code}}")
    submit(browser, "#preview-template")
    assert find(browser, "#preview-subject")[0].text == "Hi <b>ada@example.com</b>, 123456"
    shot(browser, "05b-template-preview")
    settings = admin(client, app, "GET", "/v1/admin/settings").data
    assert settings["google_client_ids"] == list(GOOGLE_CLIENT_IDS), settings
    assert settings["apple_team_id"] == "TEAM123456" and settings["apple_private_key_set"] is True, settings

    # The setting took effect: a Google sign-in of this app now passes.
    body, claims = google_body(providers)
    signed_in = client.google_sign_in(app, **body)
    assert signed_in.status in (200, 201), signed_in
    user = signed_in.data["user"]
    token = signed_in.data["access_token"]
    assert client.me(app, token).status == 200

    browser.open(f"{gateway}/console/apps/{app['app_id']}/users")
    set_field(browser, "#q", claims["email"][:12])
    submit(browser, "#search")
    assert claims["email"] in text(browser), text(browser)
    shot(browser, "06-users")
    find(browser, f"a[href$='/users/{user['uid']}']")[0].click()
    wait_for(browser, lambda: browser.driver.current_url.endswith(user["uid"]), "user page not opened")
    assert "active" in find(browser, "#user-state")[0].text
    shot(browser, "07-user")
    submit(browser, "#disable")
    assert "Disable " + claims["email"] in text(browser), text(browser)
    shot(browser, "08-disable-confirm")
    assert client.me(app, token).status == 200  # nothing happened before the confirmation
    submit(browser, "#confirm")
    assert "every session of this user has ended" in text(browser), text(browser)
    assert "disabled" in find(browser, "#user-state")[0].text
    shot(browser, "09-user-disabled")
    refused = client.me(app, token)
    assert refused.status == 401, refused
    again = client.google_sign_in(app, **google_body(providers, sub=claims["sub"], email=claims["email"])[0])
    assert again.status == 403 and again.json["code"] == "auth/user-disabled", again

    [[console_uid]] = db_tools.rows(
        f"select uid from users where app_id={db_tools.literal(console['app_id'])} and email={db_tools.literal(email)}")
    audit = admin(client, app, "GET", f"/v1/admin/audit?actor=console:{console_uid}").json["data"]
    actions = {row["action"] for row in audit}
    assert {"admin.settings.update", "admin.users.disable"} <= actions, audit

    # The Audit log page shows the same rows, filtered.
    browser.open(f"{gateway}/console/apps/{app['app_id']}/audit")
    set_field(browser, "#action", "admin.users.disable")
    submit(browser, "#filter")
    rows = [r.text for r in find(browser, "#audit tbody tr")]
    assert len(rows) == 1 and f"console:{console_uid}" in rows[0] and f"user:{user['uid']}" in rows[0], rows
    shot(browser, "14-audit-log")

    # Keys: rotating publishes the next key at once (after a confirmation).
    browser.open(f"{gateway}/console/apps/{app['app_id']}/keys")
    before_keys = [r.text for r in find(browser, "#keys tbody tr")]
    assert len(before_keys) == 1 and "current" in before_keys[0], before_keys
    submit(browser, "#rotate")
    assert "Rotate the signing key?" in text(browser), text(browser)
    submit(browser, "#confirm")
    assert "published; it signs from" in text(browser), text(browser)
    states = sorted(r.text.split()[2] for r in find(browser, "#keys tbody tr"))
    assert states == ["current", "next"], states
    shot(browser, "15-keys-rotated")
    kids = {key["kid"] for key in client.get(f"/v1/apps/{app['app_id']}/jwks.json").json["keys"]}
    assert len(kids) == 2, kids

    # The secret key: rotated with a day's overlap, the new key shown once and working at once.
    set_field(browser, "#overlap_seconds", "86400")
    submit(browser, "#rotate-secret")
    assert "Rotate the secret key?" in text(browser), text(browser)
    submit(browser, "#confirm")
    assert "shown only this once" in text(browser), text(browser)
    new_key = find(browser, "#secret-key")[0].text
    shot(browser, "16-secret-key-rotated")
    assert new_key.startswith("sk_") and admin(client, app, "GET", "/v1/admin/settings", key=new_key).status == 200
    assert admin(client, app, "GET", "/v1/admin/settings").status == 200  # the old key, during the overlap

    # The Members page: the owner listed, with the form to invite another.
    browser.open(f"{gateway}/console/apps/{app['app_id']}/members")
    rows = [row.text for row in find(browser, "#members tbody tr")]
    assert any(email in row and "owner" in row for row in rows), rows
    assert find(browser, "form#invite #send-invite"), text(browser)
    shot(browser, "16b-members")


def test_a_viewer_sees_no_edit_controls_and_a_forged_post_is_refused(stack, client, console, gateway, browser):
    app = stack.create_app(name=f"Console viewer {os.getpid()}")
    victim = client.sign_up(app, email=unique_email("victim"))
    assert victim.status == 201, victim
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    sign_in(browser, gateway, email)

    browser.open(f"{gateway}/console/apps/{app['app_id']}/settings")
    assert "you can see its settings but not change them" in text(browser)
    assert not find(browser, "#save-providers") and not find(browser, "form#settings-providers") and not find(browser, "input[type=file]")
    assert find(browser, "#google_client_ids")[0].get_attribute("readonly") is not None
    shot(browser, "10-viewer-settings")
    browser.open(f"{gateway}/console/apps/{app['app_id']}/users/{victim.data['user']['uid']}")
    assert not find(browser, "#disable") and not find(browser, "#enable")
    shot(browser, "11-viewer-user")
    browser.open(f"{gateway}/console/apps/{app['app_id']}/keys")
    assert find(browser, "#keys tbody tr") and not find(browser, "#rotate")

    # A forged POST from the console's own origin, with the viewer's own form token (from the
    # sign-out form): refused by role before any command.
    csrf = find(browser, "input[name=csrf]")[0].get_attribute("value")
    forged = browser.run("""
        const body = new URLSearchParams({csrf: args[1], google_client_ids: "attacker.apps.googleusercontent.com"});
        const r = await fetch(args[0], {method: "POST", body});
        return {status: r.status, text: await r.text()};""", f"{gateway}/console/apps/{app['app_id']}/settings", csrf)
    assert forged["status"] == 403 and "only lets you look" in forged["text"], forged
    disable = browser.run("""
        const r = await fetch(args[0], {method: "POST", body: new URLSearchParams({csrf: args[1], confirm: "yes"})});
        return r.status;""", f"{gateway}/console/apps/{app['app_id']}/users/{victim.data['user']['uid']}/disable", csrf)
    assert disable == 403
    rotate = browser.run("""
        const r = await fetch(args[0], {method: "POST", body: new URLSearchParams({csrf: args[1], confirm: "yes"})});
        return r.status;""", f"{gateway}/console/apps/{app['app_id']}/keys/rotate", csrf)
    assert rotate == 403
    assert len(client.get(f"/v1/apps/{app['app_id']}/jwks.json").json["keys"]) == 1
    assert not find(browser, "#rotate-secret")
    secret = browser.run("""
        const body = new URLSearchParams({csrf: args[1], overlap_seconds: "0", confirm: "yes"});
        const r = await fetch(args[0], {method: "POST", body});
        return r.status;""", f"{gateway}/console/apps/{app['app_id']}/keys/secret/rotate", csrf)
    assert secret == 403
    assert admin(client, app, "GET", "/v1/admin/audit?action=admin.secret_keys.rotate").data == []
    assert admin(client, app, "GET", "/v1/admin/settings").data["google_client_ids"] == []
    assert client.me(app, victim.data["access_token"]).status == 200

    # Without the form token, or from another origin (same site: the cookie goes along), refused.
    no_token = browser.run("""
        const r = await fetch(args[0], {method: "POST", body: new URLSearchParams({})});
        return r.status;""", f"{gateway}/console/sign-out")
    assert no_token == 403
    other = PageServer().start()
    try:
        browser.open(other.origin + "/")
        browser.run("""
            const form = document.createElement("form");
            form.method = "POST"; form.action = args[0];
            const field = document.createElement("input"); field.name = "csrf"; field.value = args[1];
            form.appendChild(field); document.body.appendChild(form); form.submit();""",
                    f"{gateway}/console/sign-out", csrf)
        wait_for(browser, lambda: browser.driver.current_url.startswith(gateway), "form not posted")
        assert "not sent from the console's own pages" in text(browser), text(browser)
        shot(browser, "12-cross-origin-refused")
    finally:
        other.stop()
    browser.open(gateway + "/console")
    assert "Your apps" in text(browser)  # still signed in: the forged sign-out did nothing


def test_the_token_worker_itself_holds_console_users_to_their_role(stack, client, console):
    """The gateway cannot act for an app on its own word: an admin command published straight to
    the token worker (as the gateway's broker user) with a console session token runs only for
    an owner or admin of that app; a viewer's token reads the settings and changes nothing, a
    console user of another app gets nothing."""
    from test_bus_trust import ERROR_TYPE, TOKEN_QUEUE, _command

    app, elsewhere = stack.create_app(), stack.create_app()
    tokens = {}
    for role, target in (("owner", app), ("viewer", app), ("stranger", elsewhere)):
        email, _ = console_user(stack, client, console, target, "owner" if role == "stranger" else role, totp=False)
        login = client.post("/v1/auth/login", {"email": email, "password": PASSWORD}, app_key=console["app_key"])
        assert login.status == 200 and login.json["token"].startswith("st_"), login
        tokens[role] = login.json["token"]

    def update(token, settings):
        return _command(TOKEN_QUEUE, "identity.admin.v1.UpdateAppSettings",
                        {"app_id": app["app_id"], "settings_json": json.dumps(settings), "actor": "console:test"},
                        app["app_id"], caller_token=token)

    change = {"google_client_ids": ["worker-test.apps.googleusercontent.com"]}
    for role in ("viewer", "stranger"):
        reply_type, reply = update(tokens[role], change)
        assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-token", (role, reply)
    reply_type, reply = update(tokens["viewer"], {})
    assert reply_type != ERROR_TYPE and json.loads(reply["settings_json"])["google_client_ids"] == [], reply
    assert admin(client, app, "GET", "/v1/admin/settings").data["google_client_ids"] == []
    reply_type, reply = update(tokens["owner"], change)
    assert reply_type != ERROR_TYPE, reply
    assert admin(client, app, "GET", "/v1/admin/settings").data["google_client_ids"] == change["google_client_ids"]


def test_disabling_needs_a_recent_sign_in(stack, client, console, gateway, browser):
    """A console session older than the step-up window (aged in the store) may look but not
    disable: the console asks to sign in again, and after that the same action goes through."""
    app = stack.create_app()
    victim = client.sign_up(app, email=unique_email("victim"))
    assert victim.status == 201, victim
    uid = victim.data["user"]["uid"]
    email, _ = console_user(stack, client, console, app, "admin", totp=False)
    sign_in(browser, gateway, email)
    db_tools.rows("update sessions set created_at = now() - interval '10 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = "
                  f"(select uid from users where app_id = {db_tools.literal(console['app_id'])} "
                  f"and email = {db_tools.literal(email)})")
    user_page = f"{gateway}/console/apps/{app['app_id']}/users/{uid}"
    browser.open(user_page)
    submit(browser, "#disable")
    submit(browser, "#confirm")
    assert "needs a sign-in of the last few minutes" in text(browser), text(browser)
    shot(browser, "13-sign-in-again")
    assert client.me(app, victim.data["access_token"]).status == 200  # nothing was done

    submit(browser, "#sign-in-again")
    assert browser.driver.current_url.endswith("/console/sign-in"), browser.driver.current_url
    sign_in(browser, gateway, email)
    browser.open(user_page)
    submit(browser, "#disable")
    submit(browser, "#confirm")
    assert "every session of this user has ended" in text(browser), text(browser)
    assert client.me(app, victim.data["access_token"]).status == 401


def test_an_admin_ends_sessions_resets_mfa_and_deletes_a_user(stack, client, console, gateway, browser):
    """A user's page lists their live sessions. Ending one refuses that session's refresh token
    and leaves the other; ending all refuses the other; resetting two-step verification leaves
    the user none; deleting leaves the admin API nothing to find. Each asks for confirmation
    first (nothing happens before it), and each is in the audit log with the console user."""
    app = stack.create_app(name=f"Console actions {os.getpid()}")
    victim_email = unique_email("victim")
    first = client.sign_up(app, email=victim_email)
    assert first.status == 201, first
    uid = first.data["user"]["uid"]
    second = client.sign_in(app, email=victim_email)
    assert second.status == 200, second
    enrol_totp(client, app, second.data["access_token"])
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").data["mfa_enabled"] is True
    email, _ = console_user(stack, client, console, app, "admin", totp=False)
    sign_in(browser, gateway, email)

    user_page = f"{gateway}/console/apps/{app['app_id']}/users/{uid}"
    browser.open(user_page)
    rows = {r.get_attribute("data-session") for r in find(browser, "#sessions tbody tr")}
    assert rows == {first.data["session_id"], second.data["session_id"]}, rows
    shot(browser, "16-user-sessions")

    submit(browser, f"#end-{first.data['session_id']}")
    assert "End this session of " + victim_email in text(browser), text(browser)
    shot(browser, "17-end-session-confirm")
    assert client.me(app, first.data["access_token"]).status == 200  # nothing happened before the confirmation
    submit(browser, "#confirm")
    assert "Session ended." in text(browser), text(browser)
    assert [r.get_attribute("data-session") for r in find(browser, "#sessions tbody tr")] == [second.data["session_id"]]
    assert client.me(app, first.data["access_token"]).status == 401
    assert client.refresh(app, first.data["refresh_token"]).status == 401
    assert client.me(app, second.data["access_token"]).status == 200

    submit(browser, "#end-sessions")
    assert "End every session of " + victim_email in text(browser), text(browser)
    assert client.me(app, second.data["access_token"]).status == 200  # not before the confirmation
    submit(browser, "#confirm")
    assert "Ended 1 session." in text(browser), text(browser)
    assert find(browser, "#no-sessions") and not find(browser, "#end-sessions")
    shot(browser, "18-sessions-ended")
    refused = client.refresh(app, second.data["refresh_token"])
    assert refused.status == 401, refused
    assert client.me(app, second.data["access_token"]).status == 401

    submit(browser, "#reset-mfa")
    assert "Reset two-step verification of " + victim_email in text(browser), text(browser)
    shot(browser, "19-reset-mfa-confirm")
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").data["mfa_enabled"] is True
    submit(browser, "#confirm")
    assert "no second factor or backup code is left" in text(browser), text(browser)
    assert not find(browser, "#reset-mfa")
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").data["mfa_enabled"] is False
    # Without a second factor the password alone signs in again (no MFA challenge).
    again = client.sign_in(app, email=victim_email)
    assert again.status == 200 and "access_token" in again.data, again

    submit(browser, "#delete")
    assert "Delete " + victim_email in text(browser) and "cannot be undone" in text(browser), text(browser)
    shot(browser, "20-delete-confirm")
    submit(browser, "#confirm")
    assert victim_email + " is deleted" in text(browser), text(browser)
    shot(browser, "21-deleted")
    gone = admin(client, app, "GET", f"/v1/admin/users/{uid}")
    assert gone.status == 404, gone
    assert client.me(app, again.data["access_token"]).status == 401
    browser.open(user_page)
    assert "Not found" in text(browser)

    [[console_uid]] = db_tools.rows(
        f"select uid from users where app_id={db_tools.literal(console['app_id'])} and email={db_tools.literal(email)}")
    audit = admin(client, app, "GET", f"/v1/admin/audit?actor=console:{console_uid}").json["data"]
    assert {(row["action"], row["target"]) for row in audit} >= {
        ("admin.sessions.revoke", f"user:{uid}"), ("admin.sessions.revoke_all", f"user:{uid}"),
        ("admin.users.mfa_reset", f"user:{uid}"), ("admin.users.delete", f"user:{uid}")}, audit
    revoke = next(row for row in audit if row["action"] == "admin.sessions.revoke")
    assert revoke["detail"]["session_id"] == first.data["session_id"] and revoke["detail"]["console_email"] == email, revoke


def test_an_owner_adds_an_endpoint_sees_its_secret_once_then_disables_and_deletes_it(
        stack, client, console, gateway, browser):
    """The Webhooks page: a refused URL is shown next to its field; an added endpoint's secret is
    shown once, and it is the secret the deliveries are signed with (checked with the
    standardwebhooks library); disabling and deleting change what the admin API lists."""
    from standardwebhooks.webhooks import Webhook
    from webhook_receiver import WebhookReceiver

    app = stack.create_app(name=f"Console webhooks {os.getpid()}")
    email, _ = console_user(stack, client, console, app, "owner", totp=False)
    sign_in(browser, gateway, email)
    receiver = WebhookReceiver()
    try:
        page = f"{gateway}/console/apps/{app['app_id']}/webhooks"
        browser.open(page)
        assert "No endpoint yet" in text(browser), text(browser)
        set_field(browser, "#webhook_url", "ftp://example.com/hooks")
        set_field(browser, "#webhook_events", "user.created, Not-An-Event")
        submit(browser, "#add")
        assert "Not added" in text(browser) and find(browser, "#webhook_url[aria-invalid=true]"), text(browser)
        assert find(browser, "#webhook_events[aria-invalid=true]"), text(browser)
        shot(browser, "22-webhook-refused")
        assert admin(client, app, "GET", "/v1/admin/webhooks").data == []

        set_field(browser, "#webhook_url", receiver.url)
        set_field(browser, "#webhook_events", "user.created")
        set_field(browser, "#webhook_description", "from the console")
        submit(browser, "#add")
        secret = find(browser, "#webhook-secret")[0].text
        assert secret.startswith("whsec_") and "shown this once" in text(browser), text(browser)
        shot(browser, "23-webhook-secret")
        [endpoint] = admin(client, app, "GET", "/v1/admin/webhooks").data
        assert endpoint["url"] == receiver.url and endpoint["events"] == ["user.created"], endpoint
        assert endpoint["description"] == "from the console" and endpoint["enabled"] is True, endpoint
        browser.open(page)
        assert secret not in browser.driver.page_source  # once only
        assert [r.get_attribute("data-webhook") for r in find(browser, "#webhooks tbody tr")] == [endpoint["id"]]

        # The secret shown is the one deliveries are signed with.
        made = client.sign_up(app, email=unique_email("hooked"))
        assert made.status == 201, made
        uid = made.data["user"]["uid"]
        [message] = receiver.wait_for(1, lambda m: m.payload["data"].get("uid") == uid)
        assert Webhook(secret).verify(message.body, message.headers)["type"] == "user.created"

        # The endpoint's own page: its delivery log has that delivery, delivered.
        def delivered():  # the log is the page's own: read again until the delivery's state is written
            browser.open(f"{page}/{endpoint['id']}")
            return any("delivered" in row.text for row in find(browser, "#deliveries tbody tr"))
        wait_for(browser, delivered, "the delivery in the endpoint's log")
        shot(browser, "23b-webhook-endpoint")
        browser.open(page)

        submit(browser, f"#disable-{endpoint['id']}")
        assert "Endpoint disabled" in text(browser), text(browser)
        assert "disabled" in find(browser, "#webhooks tbody tr")[0].text
        shot(browser, "24-webhook-disabled")
        assert admin(client, app, "GET", "/v1/admin/webhooks").data[0]["enabled"] is False

        submit(browser, f"#delete-{endpoint['id']}")
        assert "Delete this endpoint?" in text(browser), text(browser)
        assert len(admin(client, app, "GET", "/v1/admin/webhooks").data) == 1  # not before the confirmation
        submit(browser, "#confirm")
        assert "Endpoint deleted." in text(browser) and "No endpoint yet" in text(browser), text(browser)
        shot(browser, "25-webhook-deleted")
        assert admin(client, app, "GET", "/v1/admin/webhooks").data == []
    finally:
        receiver.stop()

    [[console_uid]] = db_tools.rows(
        f"select uid from users where app_id={db_tools.literal(console['app_id'])} and email={db_tools.literal(email)}")
    audit = admin(client, app, "GET", f"/v1/admin/audit?actor=console:{console_uid}").json["data"]
    assert {"admin.webhooks.create", "admin.webhooks.update", "admin.webhooks.delete"} <= {r["action"] for r in audit}, audit
