"""Getting into the console without an operator (docs/console.md, "Getting in"), over plain
HTTP as a browser posts the forms:

- An owner's invitation mails a link; its page names the app, the role and the address; a weak
  password is refused next to its field; a good one makes the console account (email verified,
  the link proved it) and signs in, landing on the invited app. The link then answers "used"
  (410), a doctored one "does not work" (404, a page, not the API's problem), an expired one
  "expired" (410), and removing the member withdraws it.
- An unverified console account made earlier by someone else with the invitee's address keeps
  nothing: accepting replaces its password and ends its sessions.
- An invitee who has a console account accepts without a password and signs in as before.
- `identityctl console invite` prints the same kind of link.
- A console password is reset from the sign-in page with a mailed code.
- In headless Chromium: the link from the mail opens the page, the password is typed, and the
  browser lands signed in on the invited app (screenshots in `.run/console-shots/`).
"""

import json
import re
import urllib.parse

import db_tools
from identity_client import PASSWORD, random_client_ip, unique_email
from smtp_sink import code_from
from test_console_browser import browser, console, console_user, gateway  # noqa: F401 (fixtures)
from test_console_browser import find, shot, submit, text, wait_for
from test_console_http import ConsoleSession
from test_console_members import last_seq, members_path

LINK_RE = re.compile(r"(https?://\S+/console/invitation\?token=[A-Za-z0-9_-]{43})")


def post_form(client, gateway, path, form, ip, cookie=None):
    headers = {"Origin": gateway, "X-Forwarded-For": ip}
    if cookie:
        headers["Cookie"] = cookie
    return client.request("POST", path, data=urllib.parse.urlencode(form), headers=headers,
                          content_type="application/x-www-form-urlencoded")


def invite(client, stack, console, app, smtp_sink, gateway, role="admin"):
    """An owner invites a new address from the Members page: (invitee, the link's path and query)."""
    owner_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, owner_email)
    invitee = unique_email("joiner")
    mark = last_seq(smtp_sink)
    invited = owner.post(members_path(app), {"email": invitee, "role": role})
    assert invited.status == 200, invited
    mail = smtp_sink.wait_for(invitee, lambda m: m.kind == "console_invitation", timeout=15, after=mark)
    link = LINK_RE.search(mail.text).group(1)
    assert link.startswith(f"{gateway}/console/invitation?token="), link
    return owner, invitee, link[len(gateway):]


def token_of(path):
    return urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)["token"][0]


def test_an_invitee_makes_their_account_from_the_link_and_lands_in_the_app(stack, client, console, gateway, smtp_sink):
    app = stack.create_app()
    _, invitee, link = invite(client, stack, console, app, smtp_sink, gateway)
    ip = random_client_ip()
    page = client.get(link, headers={"X-Forwarded-For": ip})
    html = page.body.decode()
    assert page.status == 200 and 'id="accept-invitation"' in html, page
    assert app["name"] in html and invitee in html and '<strong class="role">admin</strong>' in html, html
    assert (page.header("Content-Security-Policy") or "").startswith("default-src 'self'"), page.headers

    weak = post_form(client, gateway, "/console/invitation", {"token": token_of(link), "password": "short"}, ip)
    assert weak.status == 422 and 'class="field-error"' in weak.body.decode(), weak
    assert not db_tools.rows(f"select 1 from users where app_id = {db_tools.literal(console['app_id'])} "
                             f"and email = {db_tools.literal(invitee)}")

    # Another origin is refused before anything is read.
    forged = client.request("POST", "/console/invitation", data=urllib.parse.urlencode({"token": token_of(link),
                                                                                          "password": PASSWORD}),
                            headers={"Origin": "https://evil.example", "X-Forwarded-For": ip},
                            content_type="application/x-www-form-urlencoded")
    assert forged.status == 403, forged

    accepted = post_form(client, gateway, "/console/invitation", {"token": token_of(link), "password": PASSWORD}, ip)
    assert accepted.status == 303, accepted
    assert accepted.header("Location") == f"/console/apps/{app['app_id']}/connect", accepted.headers
    cookie = accepted.header("Set-Cookie").split(";", 1)[0]
    landed = client.get(accepted.header("Location"), headers={"Cookie": cookie, "X-Forwarded-For": ip})
    html = landed.body.decode()
    assert landed.status == 200 and app["name"] in html, landed
    # The Connect page: the app key and where a backend verifies tokens, copy-ready.
    assert f'<code id="app-key">{app["app_key"]}</code>' in html, html
    assert f'/v1/apps/{app["app_id"]}/jwks.json</code>' in html and 'id="snippet-curl"' in html, html
    [[verified]] = db_tools.rows(f"select email_verified from users where app_id = {db_tools.literal(console['app_id'])} "
                                 f"and email = {db_tools.literal(invitee)}")
    assert verified == "t"

    # The member list says the account exists; the audit log has the acceptance.
    [[detail]] = db_tools.rows(f"select detail from audit_log where app_id = {db_tools.literal(app['app_id'])} "
                               f"and action = 'console.members.accept'")
    detail = json.loads(detail)
    assert detail["email"] == invitee and detail["account"] == "created", detail

    again = client.get(link, headers={"X-Forwarded-For": ip})
    assert again.status == 410 and "used already" in again.body.decode(), again
    reused = post_form(client, gateway, "/console/invitation", {"token": token_of(link), "password": "another passphrase"}, ip)
    assert reused.status == 410, reused
    doctored = client.get(link[:-4] + "AAAA", headers={"X-Forwarded-For": ip})
    assert doctored.status == 404 and 'id="invitation-ended"' in doctored.body.decode(), doctored
    garbage = client.get("/console/invitation?token=%3Cscript%3E", headers={"X-Forwarded-For": ip})
    assert garbage.status == 404 and "<script>" not in garbage.body.decode(), garbage


