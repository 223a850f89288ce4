"""The admin API's seam: a route that needs the app's secret key, secret keys kept as
hashes only and rotated with an overlap, and an audit row for every admin call."""

import json
import time

import pytest

from admin_tools import admin, audit_rows, query
from db_tools import tables_containing
from identity_client import assert_problem, assert_user_shape


def test_a_secret_key_reads_its_own_users(client, app):
    user = client.new_user(app)["user"]
    resp = admin(client, app, "GET", f"/v1/admin/users/{user['uid']}")
    assert resp.status == 200, resp
    assert_user_shape(resp.data)
    assert resp.data["uid"] == user["uid"] and resp.data["email"] == user["email"]
    assert resp.data["disabled"] is False and resp.data["custom_claims"] == {}
    assert resp.header("Cache-Control") == "no-store"


@pytest.mark.parametrize("authorization", [
    pytest.param(None, id="none"),
    pytest.param("Bearer sk_not-a-key-of-anyone", id="unknown-key"),
    pytest.param("Bearer ", id="empty"),
    pytest.param("Basic c2tfeDp5", id="basic-not-allowed-here"),
], )
def test_admin_routes_refuse_anything_but_a_live_secret_key(client, app, authorization):
    user = client.new_user(app)["user"]
    headers = {"Authorization": authorization} if authorization is not None else {}
    resp = client.get(f"/v1/admin/users/{user['uid']}", headers=headers)
    assert_problem(resp, 401, "auth/invalid-secret-key")


def test_a_user_token_or_app_key_is_never_a_secret_key(client, app):
    signed_up = client.new_user(app)
    uid = signed_up["user"]["uid"]
    for credential in (signed_up["access_token"], signed_up["refresh_token"], app["app_key"]):
        resp = client.get(f"/v1/admin/users/{uid}", token=credential, app_key=app["app_key"])
        assert_problem(resp, 401, "auth/invalid-secret-key")


def test_a_secret_key_of_app_a_is_refused_on_app_b(client, app, other_app):
    theirs = client.new_user(other_app)["user"]
    # A's key sees nothing of B: B's user is not found for A ...
    resp = admin(client, app, "GET", f"/v1/admin/users/{theirs['uid']}")
    assert_problem(resp, 404, "auth/not-found")
    # ... and A's key presented for B (B's X-App-Key) is refused outright.
    resp = admin(client, app, "GET", f"/v1/admin/users/{theirs['uid']}", headers={"X-App-Key": other_app["app_key"]})
    assert_problem(resp, 401, "auth/invalid-secret-key")
    listed = admin(client, app, "GET", query("/v1/admin/users", email=theirs["email"]))
    assert listed.status == 200 and listed.json["data"] == [], listed


def test_secret_keys_are_stored_as_hashes_only(client, app):
    assert tables_containing(app["secret_key"]) == []
    rotated = admin(client, app, "POST", "/v1/admin/secret-keys/rotate", {})
    assert rotated.status == 201, rotated
    assert tables_containing(rotated.data["secret_key"]) == []


def test_rotation_keeps_the_old_key_for_the_overlap(client, app):
    resp = admin(client, app, "POST", "/v1/admin/secret-keys/rotate", {"overlap_seconds": 3600})
    assert resp.status == 201, resp
    new_key = resp.data["secret_key"]
    assert new_key.startswith("sk_") and new_key != app["secret_key"]
    assert len(resp.data["previous_key_ids"]) == 1 and resp.data["previous_keys_expire_at"]
    for key in (app["secret_key"], new_key):
        assert admin(client, app, "GET", "/v1/admin/users", key=key).status == 200
    # No overlap: every key but the newest stops at once.
    last = admin(client, app, "POST", "/v1/admin/secret-keys/rotate", {"overlap_seconds": 0}, key=new_key)
    assert last.status == 201, last
    assert len(last.data["previous_key_ids"]) == 2
    for key in (app["secret_key"], new_key):
        assert_problem(admin(client, app, "GET", "/v1/admin/users", key=key), 401, "auth/invalid-secret-key")
    assert admin(client, app, "GET", "/v1/admin/users", key=last.data["secret_key"]).status == 200


def test_rotation_validates_the_overlap(client, app):
    resp = admin(client, app, "POST", "/v1/admin/secret-keys/rotate", {"overlap_seconds": -1})
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.overlap_seconds"])
    resp = admin(client, app, "POST", "/v1/admin/secret-keys/rotate", {"overlap_seconds": "60"})
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.overlap_seconds"])


def test_identityctl_rotates_with_the_same_rules(stack, client, app):
    done = stack.ctl("apps", "rotate-secret-key", app["app_id"], "--overlap", "0")
    assert done.returncode == 0, done.stderr

    printed = json.loads(done.stdout)
    assert printed["secret_key"].startswith("sk_")
    assert admin(client, app, "GET", "/v1/admin/users", key=printed["secret_key"]).status == 200
    # Another gateway may remember the old key for SecretKeyStep.cacheSeconds (5 s) at most.
    deadline = time.monotonic() + 8
    while admin(client, app, "GET", "/v1/admin/users").status != 401:
        assert time.monotonic() < deadline, "the rotated-out key still works"
        time.sleep(0.5)
    bad = stack.ctl("apps", "rotate-secret-key", app["app_id"], "--overlap", "99999999")
    assert bad.returncode != 0


def test_every_admin_call_is_audited(client, app, other_app):
    user = client.new_user(app)["user"]
    resp = admin(client, app, "GET", f"/v1/admin/users/{user['uid']}", request_id="audit-check-1",
                 headers={"X-Forwarded-For": "10.9.8.7"})
    assert resp.status == 200, resp
    rows = audit_rows(client, app, target=f"user:{user['uid']}")
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["action"] == "admin.users.get"
    assert row["actor"].startswith("secret_key:skid_")
    assert row["ip"] == "10.9.8.7" and row["request_id"] == "audit-check-1"
    # The audit listing is itself audited, newest first; another app sees none of it.
    listed = audit_rows(client, app, limit=1)
    assert listed[0]["action"] == "admin.audit.list"
    assert all(r["target"] != f"user:{user['uid']}" for r in audit_rows(client, other_app))


def test_the_audit_log_pages_with_a_cursor_and_filters(client, app):
    for _ in range(3):
        assert admin(client, app, "GET", "/v1/admin/users").status == 200
    first = admin(client, app, "GET", query("/v1/admin/audit", action="admin.users.list", limit=2))
    assert first.status == 200 and len(first.json["data"]) == 2, first
    cursor = first.json["next_cursor"]
    assert cursor
    second = admin(client, app, "GET", query("/v1/admin/audit", action="admin.users.list", limit=2, cursor=cursor))
    assert second.status == 200, second
    ids = [r["id"] for r in first.json["data"] + second.json["data"]]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert second.json["next_cursor"] is None
    bad = admin(client, app, "GET", query("/v1/admin/audit", since="yesterday", limit=0))
    assert_problem(bad, 422, "auth/validation-failed", locations=["query.since", "query.limit"])
