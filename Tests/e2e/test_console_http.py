"""The web console's user actions and rate limits over plain HTTP (docs/console.md): forms
posted as a browser would (the console's Origin, the session cookie, the page's form token),
and as a forger would.

- A viewer's user page has no action forms, and each action posted anyway (with the viewer's
  own form token) is refused 403 with nothing done; an owner's post without the form token or
  from another origin is refused too.
- Reset MFA and delete need a sign-in of the last minutes; ending sessions does not.
- The Keys page rotates the app's secret key with an overlap: the new key is shown once (never
  on a later page nor in the audit log) and works at once, the old one keeps working for the
  overlap; a refused overlap shows next to its field; a viewer's POST is 403; a stale sign-in is
  asked to sign in again.
- The console's forms are rate limited: sign-in forms per IP (`console_sign_in_per_ip`), every
  other form per IP (`console_post_per_ip`) and per console account
  (`console_post_per_account`); a console account's wrong passwords are its sign-in limit's
  (`sign_in_per_identifier` of the console app).
"""

import re
import urllib.parse

import db_tools
from admin_tools import admin
from identity_client import PASSWORD, random_client_ip, unique_email
from test_console_browser import console, console_user, gateway  # noqa: F401 (fixtures)


class ConsoleSession:
    """A console user's cookie and form token, as the browser would hold them."""

    def __init__(self, client, gateway, email, password=PASSWORD, ip=None):
        self.client, self.gateway, self.ip = client, gateway, ip or random_client_ip()
        signed_in = self.post("/console/sign-in", {"email": email, "password": password}, signed_in=False)
        assert signed_in.status == 303 and signed_in.header("Location") == "/console", signed_in
        cookie = signed_in.header("Set-Cookie")
        self.cookie = cookie.split(";", 1)[0]
        page = self.get("/console")
        assert page.status == 200, page
        self.csrf = re.search(r'name="csrf" value="([^"]+)"', page.body.decode()).group(1)

    def get(self, path):
        return self.client.get(path, headers={"Cookie": self.cookie, "X-Forwarded-For": self.ip})

    def post(self, path, form, *, signed_in=True, origin=None, csrf=True):
        fields = dict(form)
        if signed_in and csrf:
            fields["csrf"] = self.csrf
        headers = {"Origin": origin or self.gateway, "X-Forwarded-For": self.ip}
        if signed_in:
            headers["Cookie"] = self.cookie
        return self.client.request("POST", path, data=urllib.parse.urlencode(fields), headers=headers,
                                   content_type="application/x-www-form-urlencoded")


def two_sessions(client, app):
    """A user of `app` signed in twice: (uid, [sign-in data, sign-in data])."""
    email = unique_email("victim")
    first = client.sign_up(app, email=email)
    assert first.status == 201, first
    second = client.sign_in(app, email=email)
    assert second.status == 200, second
    return first.data["user"]["uid"], [first.data, second.data]


def test_a_viewer_gets_no_user_actions_and_each_forged_one_is_refused(stack, client, console, gateway):
    app = stack.create_app()
    uid, sessions = two_sessions(client, app)
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    viewer = ConsoleSession(client, gateway, email)
    base = f"/console/apps/{app['app_id']}/users/{uid}"
    page = viewer.get(base)
    assert page.status == 200, page
    html = page.body.decode()
    assert sessions[0]["session_id"] in html  # the viewer sees the sessions…
    for action in ("end-sessions", "reset-mfa", "delete", "disable", f"sessions/{sessions[0]['session_id']}/end"):
        assert f'action="{base}/{action}"' not in html, action  # …and no form that acts on them
        refused = viewer.post(f"{base}/{action}", {"confirm": "yes"})
        assert refused.status == 403 and "only lets you look" in refused.body.decode(), (action, refused)
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").status == 200
    assert len(admin(client, app, "GET", f"/v1/admin/users/{uid}/sessions").data) == 2
    for data in sessions:
        assert client.me(app, data["access_token"]).status == 200


