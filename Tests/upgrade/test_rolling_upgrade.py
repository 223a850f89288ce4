"""A rolling upgrade, step by step, on one database and one vhost: the previous release on this
checkout's schema; this release's gateway beside it; this release's workers beside the previous
ones; the previous workers gone; the previous gateway gone. At each step a user signs up, signs
in, refreshes, reads /me and signs out through the gateways that run, a session started on one
gateway refreshes on the other, a mailed code signs in, and every process is ready.

The tests run in order and share the stack: each one is the next step of the same upgrade."""

import json

import ops_metrics
from identity_client import unique_email
from mail_flows import email_code, email_code_signed_in

GATEWAY = "identity-gateway"


def smoke(upgrade, app, first, second):
    """The flows across two gateways ("old" / "new"): what one starts, the other continues."""
    a, b = upgrade.clients[first], upgrade.clients[second]
    where = f"{first} gateway, then {second} gateway"
    email = unique_email("upgrade")
    signed_up = a.wait_for(lambda: (r := a.sign_up(app, email=email)).status != 503 and r, timeout=30)
    assert signed_up and signed_up.status == 201, (where, signed_up, upgrade.logs())
    signed_in = a.sign_in(app, email=email)
    assert signed_in.status == 200, (where, signed_in)
    refreshed = b.refresh(app, signed_in.data["refresh_token"])
    assert refreshed.status == 200, (where, refreshed)
    me = a.me(app, refreshed.data["access_token"])
    assert me.status == 200 and me.data["email"] == email, (where, me)
    again = a.refresh(app, refreshed.data["refresh_token"])
    assert again.status == 200, (where, again)
    me = b.me(app, again.data["access_token"])
    assert me.status == 200 and me.data["email"] == email, (where, me)
    signed_out = b.sign_out(app, again.data["access_token"])
    assert signed_out.status == 204, (where, signed_out)
    after = a.refresh(app, again.data["refresh_token"])
    assert after.status == 401, (where, "a signed-out session refreshed", after)

    code_email = unique_email("upgrade-code")
    _, code = email_code(a, upgrade.mail, app, code_email)
    email_code_signed_in(b, app, code_email, code, is_new_user=True)
    assert_every_process_ready(upgrade)


def assert_every_process_ready(upgrade):
    dead = upgrade.dead()
    assert not dead, f"exited: {dead}\n{upgrade.logs()}"
    for process in upgrade.running:
        status, _, body = ops_metrics.fetch(process.readyz())
        assert status == 200, (process, body)
    for label in {p.release.label for p in upgrade.running if p.name == GATEWAY}:
        ready = upgrade.clients[label].get("/readyz")
        assert ready.status == 200, (label, ready)


def refreshes_on(upgrade, app, session, label):
    """The kept session (signed in on the previous release) refreshes on gateway `label`."""
    client = upgrade.clients[label]
    refreshed = client.refresh(app, session["refresh_token"])
    assert refreshed.status == 200, (label, refreshed)
    session.update(refreshed.data)
    me = client.me(app, session["access_token"])
    assert me.status == 200 and me.data["email"] == session["email"], (label, me)


class State:
    app = None
    session = None


def after_the_previous_step():
    assert State.app and State.session, "an earlier step of the upgrade failed: this one cannot run"


def test_the_previous_release_runs_on_this_schema(upgrade):
    # This release's migrations, then the previous release's processes alone.
    upgrade.ctl(upgrade.new, "migrate", role="identity-owner")
    upgrade.start(upgrade.old, *upgrade.old.workers)
    upgrade.start(upgrade.old, GATEWAY)
    State.app = json.loads(upgrade.ctl(upgrade.old, "apps", "create", "--name", "upgrade-smoke"))
    smoke(upgrade, State.app, "old", "old")

    client, email = upgrade.clients["old"], unique_email("upgrade-kept")
    signed_up = client.sign_up(State.app, email=email)
    assert signed_up.status == 201, signed_up
    State.session = dict(signed_up.data, email=email)


def test_this_gateway_beside_the_previous_release(upgrade):
    after_the_previous_step()
    upgrade.start(upgrade.new, GATEWAY)
    smoke(upgrade, State.app, "new", "old")
    smoke(upgrade, State.app, "old", "new")
    refreshes_on(upgrade, State.app, State.session, "new")


def test_this_release_s_workers_beside_the_previous_ones(upgrade):
    after_the_previous_step()
    upgrade.start(upgrade.new, *upgrade.new.workers)
    smoke(upgrade, State.app, "old", "new")
    smoke(upgrade, State.app, "new", "old")
    refreshes_on(upgrade, State.app, State.session, "old")


def test_both_gateways_on_this_release_s_workers_alone(upgrade):
    after_the_previous_step()
    upgrade.stop(upgrade.old, *upgrade.old.workers)
    smoke(upgrade, State.app, "old", "new")
    smoke(upgrade, State.app, "new", "old")
    refreshes_on(upgrade, State.app, State.session, "new")


def test_this_release_alone(upgrade):
    after_the_previous_step()
    upgrade.stop(upgrade.old, GATEWAY)
    app = json.loads(upgrade.ctl(upgrade.new, "apps", "create", "--name", "upgrade-after"))
    smoke(upgrade, app, "new", "new")
    smoke(upgrade, State.app, "new", "new")
    refreshes_on(upgrade, State.app, State.session, "new")
