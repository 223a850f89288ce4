"""A user's passkeys on the console's user page (docs/console.md), over plain HTTP: a passkey
registered through the API with a software authenticator (webauthn_authenticator.py) is listed
with its name (escaped), when it was added and last used, for every role, and with no control
(the admin API has no removal). The list is the admin API's `GET /v1/admin/users/{uid}/passkeys`,
whose own answer is checked too."""

import webauthn_authenticator as wa
from admin_tools import admin
from test_console_browser import console, console_user, gateway  # noqa: F401 (fixtures)
from test_console_http import ConsoleSession

RP_ID = "console-passkeys.example.test"
ORIGIN = "https://console-passkeys.example.test"
NAME = "Ada's <laptop> & key"


def test_the_users_page_lists_their_passkeys(stack, client, console, gateway):
    app = stack.create_app()
    stack.configure_app(app["app_id"], webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN])
    user = client.new_user(app)
    uid, token = user["user"]["uid"], user["access_token"]
    options = client.post("/v1/me/passkeys/options", app_key=app["app_key"], token=token)
    assert options.status == 200, options
    _, registration = wa.create(options.data, ORIGIN)
    made = client.post("/v1/me/passkeys", {"response": registration, "name": NAME}, app_key=app["app_key"], token=token)
    assert made.status == 201, made
    passkey = made.data

    listed = admin(client, app, "GET", f"/v1/admin/users/{uid}/passkeys")
    assert listed.status == 200 and [p["id"] for p in listed.data] == [passkey["id"]], listed
    assert listed.data[0]["name"] == NAME and listed.data[0]["last_used_at"] is None, listed.data
    assert admin(client, app, "GET", "/v1/admin/users/u_nobody/passkeys").status == 404
    audited = admin(client, app, "GET", "/v1/admin/audit?action=admin.users.passkeys")
    assert audited.status == 200 and [row["target"] for row in audited.data] == ["user:u_nobody", f"user:{uid}"], audited

    for role in ("viewer", "admin"):
        email, _ = console_user(stack, client, console, app, role, totp=False)
        page = ConsoleSession(client, gateway, email).get(f"/console/apps/{app['app_id']}/users/{uid}")
        html = page.body.decode()
        assert page.status == 200, page
        row = html.split(f'<tr data-passkey="{passkey["id"]}">', 1)[1].split("</tr>", 1)[0]
        assert "Ada&#39;s &lt;laptop&gt; &amp; key" in row and passkey["created_at"] in row and "—" in row, row
        assert NAME not in html and "passkeys/" not in html, role  # raw markup never; no remove control

    # A user without one: said so.
    other = client.new_user(app)["user"]["uid"]
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    html = ConsoleSession(client, gateway, email).get(f"/console/apps/{app['app_id']}/users/{other}").body.decode()
    assert 'id="no-passkeys"' in html and 'id="passkeys"' not in html