def test_an_owner_action_needs_the_form_token_and_the_origin_and_a_recent_sign_in(stack, client, console, gateway):
    app = stack.create_app()
    uid, sessions = two_sessions(client, app)
    email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, email)
    base = f"/console/apps/{app['app_id']}/users/{uid}"
    assert f'action="{base}/delete"' in owner.get(base).body.decode()
    no_token = owner.post(f"{base}/end-sessions", {"confirm": "yes"}, csrf=False)
    assert no_token.status == 403 and "not sent from the console" in no_token.body.decode(), no_token
    elsewhere = owner.post(f"{base}/delete", {"confirm": "yes"}, origin="http://attacker.example")
    assert elsewhere.status == 403, elsewhere
    assert client.me(app, sessions[0]["access_token"]).status == 200

    # Without confirm=yes, only the confirmation page: nothing is done.
    asked = owner.post(f"{base}/delete", {})
    assert asked.status == 200 and "cannot be undone" in asked.body.decode(), asked
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").status == 200

    db_tools.rows("update sessions set created_at = now() - interval '10 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = "
                  f"(select uid from users where app_id = {db_tools.literal(console['app_id'])} "
                  f"and email = {db_tools.literal(email)})")
    for action in ("delete", "reset-mfa"):
        stale = owner.post(f"{base}/{action}", {"confirm": "yes"})
        assert stale.status == 403 and "needs a sign-in of the last few minutes" in stale.body.decode(), (action, stale)
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").status == 200
    # Ending sessions signs the user out without touching the account: no fresh sign-in needed.
    ended = owner.post(f"{base}/end-sessions", {"confirm": "yes"})
    assert ended.status == 200 and "Ended 2 sessions." in ended.body.decode(), ended
    for data in sessions:
        assert client.refresh(app, data["refresh_token"]).status == 401
    gone = owner.post(f"{base}/sessions/{sessions[0]['session_id']}/end", {"confirm": "yes"})
    assert gone.status == 200 and "That session had ended already." in gone.body.decode(), gone


def test_console_sign_in_forms_are_limited_per_ip(client, console, gateway):
    ip = random_client_ip()
    headers = {"Origin": gateway, "X-Forwarded-For": ip}
    answers = [client.request("POST", "/console/sign-in", data="email=nobody%40example.com&password=x",
                              headers={"X-Forwarded-For": ip}, content_type="application/x-www-form-urlencoded").status
               for _ in range(30)]
    assert answers == [403] * 30, answers  # forged (no Origin), refused, but counted first
    refused = client.request("POST", "/console/sign-in", data="email=nobody%40example.com&password=x", headers=headers,
                             content_type="application/x-www-form-urlencoded")
    assert refused.status == 429 and int(refused.header("Retry-After")) > 0, refused
    assert "Too many requests" in refused.body.decode()
    code = client.request("POST", "/console/sign-in/code", data="challenge_token=x&code=1", headers=headers,
                          content_type="application/x-www-form-urlencoded")
    assert code.status == 429, code  # the code step shares the budget
    other = client.request("POST", "/console/sign-in", data="email=nobody%40example.com&password=x",
                           headers={"Origin": gateway}, content_type="application/x-www-form-urlencoded")
    assert other.status == 401, other  # another address is not held back


def test_a_console_accounts_wrong_passwords_are_limited(stack, client, console, gateway):
    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, "owner", totp=False)
    form = urllib.parse.urlencode({"email": email, "password": "wrong password"})
    answers = [client.request("POST", "/console/sign-in", data=form, headers={"Origin": gateway},
                              content_type="application/x-www-form-urlencoded").status for _ in range(11)]
    assert answers == [401] * 10 + [429], answers  # from 11 addresses: the account's own budget
    assert client.request("POST", "/console/sign-in", data=urllib.parse.urlencode({"email": email, "password": PASSWORD}),
                          headers={"Origin": gateway}, content_type="application/x-www-form-urlencoded").status == 429


def test_console_forms_are_limited_per_account_and_per_ip(stack, client, console, gateway):
    app = stack.create_app()
    uid, _ = two_sessions(client, app)
    email, _ = console_user(stack, client, console, app, "admin", totp=False)
    base = f"/console/apps/{app['app_id']}/users/{uid}"
    owner = ConsoleSession(client, gateway, email)
    answers = []
    for _ in range(61):
        owner.ip = random_client_ip()  # a new address each time: the account's budget alone
        answers.append(owner.post(f"{base}/end-sessions", {}).status)  # the confirmation page
    assert answers == [200] * 60 + [429], answers

    ip = random_client_ip()
    answers = [client.request("POST", base + "/end-sessions", data="", headers={"X-Forwarded-For": ip, "Origin": gateway},
                              content_type="application/x-www-form-urlencoded").status for _ in range(121)]
    assert answers == [401] * 120 + [429], answers  # signed out (refused), but counted per address first


