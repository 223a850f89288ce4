"""Failed sign-ins past a threshold are security events in the audit log: per
account and per client IP within 15 minutes, a `security.sign_in_failures` row at the app's
threshold and at each doubling after it; an unknown account leaves no user row; MFA code
failures count against the account too; rows are the app's own."""

import pytest

from admin_tools import admin, audit_rows
from identity_client import PASSWORD, random_client_ip, unique_email
from test_mfa import challenge_of, mfa_user, verify

ACTION = "security.sign_in_failures"


@pytest.fixture
def watched_app(client, app):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {"failed_sign_in_audit_threshold": 3})
    assert resp.status == 200 and resp.data["failed_sign_in_audit_threshold"] == 3, resp
    return app


def _fail(client, app, email, ip):
    resp = client.sign_in(app, email=email, password="Not-the-password-9!", headers={"X-Forwarded-For": ip})
    assert resp.status == 401, resp


def _rows(client, app, target):
    return audit_rows(client, app, action=ACTION, target=target)


def test_failures_of_one_account_are_audited_at_the_threshold_and_its_doublings(client, watched_app):
    user = client.new_user(watched_app)
    uid, email = user["user"]["uid"], user["user"]["email"]
    target = "user:" + uid
    for _ in range(2):
        _fail(client, watched_app, email, random_client_ip())
    assert _rows(client, watched_app, target) == []
    ip = random_client_ip()
    _fail(client, watched_app, email, ip)
    rows = _rows(client, watched_app, target)
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["actor"] == "system" and row["ip"] == ip and row["request_id"], row
    assert row["detail"] == {"method": "password", "failures": 3, "window_seconds": 900, "threshold": 3}, row
    # Not one row a guess: the next at 6 (twice the threshold).
    for _ in range(2):
        _fail(client, watched_app, email, random_client_ip())
    assert len(_rows(client, watched_app, target)) == 1
    _fail(client, watched_app, email, random_client_ip())
    rows = _rows(client, watched_app, target)
    assert [r["detail"]["failures"] for r in rows] == [6, 3], rows
    # A right password is not a failure, and still signs in.
    assert client.sign_in(watched_app, email=email, password=PASSWORD).status == 200


def test_failures_from_one_ip_are_audited_even_for_unknown_accounts(client, watched_app):
    ip = random_client_ip()
    for _ in range(3):
        _fail(client, watched_app, unique_email("nobody"), ip)
    rows = _rows(client, watched_app, "ip:" + ip)
    assert len(rows) == 1 and rows[0]["detail"]["failures"] == 3, rows
    # Unknown accounts make no user rows.
    assert all(r["target"].startswith("ip:") for r in audit_rows(client, watched_app, action=ACTION))


def test_wrong_mfa_codes_count_against_the_account(client, watched_app):
    email, _, _, uid = mfa_user(client, watched_app)
    for _ in range(3):
        challenge = challenge_of(client.sign_in(watched_app, email=email))
        assert verify(client, watched_app, challenge, "000000").status == 401
    rows = _rows(client, watched_app, "user:" + uid)
    assert len(rows) == 1 and rows[0]["detail"]["method"] == "mfa", rows


def test_rows_and_counts_are_per_app(client, watched_app, other_app):
    ip = random_client_ip()
    for _ in range(3):
        _fail(client, other_app, unique_email("nobody"), ip)
    # other_app keeps the default threshold of 5: three failures there audit nothing anywhere.
    assert _rows(client, other_app, "ip:" + ip) == []
    assert _rows(client, watched_app, "ip:" + ip) == []
    for _ in range(2):
        _fail(client, other_app, unique_email("nobody"), ip)
    assert len(_rows(client, other_app, "ip:" + ip)) == 1
    assert _rows(client, watched_app, "ip:" + ip) == []
