"""The admin API's users: list with filters and a cursor, get, create, update,
disable/enable, delete, sessions; roles, custom claims and metadata. Every call with the app's
secret key, against the real gateway and workers."""

import json
import uuid

import pytest

import db_tools
from admin_tools import admin, audit_rows, query
from event_tools import assert_event
from identity_client import (PASSWORD, assert_no_content, assert_problem, assert_session_ended,
                             assert_user_shape, unique_email, unique_username)
from jwt_tools import split
from provider_flows import apple_proof, apple_signed_in_with_code

REVOKE_TIMEOUT = 20.0


def _create(client, app, **body):
    resp = admin(client, app, "POST", "/v1/admin/users", body)
    assert resp.status == 201, resp
    assert_user_shape(resp.data)
    return resp.data


def _claims(access_token):
    return split(access_token)[1]


# --- create and get ---------------------------------------------------------------------------


def test_create_a_user_with_a_password_who_then_signs_in(client, app, events):
    email = unique_email("made")
    user = _create(client, app, email=email, password=PASSWORD, email_verified=True, first_name="Ada",
                   roles=["editor"])
    assert user["email"] == email and user["email_verified"] is True and user["has_password"] is True
    assert user["roles"] == ["editor"] and user["providers"] == ["password"]
    signed_in = client.sign_in(app, email=email)
    assert signed_in.status == 200, signed_in
    assert signed_in.data["user"]["uid"] == user["uid"]
    assert _claims(signed_in.data["access_token"])["roles"] == ["editor"]
    assert_event(events.wait_for("user.created", lambda b: b.get("uid") == user["uid"]), "user.created",
                 "UserCreated", app, user["uid"])
    got = admin(client, app, "GET", f"/v1/admin/users/{user['uid']}")
    assert got.status == 200 and got.data == user, got
    # The password is stored as Argon2id, never as given.
    assert db_tools.tables_containing(PASSWORD) == []


def test_create_without_a_password_and_conflicts(client, app):
    email = unique_email("nopw")
    user = _create(client, app, email=email, username=unique_username())
    assert user["has_password"] is False and user["providers"] == [] and user["email_verified"] is False
    assert_problem(client.sign_in(app, email=email), 401, "auth/invalid-credential")
    again = admin(client, app, "POST", "/v1/admin/users", {"email": email.upper()})
    assert_problem(again, 409, "auth/email-already-in-use")
    taken = admin(client, app, "POST", "/v1/admin/users", {"username": user["username"]})
    assert_problem(taken, 409, "auth/username-taken")


@pytest.mark.parametrize("body,locations", [
    ({}, ["body.email"]),
    ({"email": unique_email(), "phone": "0123"}, ["body.phone"]),
    ({"email": unique_email(), "roles": "admin"}, ["body.roles"]),
    ({"email": unique_email(), "roles": ["ok", "no spaces"]}, ["body.roles[1]"]),
    ({"email": unique_email(), "custom_claims": {"sub": "someone-else"}}, ["body.custom_claims"]),
    ({"email": unique_email(), "custom_claims": {"roles": ["admin"]}}, ["body.custom_claims"]),
    ({"email": unique_email(), "custom_claims": {"big": "x" * 1024}}, ["body.custom_claims"]),
    ({"email": unique_email(), "custom_claims": ["a"]}, ["body.custom_claims"]),
    ({"email": unique_email(), "app_metadata": "text"}, ["body.app_metadata"]),
    ({"email": unique_email(), "email_verified": "yes"}, ["body.email_verified"]),
    ({"phone": "+14155550123", "password": PASSWORD}, ["body.password"]),
], ids=["nothing", "bad-phone", "roles-not-list", "bad-role", "reserved-sub",
        "reserved-roles", "claims-over-1KiB", "claims-not-object", "metadata-not-object",
        "verified-not-bool", "password-without-login"])
def test_create_validates_every_field(client, app, body, locations):
    assert_problem(admin(client, app, "POST", "/v1/admin/users", body), 422, "auth/validation-failed",
                   locations=locations)


def test_create_and_update_refuse_a_malformed_email(client, app):
    resp = admin(client, app, "POST", "/v1/admin/users", {"email": "not-an-email"})
    assert_problem(resp, 422, "auth/invalid-email", locations=["body.email"])
    uid = client.new_user(app)["user"]["uid"]
    resp = admin(client, app, "PATCH", f"/v1/admin/users/{uid}", {"email": "still not"})
    assert_problem(resp, 422, "auth/invalid-email", locations=["body.email"])


