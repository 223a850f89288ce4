"""The web console's Members page over plain HTTP (docs/console.md, Members): forms posted as a
browser would, and as a forger would.

- An owner invites an address: the row shows (not yet a console account), the invitation mail
  reaches the SMTP sink naming the app, the role, the inviter and the console's address; the
  invitee signs up to the console app with that address, verifies it, and then holds the role.
  The audit log has the row, with the owner's console actor.
- An admin or a viewer sees the members but no control; each change posted anyway is refused
  403 by the token worker and changes nothing.
- The app's last owner can be neither removed nor demoted (409); a removed member's next request
  for the app is refused at once; taking `owner` from someone needs a recent sign-in.
- An invitation answers alike whether the address has a console account or not; a malformed
  address is refused next to its field; invitations have a limit per console account.
"""

import re

import db_tools
from admin_tools import admin
from identity_client import PASSWORD, unique_email
from smtp_sink import code_from
from test_console_browser import console, console_user, gateway  # noqa: F401 (fixtures)
from test_console_http import ConsoleSession


def members_path(app):
    return f"/console/apps/{app['app_id']}/members"


def roles_of(app):
    """The app's console roles, as the table has them: {email: role}."""
    return dict(db_tools.rows(f"select email, role from console_roles where app_id = {db_tools.literal(app['app_id'])}"))


def console_uid(console, email):
    [[uid]] = db_tools.rows(f"select uid from users where app_id = {db_tools.literal(console['app_id'])} "
                            f"and email = {db_tools.literal(email)}")
    return uid


def member_audit(client, app):
    rows = []
    for action in ("invite", "role_change", "remove"):
        found = admin(client, app, "GET", f"/v1/admin/audit?action=console.members.{action}")
        assert found.status == 200, found
        rows += found.data
    return rows


def last_seq(smtp_sink):
    messages = smtp_sink.messages()
    return messages[-1].seq if messages else 0


def test_an_owner_invites_and_the_invitee_signs_up_and_holds_the_role(stack, client, console, gateway, smtp_sink):
    app = stack.create_app()
    owner_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, owner_email)
    page = owner.get(members_path(app))
    html = page.body.decode()
    assert page.status == 200 and 'id="invite"' in html and f'data-email="{owner_email}"' in html, page

    invitee = unique_email("invitee")
    mark = last_seq(smtp_sink)
    invited = owner.post(members_path(app), {"email": "  " + invitee.upper(), "role": "admin"})
    html = invited.body.decode()
    assert invited.status == 200 and f"Invited {invitee} as admin" in html, invited
    row = re.search(rf'<tr data-email="{re.escape(invitee)}">(.*?)</tr>', html).group(1)
    assert ">admin<" in row and owner_email in row and "not yet" in row, row
    assert roles_of(app)[invitee] == "admin"

    mail = smtp_sink.wait_for(invitee, lambda m: m.kind == "console_invitation", timeout=15, after=mark)
    assert owner_email in mail.subject, mail.summary()
    for part in (app["name"], "admin", owner_email, f"{gateway}/console"):
        assert part in mail.text, (part, mail.text)

    # The invitee signs up to the console app with that address and verifies it.
    signed_up = client.sign_up(console, email=invitee)
    assert signed_up.status == 201, signed_up
    token = signed_up.data["access_token"]
    mark = last_seq(smtp_sink)
    asked = client.request_email_verification(console, token, headers={"Origin": gateway})
    assert asked.status in (200, 202, 204), asked
    code = code_from(smtp_sink.wait_for(invitee, lambda m: m.kind == "email_verification", timeout=15, after=mark))
    # In the sign-up's own session: the password stays (without it, the proof takes the account over).
    verified = client.verify_email(console, invitee, code, token=token, headers={"Origin": gateway})
    assert verified.status in (200, 204), verified

    member = ConsoleSession(client, gateway, invitee)
    apps = member.get("/console").body.decode()
    assert app["app_id"] in apps and ">admin<" in apps, apps
    seen = member.get(members_path(app))
    assert seen.status == 200 and 'id="invite"' not in seen.body.decode(), seen
    now = owner.get(members_path(app)).body.decode()
    row = re.search(rf'<tr data-email="{re.escape(invitee)}">(.*?)</tr>', now).group(1)
    assert "not yet" not in row and ">yes<" in row, row

    [entry] = [row for row in member_audit(client, app) if row["action"] == "console.members.invite"]
    assert entry["actor"] == "console:" + console_uid(console, owner_email), entry
    assert entry["detail"]["email"] == invitee and entry["detail"]["role"] == "admin", entry
    assert entry["detail"]["console_email"] == owner_email, entry


