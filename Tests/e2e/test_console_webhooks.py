"""A webhook endpoint's page in the web console, over plain HTTP (docs/console.md): its delivery
log, replaying its dead-lettered deliveries and rotating its signing secret, each the admin API's
own command audited under that operation's action with the console user as actor. The
receivers are the webhook tests' own (webhook_receiver.py), and their signatures are checked
with the `standardwebhooks` package.

- An admin sees a delivery to the test's receiver in the log, dead-lettered after the stack's
  short retry schedule; replaying it (after a confirmation) says how many were queued, and the
  receiver gets it again with the same webhook-id.
- An overlap outside the declared bounds is refused next to its field, and nothing is audited.
- Rotating (after a confirmation and with a recent sign-in) shows the new secret once, on a
  page that is not stored; it is not in the audit log nor on the next page, and the next
  delivery verifies with it.
- A viewer sees the log but no control, and each action posted anyway is 403 with no audit row.
"""

import re

import db_tools
from admin_tools import admin
from test_console_browser import console, console_user, gateway  # noqa: F401 (fixtures)
from test_console_http import ConsoleSession
from test_webhooks import DEAD_AFTER, create_endpoint, of_user, receiver, verified, wait_until  # noqa: F401


def audit_rows(client, app, action):
    resp = admin(client, app, "GET", f"/v1/admin/audit?action={action}")
    assert resp.status == 200, resp
    return resp.data


def test_an_admin_reads_the_log_replays_dead_letters_and_rotates_the_secret(stack, client, console, gateway, receiver):
    app = stack.create_app()
    receiver.status = 500
    endpoint = create_endpoint(client, app, receiver.url, events=["user.created"])
    email, _ = console_user(stack, client, console, app, "admin", totp=False)
    owner = ConsoleSession(client, gateway, email)
    webhooks = f"/console/apps/{app['app_id']}/webhooks"
    page = f"{webhooks}/{endpoint['id']}"
    assert f'href="{page}"' in owner.get(webhooks).body.decode()

    # A delivery the receiver refuses until it is dead-lettered: its row shows each step.
    uid = client.new_user(app)["user"]["uid"]
    [first, *_] = receiver.wait_for(1, of_user(uid))
    html = wait_until(lambda: (lambda h: h if 'data-state="dead"' in h else None)(owner.get(page).body.decode()),
                      timeout=DEAD_AFTER, what="the dead letter in the console's log")
    row = re.search(r'<tr data-delivery="' + re.escape(first.webhook_id) + r'">.*?</tr>', html, re.S).group(0)
    assert "user.created" in row and "dead_lettered" in row and '<span class="status">500</span>' in row, row
    assert f'action="{page}/replay"' in html and f'action="{page}/rotate-secret"' in html

    # Replay: a confirmation first (nothing queued, nothing audited), then the count.
    asked = owner.post(f"{page}/replay", {})
    assert asked.status == 200 and "Replay the dead-lettered deliveries?" in asked.body.decode(), asked
    assert audit_rows(client, app, "admin.webhooks.replay") == []
    receiver.status = 200
    done = owner.post(f"{page}/replay", {"confirm": "yes"})
    assert done.status == 200 and "Queued 1 dead-lettered delivery again." in done.body.decode(), done
    [row] = audit_rows(client, app, "admin.webhooks.replay")
    assert row["actor"].startswith("console:") and row["detail"]["webhook_id"] == endpoint["id"], row
    tries = len(receiver.messages(of_user(uid)))
    again = receiver.wait_for(tries + 1, of_user(uid))[-1]
    assert again.webhook_id == first.webhook_id
    verified(again, endpoint["secret"])
    wait_until(lambda: 'data-state="delivered"' in owner.get(page).body.decode(), 10, "delivered after the replay")

    # An overlap outside the declared bounds: refused next to its field, nothing audited.
    for value, message in (("604801", "must be an integer from 0 to 604800"), ("-1", "must be an integer from 0 to 604800"),
                           ("a week", "must be a whole number of seconds")):
        refused = owner.post(f"{page}/rotate-secret", {"overlap_seconds": value, "confirm": "yes"})
        body = refused.body.decode()
        assert refused.status == 422 and f'<p class="field-error">{message}</p>' in body, (value, refused)
        assert f'value="{value}"' in body and "whsec_" not in body, value
    assert audit_rows(client, app, "admin.webhooks.rotate_secret") == []

    # Rotation: confirmed, then the new secret once, on a page that is not stored.
    asked = owner.post(f"{page}/rotate-secret", {"overlap_seconds": "0"})
    assert asked.status == 200 and "Rotate this endpoint&#39;s signing secret?" in asked.body.decode(), asked
    rotated = owner.post(f"{page}/rotate-secret", {"overlap_seconds": "0", "confirm": "yes"})
    body = rotated.body.decode()
    assert rotated.status == 200 and "shown only this once" in body, rotated
    assert rotated.header("Cache-Control") == "no-store", rotated.headers
    secret = re.search(r'<code id="webhook-secret">(whsec_[^<]+)</code>', body).group(1)
    assert secret != endpoint["secret"]
    [row] = audit_rows(client, app, "admin.webhooks.rotate_secret")
    assert row["actor"].startswith("console:") and row["detail"]["overlap_seconds"] == 0, row
    everything = admin(client, app, "GET", "/v1/admin/audit").body.decode()
    assert secret not in everything and secret[len("whsec_"):] not in everything
    assert secret not in owner.get(page).body.decode()

    # The next delivery verifies with the new secret.
    uid = client.new_user(app)["user"]["uid"]
    [message] = receiver.wait_for(1, of_user(uid))
    assert verified(message, secret)["data"]["uid"] == uid

    # A sign-in older than a few minutes is asked to sign in again, and nothing is rotated.
    db_tools.rows("update sessions set created_at = now() - interval '10 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = "
                  f"(select uid from users where app_id = {db_tools.literal(console['app_id'])} "
                  f"and email = {db_tools.literal(email)})")
    stale = owner.post(f"{page}/rotate-secret", {"overlap_seconds": "0", "confirm": "yes"})
    assert stale.status == 403 and "needs a sign-in of the last few minutes" in stale.body.decode(), stale
    assert len(audit_rows(client, app, "admin.webhooks.rotate_secret")) == 1


