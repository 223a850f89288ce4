"""Console accounts' own two-step verification and passkeys (docs/console.md, "Your account" and
"Two-step verification"), in headless Chromium with a virtual WebAuthn authenticator (Chromium's
own, through WebDriver), against the real gateway on `http://localhost:<port>` (the passkey
relying party `localhost`).

- With the requirement on, a console account signed in with a password alone lands on its
  Account page; an app's page is refused with a page saying to set it up first, a forged POST of
  a console action (the session's own form token) is refused, and the token worker refuses that
  session as an admin command's authority too. On the Account page it sets up an authenticator
  app (the QR code shown as an image, the code computed here from the key shown), gets its backup
  codes once, signs out and signs in with password and code: the apps are reachable, and the
  worker takes the session.
- A console account adds a passkey on the Account page (`navigator.credentials.create` in
  console.js), signs out, signs in with the passkey alone (usernameless), reaches its apps, and
  removes the passkey.
"""

import json

import pytest

from identity_client import PASSWORD
from test_console_browser import (browser, console, console_user, find, gateway, set_field, shot, submit,  # noqa: F401
                                  text, wait_for)
from test_mfa import code_at, wait_away_from_step_edge


@pytest.fixture(scope="module")
def strict_console(stack, console, gateway):  # noqa: F811
    """The console with two-step verification required (off again afterwards, as the other console
    tests expect) and passkeys on its origin."""
    stack.configure_app(console["app_id"], webauthn_rp_id="localhost", webauthn_origins=[gateway])
    done = stack.ctl("console", "require-mfa", "on")
    assert done.returncode == 0 and json.loads(done.stdout)["require_mfa"] is True, done.stderr
    yield console
    assert stack.ctl("console", "require-mfa", "off").returncode == 0


def password_sign_in(browser, gateway, email):  # noqa: F811
    browser.open(gateway + "/console/sign-in")
    set_field(browser, "#email", email)
    set_field(browser, "#password", PASSWORD)
    submit(browser, "#sign-in")


def sign_out(browser):  # noqa: F811
    submit(browser, "header.top form button")
    assert browser.driver.current_url.endswith("/console/sign-in"), browser.driver.current_url


def session_token(browser):  # noqa: F811
    [token] = [c["value"] for c in browser.cookies() if c["name"] == "__Host-session"]
    return token


def read_settings(app, token):
    """The app's settings read as an admin command published straight to the token worker with
    `token` as its authority: (reply type, reply)."""
    from test_bus_trust import TOKEN_QUEUE, _command
    return _command(TOKEN_QUEUE, "identity.admin.v1.UpdateAppSettings",
                    {"app_id": app["app_id"], "settings_json": "{}", "actor": "console:test"},
                    app["app_id"], caller_token=token)