def test_expired_and_withdrawn_links_say_so(stack, client, console, gateway, smtp_sink):
    app = stack.create_app()
    owner, invitee, link = invite(client, stack, console, app, smtp_sink, gateway)
    ip = random_client_ip()
    db_tools.rows(f"update console_invitations set expires_at = now() - interval '1 second' "
                     f"where app_id = {db_tools.literal(app['app_id'])} and email = {db_tools.literal(invitee)}")
    expired = client.get(link, headers={"X-Forwarded-For": ip})
    assert expired.status == 410 and "expired" in expired.body.decode(), expired
    tried = post_form(client, gateway, "/console/invitation", {"token": token_of(link), "password": PASSWORD}, ip)
    assert tried.status == 410, tried
    assert not db_tools.rows(f"select 1 from users where app_id = {db_tools.literal(console['app_id'])} "
                             f"and email = {db_tools.literal(invitee)}")

    # A second invitation, withdrawn by removing the member: its link no longer works.
    _, other, other_link = invite(client, stack, console, app, smtp_sink, gateway, role="viewer")
    removed = ConsoleSession(client, gateway, owner_email_of(app)).post(
        members_path(app) + "/remove", {"email": other, "confirm": "yes"})
    assert removed.status == 200, removed
    withdrawn = client.get(other_link, headers={"X-Forwarded-For": ip})
    assert withdrawn.status == 404, withdrawn

    # Past the retention period (30 days; the suite purges every second) the expired link's
    # row goes.
    where = f"app_id = {db_tools.literal(app['app_id'])} and email = {db_tools.literal(invitee)}"
    db_tools.rows(f"update console_invitations set expires_at = now() - interval '31 days' where {where}")
    assert client.wait_for(lambda: db_tools.value(f"select count(*) from console_invitations where {where}") == "0",
                           timeout=20, interval=0.5)


def owner_email_of(app):
    [[email]] = db_tools.rows(f"select email from console_roles where app_id = {db_tools.literal(app['app_id'])} "
                              f"and role = 'owner' order by created_at limit 1")
    return email


def test_an_unverified_account_of_the_address_keeps_nothing(stack, client, console, gateway, smtp_sink):
    app = stack.create_app()
    owner_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, owner_email)
    invitee = unique_email("squatted")
    # Someone signs up to the console app first with the invitee's address (never verified).
    squatter = client.sign_up(console, email=invitee, password="the squatter's passphrase")
    assert squatter.status == 201, squatter
    mark = last_seq(smtp_sink)
    assert owner.post(members_path(app), {"email": invitee, "role": "admin"}).status == 200
    mail = smtp_sink.wait_for(invitee, lambda m: m.kind == "console_invitation", timeout=15, after=mark)
    link = LINK_RE.search(mail.text).group(1)[len(gateway):]
    ip = random_client_ip()
    page = client.get(link, headers={"X-Forwarded-For": ip})
    assert page.status == 200 and 'name="password"' in page.body.decode(), page  # a password to choose, not "sign in"
    accepted = post_form(client, gateway, "/console/invitation", {"token": token_of(link), "password": PASSWORD}, ip)
    assert accepted.status == 303, accepted
    # The squatter's password and session are gone; the invitee's password signs in.
    assert client.sign_in(console, email=invitee, password="the squatter's passphrase").status == 401
    assert client.me(console, squatter.data["access_token"]).status == 401
    ConsoleSession(client, gateway, invitee)