def test_a_viewer_reads_the_log_but_has_no_control_and_forged_posts_are_refused(stack, client, console, gateway, receiver):
    app = stack.create_app()
    endpoint = create_endpoint(client, app, receiver.url, events=["user.created"])
    uid = client.new_user(app)["user"]["uid"]
    [message] = receiver.wait_for(1, of_user(uid))
    email, _ = console_user(stack, client, console, app, "viewer", totp=False)
    viewer = ConsoleSession(client, gateway, email)
    page = f"/console/apps/{app['app_id']}/webhooks/{endpoint['id']}"
    html = wait_until(lambda: (lambda h: h if 'data-state="delivered"' in h else None)(viewer.get(page).body.decode()),
                      timeout=10, what="the delivery in the viewer's log")
    assert f'data-delivery="{message.webhook_id}"' in html and '<span class="status">200</span>' in html
    assert "<form" not in html.split("</header>", 1)[1], "no form but sign-out"
    for action, form in (("replay", {"confirm": "yes"}), ("rotate-secret", {"overlap_seconds": "0", "confirm": "yes"})):
        refused = viewer.post(f"{page}/{action}", form)
        body = refused.body.decode()
        assert refused.status == 403 and "only lets you look" in body and "whsec_" not in body, (action, refused)
    for action in ("admin.webhooks.replay", "admin.webhooks.rotate_secret"):
        assert audit_rows(client, app, action) == [], action
    # The endpoint's secret is still the one it was made with.
    uid = client.new_user(app)["user"]["uid"]
    [message] = receiver.wait_for(1, of_user(uid))
    verified(message, endpoint["secret"])
    assert viewer.get(f"/console/apps/{app['app_id']}/webhooks/whk_none").status == 404