def test_a_viewer_sees_the_webhooks_but_cannot_add_change_or_delete_one(stack, client, console, gateway):
    app = stack.create_app()
    made = admin(client, app, "POST", "/v1/admin/webhooks", {"url": "http://127.0.0.1:9/viewer-hooks"})
    assert made.status == 201, made
    webhook_id = made.data["id"]
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    viewer = ConsoleSession(client, gateway, email)
    base = f"/console/apps/{app['app_id']}/webhooks"
    page = viewer.get(base)
    assert page.status == 200, page
    html = page.body.decode()
    assert "http://127.0.0.1:9/viewer-hooks" in html and 'id="add-webhook"' not in html and "<button id=\"delete-" not in html, html
    assert viewer.post(base, {"url": "https://attacker.example.com/"}).status == 403
    for action in ("disable", "delete"):
        refused = viewer.post(f"{base}/{webhook_id}/{action}", {"confirm": "yes"})
        assert refused.status == 403 and "only lets you look" in refused.body.decode(), (action, refused)
    [endpoint] = admin(client, app, "GET", "/v1/admin/webhooks").data
    assert endpoint["id"] == webhook_id and endpoint["enabled"] is True, endpoint


def test_an_admin_rotates_the_secret_key_and_sees_the_new_one_once(stack, client, console, gateway):
    app = stack.create_app()
    old_key = app["secret_key"]
    email, _ = console_user(stack, client, console, app, "admin", totp=False)
    owner = ConsoleSession(client, gateway, email)
    keys = f"/console/apps/{app['app_id']}/keys"
    rotate = f"{keys}/secret/rotate"
    assert f'action="{rotate}"' in owner.get(keys).body.decode()

    # A value the API refuses is shown next to the field, and nothing is rotated.
    # Its bounds are the declared ones, checked before anything is audited.
    for value, message in (("2592001", "must be an integer from 0 to 2592000"), ("-1", "must be an integer from 0 to 2592000"),
                           ("a day", "must be a whole number of seconds")):
        refused = owner.post(rotate, {"overlap_seconds": value, "confirm": "yes"})
        html = refused.body.decode()
        assert refused.status == 422 and f'<p class="field-error">{message}</p>' in html, (value, refused)
        assert f'value="{value}"' in html and "sk_" not in html, value
    unaudited = admin(client, app, "GET", "/v1/admin/audit?action=admin.secret_keys.rotate", key=old_key)
    assert unaudited.status == 200 and unaudited.data == [], unaudited

    asked = owner.post(rotate, {"overlap_seconds": "3600"})
    assert asked.status == 200 and "Rotate the secret key?" in asked.body.decode(), asked
    assert "sk_" not in asked.body.decode()
    done = owner.post(rotate, {"overlap_seconds": "3600", "confirm": "yes"})
    html = done.body.decode()
    assert done.status == 200 and "shown only this once" in html, done
    assert done.header("Cache-Control") == "no-store", done.headers
    new_key = re.search(r'<code id="secret-key">(sk_[^<]+)</code>', html).group(1)
    assert new_key != old_key

    # The new key works at once; the old one keeps working for the overlap.
    audit = admin(client, app, "GET", "/v1/admin/audit?action=admin.secret_keys.rotate", key=new_key)
    assert audit.status == 200, audit
    assert admin(client, app, "GET", "/v1/admin/audit", key=old_key).status == 200
    rows = [row for row in audit.data if row["detail"].get("overlap_seconds") == 3600]
    assert len(rows) == 1 and rows[0]["actor"].startswith("console:"), audit.data
    # Shown once: not in the audit log, nor on any later page.
    assert new_key not in audit.body.decode() and new_key[3:] not in audit.body.decode()
    for page in (keys, f"/console/apps/{app['app_id']}/audit"):
        later = owner.get(page)
        assert later.status == 200 and new_key not in later.body.decode(), page

    # A sign-in older than a few minutes is asked to sign in again, and nothing is rotated.
    db_tools.rows("update sessions set created_at = now() - interval '10 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = "
                  f"(select uid from users where app_id = {db_tools.literal(console['app_id'])} "
                  f"and email = {db_tools.literal(email)})")
    stale = owner.post(rotate, {"overlap_seconds": "0", "confirm": "yes"})
    assert stale.status == 403 and "needs a sign-in of the last few minutes" in stale.body.decode(), stale
    assert admin(client, app, "GET", "/v1/admin/audit", key=new_key).status == 200
    assert admin(client, app, "GET", "/v1/admin/audit", key=old_key).status == 200


