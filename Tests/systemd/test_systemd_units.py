"""deploy/systemd's units run the service under systemd, hardening included: the migration and one
copy of each process come up active under identity.target, each answers /readyz and /metrics, and
a user signs up, signs in, refreshes, reads /me and signs in with a code the mailer delivered.
Every secret reaches its process as a credential file: none is in a process's environment."""


import ops_metrics
from conftest import KINDS, UNITS
from stack_smoke import sign_up_sign_in_refresh_me_and_an_email_code


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


def test_no_secret_is_in_any_process_environment(machine):
    for kind in KINDS:
        pid = machine.run("systemctl", "show", "--property=MainPID", "--value", f"identity-{kind}@1.service").stdout.strip()
        environ = machine.run("cat", f"/proc/{pid}/environ").stdout.split("\0")
        names = {entry.split("=", 1)[0] for entry in environ}
        assert {"IDENTITY_DATABASE_URL_FILE", "IDENTITY_AMQP_URL_FILE"} <= names, (kind, sorted(names))
        leaked = [entry.split("=", 1)[0] for entry in environ
                  if any(secret in entry for secret in machine.secrets)]
        assert not leaked, (kind, leaked)


def test_every_process_is_ready_and_serves_metrics(machine):
    for kind in KINDS:
        status, _, body = ops_metrics.fetch(machine.metrics_url(kind, "/readyz"))
        assert status == 200, (kind, body)
        assert ops_metrics.scrape(machine.metrics_url(kind)), kind


def test_sign_up_sign_in_refresh_me_and_an_email_code(machine):
    sign_up_sign_in_refresh_me_and_an_email_code(machine.client, machine.ctl, machine.mail, "systemd")

    states = machine.states()
    assert all(state.startswith("active") for state in states.values()), f"{states}\n{machine.journal()}"