def test_create_refuses_a_weak_password(client, app):
    resp = admin(client, app, "POST", "/v1/admin/users", {"email": unique_email(), "password": "short"})
    assert_problem(resp, 422, "auth/weak-password")


def test_get_unknown_user_is_404(client, app):
    assert_problem(admin(client, app, "GET", "/v1/admin/users/01jzzzzzzzzzzzzzzzzzzzzzzz"), 404, "auth/not-found")


# --- update -----------------------------------------------------------------------------------


def test_update_profile_fields_and_clear_them(client, app, events):
    signed_up = client.new_user(app, first_name="Old")
    uid = signed_up["user"]["uid"]
    email = unique_email("changed")
    resp = admin(client, app, "PATCH", f"/v1/admin/users/{uid}",
                 {"email": email, "email_verified": True, "phone": "+14155550123", "first_name": "New",
                  "last_name": "Name", "username": unique_username()})
    assert resp.status == 200, resp
    assert resp.data["email"] == email and resp.data["email_verified"] is True
    assert resp.data["phone"] == "+14155550123" and resp.data["first_name"] == "New"
    assert client.sign_in(app, email=email).status == 200
    cleared = admin(client, app, "PATCH", f"/v1/admin/users/{uid}", {"last_name": None, "phone": None})
    assert cleared.status == 200 and cleared.data["last_name"] is None and cleared.data["phone"] is None, cleared
    # A new email without email_verified is unverified.
    other = admin(client, app, "PATCH", f"/v1/admin/users/{uid}", {"email": unique_email("again")})
    assert other.status == 200 and other.data["email_verified"] is False, other
    assert events.wait_for("user.updated", lambda b: b.get("uid") == uid)


def test_update_conflicts_and_unknown_users(client, app, other_app):
    first = client.new_user(app)["user"]
    second = client.new_user(app)["user"]
    resp = admin(client, app, "PATCH", f"/v1/admin/users/{second['uid']}", {"email": first["email"]})
    assert_problem(resp, 409, "auth/email-already-in-use")
    theirs = client.new_user(other_app)["user"]
    resp = admin(client, app, "PATCH", f"/v1/admin/users/{theirs['uid']}", {"first_name": "Mallory"})
    assert_problem(resp, 404, "auth/not-found")
    assert client.me(other_app, client.sign_in(other_app, email=theirs["email"]).data["access_token"]).data[
        "first_name"] != "Mallory"


# --- roles, claims, metadata ------------------------------------------------------------------


def test_roles_and_custom_claims_reach_the_next_access_token(client, app):
    signed_up = client.new_user(app)
    uid = signed_up["user"]["uid"]
    assert _claims(signed_up["access_token"])["roles"] == []
    resp = admin(client, app, "PATCH", f"/v1/admin/users/{uid}",
                 {"roles": ["admin", "billing"], "custom_claims": {"plan": "pro", "seats": 5, "org": {"id": "o1"}}})
    assert resp.status == 200, resp
    assert resp.data["roles"] == ["admin", "billing"]
    assert resp.data["custom_claims"] == {"plan": "pro", "seats": 5, "org": {"id": "o1"}}
    refreshed = client.refresh(app, signed_up["refresh_token"])
    assert refreshed.status == 200, refreshed
    claims = _claims(refreshed.data["access_token"])
    assert claims["roles"] == ["admin", "billing"]
    assert claims["plan"] == "pro" and claims["seats"] == 5 and claims["org"] == {"id": "o1"}
    assert claims["sub"] == uid and claims["aud"] == app["app_id"]
    # Cleared: gone from the token after the next refresh.
    assert admin(client, app, "PATCH", f"/v1/admin/users/{uid}", {"roles": None, "custom_claims": None}).status == 200
    claims = _claims(client.refresh(app, refreshed.data["refresh_token"]).data["access_token"])
    assert claims["roles"] == [] and "plan" not in claims