def test_without_a_second_step_only_the_account_page_then_totp_set_up_and_used(
        stack, client, strict_console, gateway, browser):  # noqa: F811
    from test_bus_trust import ERROR_TYPE

    app = stack.create_app(name="Console strict")
    email, _ = console_user(stack, client, strict_console, app, "owner", totp=False)
    password_sign_in(browser, gateway, email)
    wait_for(browser, lambda: browser.driver.current_url.endswith("/console/account"), "not sent to the Account page")
    assert "needs two-step verification" in text(browser) and find(browser, "#mfa-state.off"), text(browser)
    shot(browser, "30-account-required")

    # Every other page and action is refused, here and at the worker.
    browser.open(f"{gateway}/console/apps/{app['app_id']}/settings")
    assert "Set up two-step verification first" in text(browser) and not find(browser, "#google_client_ids"), text(browser)
    csrf = find(browser, "input[name=csrf]")[0].get_attribute("value")
    forged = browser.run("""
        const r = await fetch(args[0], {method: "POST", body: new URLSearchParams({csrf: args[1], confirm: "yes"})});
        return {status: r.status, text: await r.text()};""", f"{gateway}/console/apps/{app['app_id']}/keys/rotate", csrf)
    assert forged["status"] == 403 and "Set up two-step verification first" in forged["text"], forged
    assert len(client.get(f"/v1/apps/{app['app_id']}/jwks.json").json["keys"]) == 1
    reply_type, reply = read_settings(app, session_token(browser))
    assert reply_type == ERROR_TYPE and reply["code"] == "auth/invalid-token", reply

    # The authenticator app, set up on the Account page.
    browser.open(gateway + "/console/account")
    browser.console_messages()  # the refusals above are logged; what follows must log nothing
    wait_away_from_step_edge()
    submit(browser, "#start-totp")
    secret = find(browser, "#totp-secret")[0].text
    assert browser.run("const img = document.getElementById('totp-qr'); return img.complete && img.naturalWidth > 0;")
    assert not browser.console_errors()  # the QR image breaks no rule of the page's policy
    shot(browser, "31-totp-setup")
    set_field(browser, "#code", "000000" if code_at(secret) != "000000" else "111111")
    submit(browser, "#confirm-totp")
    assert "That code was not accepted" in text(browser), text(browser)
    set_field(browser, "#code", code_at(secret))
    submit(browser, "#confirm-totp")
    codes = [c.text for c in find(browser, "#backup-codes li")]
    assert len(codes) == 10 and "shown only this once" in text(browser), text(browser)
    shot(browser, "32-backup-codes")
    browser.open(gateway + "/console")
    assert browser.driver.current_url.endswith("/console/account")  # this session still signed in without it
    assert find(browser, "#mfa-state.on") and "sign in with your code or your passkey" in text(browser), text(browser)

    sign_out(browser)
    password_sign_in(browser, gateway, email)
    assert "Two-step verification" in text(browser), text(browser)
    find(browser, "#code")[0].send_keys(code_at(secret, 1))  # the current step's code is spent
    submit(browser, "#verify")
    wait_for(browser, lambda: browser.driver.current_url.endswith("/console"), "not signed in")
    assert app["name"] in text(browser), text(browser)
    browser.open(f"{gateway}/console/apps/{app['app_id']}/settings")
    assert find(browser, "#google_client_ids"), text(browser)
    reply_type, reply = read_settings(app, session_token(browser))
    assert reply_type != ERROR_TYPE, reply


def test_a_passkey_added_on_the_account_page_signs_in_alone(stack, client, strict_console, gateway, browser):  # noqa: F811
    from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

    options = VirtualAuthenticatorOptions()
    options.protocol, options.transport = Protocol.CTAP2, Transport.INTERNAL
    options.has_resident_key = options.has_user_verification = options.is_user_verified = True
    browser.driver.add_virtual_authenticator(options)

    app = stack.create_app(name="Console passkey")
    email, _ = console_user(stack, client, strict_console, app, "viewer", totp=False)
    password_sign_in(browser, gateway, email)
    wait_for(browser, lambda: browser.driver.current_url.endswith("/console/account"), "not sent to the Account page")
    assert find(browser, "#no-passkeys")
    set_field(browser, "#passkey-name", "Test laptop")
    submit(browser, "#add-passkey")
    assert "Passkey added." in text(browser), text(browser)
    [row] = find(browser, "#passkeys tbody tr")
    assert "Test laptop" in row.text
    passkey_id = row.get_attribute("data-passkey")
    assert len(browser.driver.get_credentials()) == 1
    shot(browser, "33-passkey-added")

    sign_out(browser)
    assert find(browser, "#sign-in-passkey")[0].is_displayed()
    submit(browser, "#sign-in-passkey")  # no email typed: the authenticator names the account
    wait_for(browser, lambda: browser.driver.current_url.endswith("/console"), "not signed in with the passkey")
    assert app["name"] in text(browser), text(browser)
    shot(browser, "34-passkey-signed-in")
    browser.open(f"{gateway}/console/apps/{app['app_id']}/settings")
    assert find(browser, "#google_client_ids"), text(browser)

    browser.open(gateway + "/console/account")
    submit(browser, f"#remove-{passkey_id}")
    assert "Passkey removed." in text(browser) and find(browser, "#no-passkeys"), text(browser)


def test_the_requirement_is_an_operator_switch(stack, strict_console):
    refused = stack.ctl("console", "require-mfa", "sometimes")
    assert refused.returncode != 0 and "on or off" in refused.stderr, refused.stderr
    again = stack.ctl("console", "init", "--require-mfa", "off")
    assert again.returncode != 0 and "exists already" in again.stderr, again.stderr