def test_an_invitee_with_an_account_accepts_and_signs_in_as_before(stack, client, console, gateway, smtp_sink):
    app = stack.create_app()
    member_email, _ = console_user(stack, client, console, stack.create_app(), "viewer", totp=False)
    owner_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, owner_email)
    mark = last_seq(smtp_sink)
    assert owner.post(members_path(app), {"email": member_email, "role": "viewer"}).status == 200
    mail = smtp_sink.wait_for(member_email, lambda m: m.kind == "console_invitation", timeout=15, after=mark)
    link = LINK_RE.search(mail.text).group(1)[len(gateway):]
    ip = random_client_ip()
    page = client.get(link, headers={"X-Forwarded-For": ip})
    html = page.body.decode()
    assert page.status == 200 and 'name="password"' not in html and 'id="accept"' in html, page
    accepted = post_form(client, gateway, "/console/invitation", {"token": token_of(link)}, ip)
    assert accepted.status == 200 and "Invitation accepted" in accepted.body.decode(), accepted
    member = ConsoleSession(client, gateway, member_email)  # the password is unchanged
    assert app["app_id"] in member.get("/console").body.decode()


def test_identityctl_prints_an_invitation_link(stack, client, console, gateway):
    app = stack.create_app()
    email = unique_email("first-owner")
    done = stack.ctl("console", "invite", "--app", app["app_id"], "--email", email, "--role", "owner")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert LINK_RE.fullmatch(printed["invitation_url"]) and printed["invitation_url"].startswith(gateway), printed
    assert printed["invitation_expires_in"] == 7 * 86400, printed
    link = printed["invitation_url"][len(gateway):]
    ip = random_client_ip()
    accepted = post_form(client, gateway, "/console/invitation", {"token": token_of(link), "password": PASSWORD}, ip)
    assert accepted.status == 303, accepted
    assert app["app_id"] in ConsoleSession(client, gateway, email).get("/console").body.decode()


def test_a_console_password_is_reset_with_a_mailed_code(stack, client, console, gateway, smtp_sink):
    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, "admin", totp=False)
    ip = random_client_ip()
    sign_in_page = client.get("/console/sign-in", headers={"X-Forwarded-For": ip})
    assert 'href="/console/reset"' in sign_in_page.body.decode()
    assert client.get("/console/reset", headers={"X-Forwarded-For": ip}).status == 200
    mark = last_seq(smtp_sink)
    asked = post_form(client, gateway, "/console/reset", {"email": email}, ip)
    assert asked.status == 200 and 'id="reset-confirm"' in asked.body.decode(), asked
    code = code_from(smtp_sink.wait_for(email, lambda m: m.kind == "password_reset", timeout=15, after=mark))
    wrong = post_form(client, gateway, "/console/reset/confirm",
                      {"email": email, "code": "000000" if code != "000000" else "111111", "password": "a new passphrase"}, ip)
    assert wrong.status in (400, 401, 422) and 'id="reset-confirm"' in wrong.body.decode(), wrong
    done = post_form(client, gateway, "/console/reset/confirm", {"email": email, "code": code, "password": "a new passphrase"}, ip)
    assert done.status == 200 and "password is changed" in done.body.decode(), done
    ConsoleSession(client, gateway, email, password="a new passphrase")
    old = post_form(client, gateway, "/console/sign-in", {"email": email, "password": PASSWORD}, ip)
    assert old.status != 303, old


def test_in_a_browser_the_mailed_link_makes_the_account_and_lands_in_the_app(
        stack, client, console, gateway, smtp_sink, browser):
    app = stack.create_app()
    _, invitee, link = invite(client, stack, console, app, smtp_sink, gateway, role="viewer")
    browser.open(gateway + link)
    wait_for(browser, lambda: find(browser, "#accept-invitation"), "no invitation form")
    assert app["name"] in text(browser) and invitee in text(browser), text(browser)
    shot(browser, "40-invitation")
    find(browser, "#password")[0].send_keys("password")  # long enough for the browser, too common for us
    submit(browser, "#accept")
    assert "Not accepted" in text(browser), text(browser)
    shot(browser, "41-invitation-weak-password")
    find(browser, "#password")[0].send_keys(PASSWORD)
    submit(browser, "#accept")
    wait_for(browser, lambda: browser.driver.current_url.endswith(f"/console/apps/{app['app_id']}/connect"),
             "not landed on the invited app")
    assert invitee in text(browser), text(browser)  # signed in: the header names the account
    assert find(browser, "#app-key")[0].text == app["app_key"]  # the one value a client needs
    shot(browser, "42-invitation-landed")
    browser.open(gateway + link)
    wait_for(browser, lambda: find(browser, "#invitation-ended"), "the used link did not say so")
    shot(browser, "43-invitation-used")
