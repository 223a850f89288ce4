"""The console's safe defaults (docs/console.md, "Signing in" and "Pages"), over plain HTTP and
straight on the bus:

- Everything that can hand over an app's accounts or mail (a provider and its trust, origins,
  domains, the deep link, the sender and the texts) takes a sign-in of the last 5 minutes: an
  older console session (aged in the store) is asked to sign in again and nothing changes; a
  setting that hands nothing over (an access token's lifetime) still saves. The token worker
  holds a command published straight to it to the same rule.
- A console session lasts 12 hours at most and ends after 30 minutes unused: the console app is
  made so, and its cookie says so.
"""

import json

import db_tools
from admin_tools import admin
from identity_client import PASSWORD
from test_console_browser import console, console_user, gateway  # noqa: F401 (fixtures)
from test_console_http import ConsoleSession


def age_sessions(console, email, seconds):
    """Every session of the console account `email` signed in `seconds` earlier than it was."""
    db_tools.rows(f"update sessions set created_at = created_at - interval '{int(seconds)} seconds' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and uid = (select uid from users "
                  f"where app_id = {db_tools.literal(console['app_id'])} and email = {db_tools.literal(email)})")


def test_settings_that_hand_over_accounts_take_a_recent_sign_in(stack, client, console, gateway):
    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, "admin", totp=False)
    admin_session = ConsoleSession(client, gateway, email)
    age_sessions(console, email, 400)
    base = f"/console/apps/{app['app_id']}/settings"
    for section, form in (("providers", {"firebase_project_id": "attacker-project", "firebase_trust_email_verified": "true"}),
                          ("providers", {"google_client_ids": "attacker.apps.googleusercontent.com"}),
                          ("mail", {"mail_from_address": "security@attacker.example"})):
        refused = admin_session.post(f"{base}/{section}", form)
        assert refused.status == 403 and "Sign in again" in refused.body.decode(), (section, refused)
    settings = admin(client, app, "GET", "/v1/admin/settings").data
    assert settings["firebase_project_id"] in (None, "") and settings["google_client_ids"] == [], settings
    # What hands nothing over saves with the same session.
    saved = admin_session.post(f"{base}/tokens", {"access_token_ttl": "600"})
    assert saved.status == 200 and "Saved" in saved.body.decode(), saved
    assert admin(client, app, "GET", "/v1/admin/settings").data["access_token_ttl"] == 600

    # A fresh sign-in may.
    fresh = ConsoleSession(client, gateway, email)
    done = fresh.post(f"{base}/providers", {"google_client_ids": "team.apps.googleusercontent.com"})
    assert done.status == 200, done
    assert admin(client, app, "GET", "/v1/admin/settings").data["google_client_ids"] == ["team.apps.googleusercontent.com"]


def test_the_token_worker_asks_a_stale_console_session_for_a_recent_sign_in_too(stack, client, console):
    from test_bus_trust import ERROR_TYPE, TOKEN_QUEUE, _command

    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, "owner", totp=False)
    login = client.post("/v1/auth/login", {"email": email, "password": PASSWORD}, app_key=console["app_key"])
    assert login.status == 200, login
    token = login.json["token"]
    age_sessions(console, email, 400)

    def update(settings):
        return _command(TOKEN_QUEUE, "identity.admin.v1.UpdateAppSettings",
                        {"app_id": app["app_id"], "settings_json": json.dumps(settings), "actor": "console:test"},
                        app["app_id"], caller_token=token)

    reply_type, reply = update({"firebase_project_id": "attacker-project", "firebase_trust_email_verified": True})
    assert reply_type == ERROR_TYPE and reply["code"] == "auth/reauth-required", reply
    reply_type, reply = update({"access_token_ttl": 600})
    assert reply_type != ERROR_TYPE, reply
    settings = admin(client, app, "GET", "/v1/admin/settings").data
    assert settings["access_token_ttl"] == 600 and not settings["firebase_trust_email_verified"], settings


def test_console_sessions_last_12_hours_and_end_after_30_idle_minutes(stack, client, console, gateway):
    [[lifetime, idle]] = db_tools.rows(f"select session_lifetime, session_idle_timeout from apps "
                                       f"where id = {db_tools.literal(console['app_id'])}")
    assert (int(lifetime), int(idle)) == (12 * 3600, 30 * 60)
    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    signed_in = ConsoleSession(client, gateway, email)
    assert signed_in.get("/console").status == 200
    login = client.request("POST", "/console/sign-in", data=f"email={email}&password={PASSWORD}".replace("@", "%40"),
                           headers={"Origin": gateway, "X-Forwarded-For": signed_in.ip},
                           content_type="application/x-www-form-urlencoded")
    cookie = login.header("Set-Cookie")
    max_age = int(cookie.split("Max-Age=", 1)[1].split(";", 1)[0])
    assert 12 * 3600 - 60 <= max_age <= 12 * 3600, cookie
    # Unused for over 30 minutes (aged in the store), the session is refused.
    db_tools.rows(f"update sessions set last_seen_at = now() - interval '31 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = (select uid "
                  f"from users where app_id = {db_tools.literal(console['app_id'])} and email = {db_tools.literal(email)})")
    idle = signed_in.get("/console")
    assert idle.status == 303 and idle.header("Location") == "/console/sign-in", idle