def test_an_admin_or_a_viewer_sees_the_members_but_each_forged_change_is_refused(stack, client, console, gateway):
    app = stack.create_app()
    owner_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    before = None
    for role in ("admin", "viewer"):
        email, _ = console_user(stack, client, console, app, role, totp=False)
        before = roles_of(app)
        forger = ConsoleSession(client, gateway, email)
        page = forger.get(members_path(app))
        html = page.body.decode()
        assert page.status == 200 and owner_email in html and email in html, page
        assert 'id="invite"' not in html and "/members/remove" not in html and "/members/role" not in html, html
        for path, form in ((members_path(app), {"email": unique_email("forged"), "role": "viewer"}),
                           (members_path(app), {"email": unique_email("forged"), "role": "owner"}),
                           (members_path(app) + "/role", {"email": email, "role": "owner"}),
                           (members_path(app) + "/role", {"email": owner_email, "role": "viewer"}),
                           (members_path(app) + "/remove", {"email": owner_email, "confirm": "yes"})):
            refused = forger.post(path, form)
            assert refused.status == 403 and "Only an owner of this app" in refused.body.decode(), (role, path, form, refused)
        assert roles_of(app) == before, role
    assert member_audit(client, app) == []


def test_the_last_owner_stays_and_a_removal_takes_effect_at_once(stack, client, console, gateway):
    app = stack.create_app()
    owner_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, owner_email)
    for path, form in ((members_path(app) + "/remove", {"email": owner_email, "confirm": "yes"}),
                       (members_path(app) + "/role", {"email": owner_email, "role": "admin"})):
        refused = owner.post(path, form)
        assert refused.status == 409 and "last owner" in refused.body.decode(), (path, refused)
    assert roles_of(app) == {owner_email: "owner"}

    admin_email, _ = console_user(stack, client, console, app, "admin", totp=False)
    member = ConsoleSession(client, gateway, admin_email)
    assert member.get(f"/console/apps/{app['app_id']}/users").status == 200
    asked = owner.post(members_path(app) + "/remove", {"email": admin_email})
    assert asked.status == 200 and f"Remove {admin_email}?" in asked.body.decode(), asked
    assert admin_email in roles_of(app)  # the confirmation page alone changes nothing
    removed = owner.post(members_path(app) + "/remove", {"email": admin_email, "confirm": "yes"})
    assert removed.status == 200 and f"{admin_email} is no longer a member." in removed.body.decode(), removed
    for page in ("users", "members", "settings"):
        assert member.get(f"/console/apps/{app['app_id']}/{page}").status == 404, page
    assert app["app_id"] not in member.get("/console").body.decode()

    # A second owner: now either may step down, but taking `owner` needs a recent sign-in.
    second_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    db_tools.rows("update sessions set created_at = now() - interval '10 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = "
                  f"{db_tools.literal(console_uid(console, owner_email))}")
    stale = owner.post(members_path(app) + "/role", {"email": second_email, "role": "viewer"})
    assert stale.status == 403 and "needs a sign-in of the last few minutes" in stale.body.decode(), stale
    assert roles_of(app)[second_email] == "owner"
    owner = ConsoleSession(client, gateway, owner_email)
    demoted = owner.post(members_path(app) + "/role", {"email": second_email, "role": "viewer"})
    assert demoted.status == 200 and f"{second_email} is now viewer." in demoted.body.decode(), demoted
    assert roles_of(app) == {owner_email: "owner", second_email: "viewer"}

    actor = "console:" + console_uid(console, owner_email)
    rows = {(row["action"], row["detail"]["email"]): row for row in member_audit(client, app)}
    assert rows[("console.members.remove", admin_email)]["actor"] == actor
    assert rows[("console.members.remove", admin_email)]["detail"]["previous_role"] == "admin"
    change = rows[("console.members.role_change", second_email)]
    assert change["actor"] == actor and change["detail"]["role"] == "viewer", change
    assert change["detail"]["previous_role"] == "owner", change


def test_invitations_reveal_no_account_are_checked_and_limited(stack, client, console, gateway, smtp_sink):
    app = stack.create_app()
    owner_email, _ = console_user(stack, client, console, app, "owner", totp=False)
    owner = ConsoleSession(client, gateway, owner_email)

    # A console account of that address exists (not a member), or none does: the same answer.
    existing = unique_email("has-account")
    made = admin(client, console, "POST", "/v1/admin/users", {"email": existing, "password": PASSWORD, "email_verified": True})
    assert made.status == 201, made
    absent = unique_email("no-account")
    answers = []
    for email in (existing, absent):
        done = owner.post(members_path(app), {"email": email, "role": "viewer"})
        assert done.status == 200, done
        answers.append(re.search(r'<p class="notice ok"[^>]*>(.*?)</p>', done.body.decode()).group(1).replace(email, "…"))
    assert answers[0] == answers[1], answers
    for email in (existing, absent):
        smtp_sink.wait_for(email, lambda m: m.kind == "console_invitation", timeout=15)
    again = owner.post(members_path(app), {"email": absent, "role": "admin"})
    assert again.status == 409 and "member already" in again.body.decode(), again

    bad = owner.post(members_path(app), {"email": "not an address", "role": "viewer"})
    assert bad.status == 422 and '<p class="field-error">must be a valid email address</p>' in bad.body.decode(), bad
    assert set(roles_of(app)) == {owner_email, existing, absent}

    # 20 invitations an hour per console account: three above (the refused one counts, the
    # malformed address does not), 17 more, then refused.
    answers = [owner.post(members_path(app), {"email": unique_email("many"), "role": "viewer"}).status for _ in range(18)]
    assert answers == [200] * 17 + [429], answers
    assert len(roles_of(app)) == 3 + 17