def test_a_viewer_cannot_rotate_the_secret_key(stack, client, console, gateway):
    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    viewer = ConsoleSession(client, gateway, email)
    keys = f"/console/apps/{app['app_id']}/keys"
    page = viewer.get(keys)
    assert page.status == 200 and "Secret keys" in page.body.decode(), page
    assert "/secret/rotate" not in page.body.decode() and 'id="rotate-secret"' not in page.body.decode()
    refused = viewer.post(f"{keys}/secret/rotate", {"overlap_seconds": "0", "confirm": "yes"})
    assert refused.status == 403 and "only lets you look" in refused.body.decode(), refused
    audit = admin(client, app, "GET", "/v1/admin/audit?action=admin.secret_keys.rotate")
    assert audit.status == 200 and audit.data == [], audit  # refused before any row or command
    assert admin(client, app, "GET", "/v1/admin/audit").status == 200  # the key still the same


def test_a_console_action_is_the_admin_operation_and_its_authority_stays_in_process(stack, client, console, gateway):
    """Disable and enable run the admin API's operations in-process as the console user: the
    audit row is the operation's (its action, the console user as actor, `via: console`), the
    user is refused at once. The console session's token itself is no admin credential on the
    wire: sent to the same operation's HTTP route it is refused like any wrong key."""
    app = stack.create_app()
    uid, sessions = two_sessions(client, app)
    email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, email)
    base = f"/console/apps/{app['app_id']}/users/{uid}"
    done = owner.post(f"{base}/disable", {"confirm": "yes"})
    assert done.status == 200 and "Disabled" in done.body.decode(), done
    assert client.me(app, sessions[0]["access_token"]).status == 401
    rows = admin(client, app, "GET", f"/v1/admin/audit?action=admin.users.disable").data
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["actor"].startswith("console:") and row["target"] == f"user:{uid}", row
    assert row["detail"]["via"] == "console" and row["detail"]["console_email"] == email, row

    token = owner.cookie.split("=", 1)[1]
    forged = client.request("POST", f"/v1/admin/users/{uid}/enable", headers={"Authorization": "Bearer " + token})
    assert forged.status == 401 and forged.json["code"] == "auth/invalid-secret-key", forged
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").data["disabled"] is True

    enabled = owner.post(f"{base}/enable", {"confirm": "yes"})
    assert enabled.status == 200 and "Enabled." in enabled.body.decode(), enabled
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").data["disabled"] is False
    assert len(admin(client, app, "GET", "/v1/admin/audit?action=admin.users.enable").data) == 1


def test_an_owner_creates_a_user_with_the_apis_own_rules_and_a_viewer_cannot(stack, client, console, gateway):
    """New user on the Users page is the admin API's create operation called as the console user:
    its problems next to their fields (the typed values kept, the password never written back),
    its audit row, and a viewer's post refused."""
    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, email)
    users = f"/console/apps/{app['app_id']}/users"
    assert 'id="new-user"' in owner.get(users).body.decode()

    refused = owner.post(users, {"email": "not-an-address", "password": "secret-password-1", "first_name": "<b>Ada</b>"})
    html = refused.body.decode()
    assert refused.status == 422 and "Not created" in html, refused
    assert re.search(r'id="new_email"[^>]*class="invalid"', html) and '<p class="field-error">' in html, html
    assert 'value="&lt;b&gt;Ada&lt;/b&gt;"' in html and "<b>Ada</b>" not in html
    assert "secret-password-1" not in html

    new_email = unique_email("made")
    made = owner.post(users, {"email": new_email, "password": PASSWORD, "first_name": "Ada", "email_verified": "yes"})
    assert made.status == 303 and made.header("Location").startswith(users + "/"), made
    uid = made.header("Location").rsplit("/", 1)[1]
    created = admin(client, app, "GET", f"/v1/admin/users/{uid}").data
    assert created["email"] == new_email and created["first_name"] == "Ada" and created["email_verified"] is True, created
    assert client.sign_in(app, email=new_email).status == 200
    # Every admin call is audited before it runs, the refused one too: both rows are the console user's.
    rows = admin(client, app, "GET", "/v1/admin/audit?action=admin.users.create").data
    assert len(rows) == 2 and all(row["actor"].startswith("console:") and row["detail"]["via"] == "console"
                                  for row in rows), rows

    viewer_email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    viewer = ConsoleSession(client, gateway, viewer_email)
    assert 'id="new-user"' not in viewer.get(users).body.decode()
    forged = viewer.post(users, {"email": unique_email("forged"), "password": PASSWORD})
    assert forged.status == 403, forged
    assert len(admin(client, app, "GET", "/v1/admin/users?limit=100").data) == 1


