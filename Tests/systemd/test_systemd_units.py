"""deploy/systemd's units run the service under systemd, hardening included: the migration and one
copy of each process come up active under identity.target, each answers /readyz and /metrics, and
a user signs up, signs in, refreshes, reads /me and signs in with a code the mailer delivered."""

import json

import ops_metrics
from conftest import KINDS, UNITS
from identity_client import unique_email
from mail_flows import email_code, email_code_signed_in


def test_every_unit_is_active(machine):
    states = machine.states()
    expected = {unit: "active/exited" if unit == "identity-migrate.service" else "active/running" for unit in UNITS}
    assert states == expected, f"{states}\n{machine.journal()}"


def test_every_process_runs_as_a_dynamic_user(machine):
    for kind in KINDS:
        done = machine.run("systemctl", "show", "--property=MainPID", "--value", f"identity-{kind}@1.service")
        pid = done.stdout.strip()
        assert pid and pid != "0", (kind, done.stdout, done.stderr)
        status = machine.run("cat", f"/proc/{pid}/status").stdout
        uid = next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:"))
        assert int(uid) >= 61184, (kind, uid)  # systemd's DynamicUser range: 61184-65519


def test_every_process_is_ready_and_serves_metrics(machine):
    for kind in KINDS:
        status, _, body = ops_metrics.fetch(machine.metrics_url(kind, "/readyz"))
        assert status == 200, (kind, body)
        assert ops_metrics.scrape(machine.metrics_url(kind)), kind


def test_sign_up_sign_in_refresh_me_and_an_email_code(machine):
    client = machine.client
    app = json.loads(machine.ctl("apps", "create", "--name", "systemd-smoke"))
    email = unique_email("systemd")
    signed_up = client.wait_for(lambda: (r := client.sign_up(app, email=email)).status != 503 and r,
                                timeout=30)
    assert signed_up and signed_up.status == 201, signed_up
    signed_in = client.sign_in(app, email=email)
    assert signed_in.status == 200, signed_in
    refreshed = client.refresh(app, signed_in.data["refresh_token"])
    assert refreshed.status == 200, refreshed
    me = client.me(app, refreshed.data["access_token"])
    assert me.status == 200, me
    assert me.data["email"] == email, me.data

    code_email = unique_email("systemd-code")
    _, code = email_code(client, machine.mail, app, code_email)
    email_code_signed_in(client, app, code_email, code, is_new_user=True)

    states = machine.states()
    assert all(state.startswith("active") for state in states.values()), f"{states}\n{machine.journal()}"