def test_metadata_in_the_user_object_and_the_user_sets_only_its_own(client, app):
    signed_up = client.new_user(app)
    uid, token = signed_up["user"]["uid"], signed_up["access_token"]
    assert signed_up["user"]["app_metadata"] == {} and signed_up["user"]["user_metadata"] == {}
    resp = admin(client, app, "PATCH", f"/v1/admin/users/{uid}",
                 {"app_metadata": {"tier": "gold"}, "user_metadata": {"theme": "dark"}})
    assert resp.status == 200, resp
    me = client.me(app, token)
    assert me.data["app_metadata"] == {"tier": "gold"} and me.data["user_metadata"] == {"theme": "dark"}
    assert "custom_claims" not in me.data
    # The user replaces its own metadata; app_metadata in its body is ignored (unknown to PATCH /v1/me).
    patched = client.patch_me(app, token, {"user_metadata": {"theme": "light"}, "app_metadata": {"tier": "free"}})
    assert patched.status == 200, patched
    assert patched.data["user_metadata"] == {"theme": "light"} and patched.data["app_metadata"] == {"tier": "gold"}
    bad = client.patch_me(app, token, {"user_metadata": {"x": "y" * 9000}})
    assert_problem(bad, 422, "auth/validation-failed", locations=["body.user_metadata"])


# --- disable and enable -----------------------------------------------------------------------


def test_disable_ends_every_session_at_once_and_refuses_sign_ins(client, app, events):
    email = unique_email("disabled")
    first = client.new_user(app, email=email)
    second = client.sign_in(app, email=email).data
    uid = first["user"]["uid"]
    assert client.me(app, first["access_token"]).status == 200
    resp = admin(client, app, "POST", f"/v1/admin/users/{uid}/disable")
    assert resp.status == 200 and resp.data["disabled"] is True, resp
    for tokens in (first, second):
        # The live access token is refused at once, not at exp; refresh answers 403.
        assert_problem(client.me(app, tokens["access_token"]), 401, "auth/invalid-token")
        assert_problem(client.refresh(app, tokens["refresh_token"]), 403, "auth/user-disabled")
    assert_problem(client.sign_in(app, email=email), 403, "auth/user-disabled")
    body = assert_event(events.wait_for("user.disabled", lambda b: b.get("uid") == uid), "user.disabled",
                        "UserDisabled", app, uid)
    assert body["disabled"] is True
    revoked = {e.body["session_id"] for e in events.collect(0.5)
               if e.routing_key.endswith("session.revoked") and e.body.get("uid") == uid}
    assert revoked == {first["session_id"], second["session_id"]}
    listed = admin(client, app, "GET", f"/v1/admin/users/{uid}/sessions")
    assert listed.status == 200 and listed.data == [], listed
    assert [r["action"] for r in audit_rows(client, app, target=f"user:{uid}", action="user.disabled")] == ["user.disabled"]
    # Enabled again: signs in; the old sessions stay ended.
    enabled = admin(client, app, "POST", f"/v1/admin/users/{uid}/enable")
    assert enabled.status == 200 and enabled.data["disabled"] is False, enabled
    assert client.sign_in(app, email=email).status == 200
    assert_problem(client.refresh(app, first["refresh_token"]), 401, "auth/refresh-token-revoked")
    assert events.wait_for("user.enabled", lambda b: b.get("uid") == uid)


def test_disable_unknown_or_other_apps_user_is_404(client, app, other_app):
    theirs = client.new_user(other_app)
    resp = admin(client, app, "POST", f"/v1/admin/users/{theirs['user']['uid']}/disable")
    assert_problem(resp, 404, "auth/not-found")
    assert client.me(other_app, theirs["access_token"]).status == 200


# --- sessions ---------------------------------------------------------------------------------


def test_sessions_list_and_revoke(client, app, events):
    email = unique_email("sessions")
    first = client.new_user(app, email=email)
    second = client.sign_in(app, email=email).data
    third = client.sign_in(app, email=email).data
    uid = first["user"]["uid"]
    listed = admin(client, app, "GET", f"/v1/admin/users/{uid}/sessions")
    assert listed.status == 200, listed
    assert {s["id"] for s in listed.data} == {first["session_id"], second["session_id"], third["session_id"]}
    assert all("current" not in s and s["ip"] for s in listed.data)
    assert_no_content(admin(client, app, "DELETE", f"/v1/admin/users/{uid}/sessions/{first['session_id']}"))
    assert_session_ended(client, app, first)
    assert client.me(app, second["access_token"]).status == 200
    assert_problem(admin(client, app, "DELETE", f"/v1/admin/users/{uid}/sessions/{first['session_id']}"),
                   404, "auth/not-found")
    assert_no_content(admin(client, app, "DELETE", f"/v1/admin/users/{uid}/sessions"))
    for tokens in (second, third):
        assert_session_ended(client, app, tokens)
    assert events.wait_for("session.revoked", lambda b: b.get("session_id") == third["session_id"]
                           and b.get("reason") == "revoked_by_admin")