def test_an_owner_edits_a_user_and_an_emptied_field_is_cleared(stack, client, console, gateway):
    """Edit on a user's page is the admin API's update called as the console user: names set and
    cleared (an empty field is sent as null), roles replaced, metadata a JSON object (anything
    else refused next to its field, nothing saved), a changed email asking for a recent sign-in."""
    app = stack.create_app()
    uid, _ = two_sessions(client, app)
    admin(client, app, "PATCH", f"/v1/admin/users/{uid}", {"last_name": "Lovelace"})
    email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, email)
    edit = f"/console/apps/{app['app_id']}/users/{uid}/edit"
    page = owner.get(edit)
    assert page.status == 200 and 'value="Lovelace"' in page.body.decode(), page
    current = admin(client, app, "GET", f"/v1/admin/users/{uid}").data

    bad = owner.post(edit, {"email": current["email"], "first_name": "Ada", "user_metadata": "[1, 2]"})
    html = bad.body.decode()
    assert bad.status == 422 and re.search(r'id="edit_user_metadata"[^>]*class="invalid"', html), bad
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").data["first_name"] is None

    saved = owner.post(edit, {"email": current["email"], "first_name": "Ada", "last_name": "", "roles": "editor, beta",
                              "user_metadata": '{"plan": "pro"}', "email_verified": "yes"})
    assert saved.status == 200 and "Saved." in saved.body.decode(), saved
    after = admin(client, app, "GET", f"/v1/admin/users/{uid}").data
    assert after["first_name"] == "Ada" and after["last_name"] is None, after
    assert after["roles"] == ["editor", "beta"] and after["user_metadata"] == {"plan": "pro"}, after
    rows = admin(client, app, "GET", "/v1/admin/audit?action=admin.users.update").data
    # The setup's own update (the secret key), then the console's save.
    assert sorted(row["actor"].split(":")[0] for row in rows) == ["console", "secret_key"], rows

    db_tools.rows("update sessions set created_at = now() - interval '10 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = "
                  f"(select uid from users where app_id = {db_tools.literal(console['app_id'])} "
                  f"and email = {db_tools.literal(email)})")
    stale = owner.post(edit, {"email": unique_email("moved"), "first_name": "Ada"})
    assert stale.status == 403 and "needs a sign-in of the last few minutes" in stale.body.decode(), stale
    assert admin(client, app, "GET", f"/v1/admin/users/{uid}").data["email"] == current["email"]


def test_the_users_list_pages_both_ways_in_a_stable_order_and_finds_a_uid(stack, client, console, gateway):
    app = stack.create_app()
    uids = []
    for _ in range(27):
        made = admin(client, app, "POST", "/v1/admin/users", {"email": unique_email("page")})
        assert made.status == 201, made
        uids.append(made.data["uid"])
    newest_first = sorted(uids, reverse=True)
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    viewer = ConsoleSession(client, gateway, email)

    def listed(path):
        page = viewer.get(path)
        assert page.status == 200, page
        html = page.body.decode()
        rows = re.findall(rf'href="/console/apps/{app["app_id"]}/users/([0-9a-z]{{26}})"', html)
        links = dict(re.findall(r'<a id="(previous-page|next-page)" href="([^"]+)"', html))
        return rows, {key: value.replace("&amp;", "&") for key, value in links.items()}

    first, links = listed(f"/console/apps/{app['app_id']}/users")
    assert first == newest_first[:25] and set(links) == {"next-page"}, (first, links)
    second, links = listed(links["next-page"])
    assert second == newest_first[25:] and set(links) == {"previous-page"}, (second, links)
    back, links = listed(links["previous-page"])
    assert back == first and set(links) == {"next-page"}, links
    found, _ = listed(f"/console/apps/{app['app_id']}/users?by=uid&q={uids[3]}")
    assert found == [uids[3]], found