def test_another_apps_key_cannot_end_sessions(client, app, other_app):
    theirs = client.new_user(other_app)
    uid = theirs["user"]["uid"]
    resp = admin(client, app, "DELETE", f"/v1/admin/users/{uid}/sessions/{theirs['session_id']}")
    assert_problem(resp, 404, "auth/not-found")
    assert_no_content(admin(client, app, "DELETE", f"/v1/admin/users/{uid}/sessions"))
    assert client.me(other_app, theirs["access_token"]).status == 200


# --- delete -----------------------------------------------------------------------------------


def test_delete_a_user(client, app, events):
    signed_up = client.new_user(app)
    uid = signed_up["user"]["uid"]
    assert_no_content(admin(client, app, "DELETE", f"/v1/admin/users/{uid}"))
    assert_session_ended(client, app, signed_up)
    assert_event(events.wait_for("user.deleted", lambda b: b.get("uid") == uid), "user.deleted", "UserDeleted",
                 app, uid)
    assert db_tools.value(f"select count(*) from users where uid = {db_tools.literal(uid)}") == "0"
    assert_problem(admin(client, app, "GET", f"/v1/admin/users/{uid}"), 404, "auth/not-found")
    assert_problem(admin(client, app, "DELETE", f"/v1/admin/users/{uid}"), 404, "auth/not-found")
    # The email is free again.
    assert client.sign_up(app, email=signed_up["user"]["email"]).status == 201


def test_deleting_an_apple_user_revokes_at_apple(client, providers, provider_app):
    data, claims, refresh_token = apple_signed_in_with_code(client, providers, provider_app, is_new_user=True)
    assert_no_content(admin(client, provider_app, "DELETE", f"/v1/admin/users/{data['user']['uid']}"))

    def revoked():
        return [c for c in providers.apple_revoke_calls() if c["token"] == refresh_token and c["status"] == 200]
    assert client.wait_for(revoked, timeout=REVOKE_TIMEOUT, interval=0.2), \
        f"no revocation of {refresh_token}: {providers.apple_revoke_calls()[-5:]}"


# --- list -------------------------------------------------------------------------------------


def test_list_pages_with_a_cursor_and_filters(client, app):
    tag = uuid.uuid4().hex[:8]
    made = [client.new_user(app, email=f"list-{tag}-{i}@example.com")["user"] for i in range(3)]
    guest, _ = client.new_guest(app)
    page = admin(client, app, "GET", query("/v1/admin/users", email=f"LIST-{tag}", limit=2))
    assert page.status == 200, page
    assert [u["uid"] for u in page.json["data"]] == [made[2]["uid"], made[1]["uid"]]  # newest first
    rest = admin(client, app, "GET", query("/v1/admin/users", email=f"list-{tag}", limit=2,
                                           cursor=page.json["next_cursor"]))
    assert [u["uid"] for u in rest.json["data"]] == [made[0]["uid"]] and rest.json["next_cursor"] is None
    assert admin(client, app, "POST", f"/v1/admin/users/{made[1]['uid']}/disable").status == 200
    disabled = admin(client, app, "GET", query("/v1/admin/users", email=f"list-{tag}", disabled="true"))
    assert [u["uid"] for u in disabled.json["data"]] == [made[1]["uid"]]
    guests = admin(client, app, "GET", query("/v1/admin/users", guest="true", limit=100))
    assert guest["user"]["uid"] in [u["uid"] for u in guests.json["data"]]
    assert all(u["is_guest"] for u in guests.json["data"])
    by_password = admin(client, app, "GET", query("/v1/admin/users", provider="password", email=f"list-{tag}"))
    assert len(by_password.json["data"]) == 3
    later = admin(client, app, "GET", query("/v1/admin/users", email=f"list-{tag}", created_after="2100-01-01T00:00:00Z"))
    assert later.json["data"] == []
    bad = admin(client, app, "GET", query("/v1/admin/users", limit=500, provider="myspace", disabled="maybe",
                                          cursor="../../etc", created_before="never"))
    assert_problem(bad, 422, "auth/validation-failed",
                   locations=["query.limit", "query.provider", "query.disabled", "query.cursor", "query.created_before"])
