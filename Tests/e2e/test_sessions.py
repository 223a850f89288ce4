"""Sessions: sign-out, sign-out-all, GET /v1/me/sessions and DELETE /v1/me/sessions/{id}. An
ended session's refresh token is revoked and its access tokens are refused at once, not at exp."""

import datetime
import secrets
import uuid

import pytest

from identity_client import (TIMESTAMP_RE, assert_no_content, assert_problem, assert_session_ended,
                             assert_session_works, unique_email)
from jwt_tools import split

SESSION_KEYS = ("id", "current", "created_at", "last_seen_at", "expires_at", "ip", "user_agent",
                "amr", "mfa_verified")


def _user_agent(tag):
    return f"e2e-sessions/1.0 ({tag}; {uuid.uuid4().hex[:8]})"


def _time(text):
    assert isinstance(text, str) and TIMESTAMP_RE.match(text), text
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def _sign_in(client, app, email, user_agent=None):
    headers = {"X-Forwarded-For": "203.0.113.50"}
    if user_agent:
        headers["User-Agent"] = user_agent
    resp = client.sign_in(app, email=email, headers=headers)
    assert resp.status == 200, resp
    return resp.data


def _sessions(client, app, token):
    """GET /v1/me/sessions, checking the shape and that exactly the token's own session is
    `current`; returns the list."""
    resp = client.sessions(app, token)
    assert resp.status == 200, resp
    listed = resp.data
    assert isinstance(listed, list), resp.json
    for entry in listed:
        missing = [key for key in SESSION_KEYS if key not in entry]
        assert not missing, f"session lacks {missing}: {entry!r}"
        assert isinstance(entry["current"], bool), entry
        created, last_seen, expires = (_time(entry[k]) for k in ("created_at", "last_seen_at",
                                                                  "expires_at"))
        assert expires > created, entry
        assert last_seen >= created, entry
    current = [entry["id"] for entry in listed if entry["current"]]
    assert current == [split(token)[1]["sid"]], (current, listed)
    return listed


def _by_id(listed):
    return {entry["id"]: entry for entry in listed}


# --- GET /v1/me/sessions --------------------------------------------------------------------


def test_sessions_lists_live_sessions_newest_first(client, app):
    agents = [_user_agent("sign-up"), _user_agent("phone"), _user_agent("laptop")]
    email = unique_email()
    # Each call "through" the trusted proxy from the same client address: the session records it.
    signed_up = client.sign_up(app, email=email, headers={"User-Agent": agents[0],
                                                          "X-Forwarded-For": "203.0.113.50"})
    assert signed_up.status == 201, signed_up
    first = signed_up.data
    second = _sign_in(client, app, email, agents[1])
    third = _sign_in(client, app, email, agents[2])
    client.new_user(app)  # someone else's session in the same app: never listed

    listed = _sessions(client, app, third["access_token"])
    ids = [entry["id"] for entry in listed]
    assert ids == [third["session_id"], second["session_id"], first["session_id"]], listed
    for entry, tokens, agent in zip(listed, (third, second, first), reversed(agents)):
        assert entry["current"] is (tokens is third), entry
        assert entry["id"] == split(tokens["access_token"])[1]["sid"], entry
        assert entry["ip"] == "203.0.113.50", entry
        assert entry["user_agent"] == agent, entry
        assert entry["amr"] == ["pwd"], entry
        assert entry["mfa_verified"] is False, entry
    created = [_time(entry["created_at"]) for entry in listed]
    assert created == sorted(created, reverse=True), listed

    # Seen from another of the sessions: the same list, another `current`.
    from_first = _sessions(client, app, first["access_token"])
    assert [entry["id"] for entry in from_first] == ids
    assert _by_id(from_first)[first["session_id"]]["current"] is True


def test_refresh_moves_last_seen_at_forward(client, app):
    email = unique_email()
    first = client.new_user(app, email=email)
    second = _sign_in(client, app, email)
    before = _by_id(_sessions(client, app, second["access_token"]))[first["session_id"]]
    refreshed = assert_session_works(client, app, first)
    after = _by_id(_sessions(client, app, second["access_token"]))[first["session_id"]]
    assert _time(after["last_seen_at"]) >= _time(before["last_seen_at"]), (before, after)
    assert after["created_at"] == before["created_at"], (before, after)
    # The refreshed access token belongs to the same, still current, session.
    assert _by_id(_sessions(client, app, refreshed["access_token"]))[first["session_id"]]["current"]


def test_ended_sessions_disappear_from_the_list(client, app):
    email = unique_email()
    first = client.new_user(app, email=email)
    second = _sign_in(client, app, email)
    third = _sign_in(client, app, email)
    assert len(_sessions(client, app, third["access_token"])) == 3
    assert_no_content(client.sign_out(app, second["access_token"]))
    assert_no_content(client.end_session(app, third["access_token"], first["session_id"]))
    listed = _sessions(client, app, third["access_token"])
    assert [entry["id"] for entry in listed] == [third["session_id"]], listed


def test_sessions_without_a_token_is_401(client, app):
    assert_problem(client.get("/v1/me/sessions", app_key=app["app_key"]), 401, "auth/invalid-token")


# --- sign-out and sign-out-all --------------------------------------------------------------


def test_sign_out_ends_this_session_only(client, app):
    email = unique_email()
    first = client.new_user(app, email=email)
    second = _sign_in(client, app, email)
    assert_no_content(client.sign_out(app, first["access_token"]))
    assert_session_ended(client, app, first)
    assert_session_works(client, app, second)


@pytest.mark.parametrize("path", ["/v1/auth/sign-out", "/v1/auth/sign-out-all"])
def test_sign_out_without_a_bearer_token_is_401(client, app, path):
    signed_up = client.new_user(app)
    assert_problem(client.post(path, app_key=app["app_key"]), 401, "auth/invalid-token")
    assert_session_works(client, app, signed_up)


def test_sign_out_all_ends_every_session_of_the_user_only(client, app):
    email = unique_email()
    sessions = [client.new_user(app, email=email)]
    sessions += [_sign_in(client, app, email) for _ in range(2)]
    bystander = client.new_user(app)  # another user of the same app
    assert_no_content(client.sign_out_all(app, sessions[1]["access_token"]))
    for tokens in sessions:
        assert_session_ended(client, app, tokens)
    assert_session_works(client, app, bystander)


# --- DELETE /v1/me/sessions/{id} ------------------------------------------------------------


def test_delete_session_ends_that_session(client, app):
    email = unique_email()
    phone = client.new_user(app, email=email)
    laptop = _sign_in(client, app, email)
    assert_no_content(client.end_session(app, laptop["access_token"], phone["session_id"]))
    assert_session_ended(client, app, phone)
    assert_session_works(client, app, laptop)


def test_delete_current_session_is_allowed(client, app):
    email = unique_email()
    phone = client.new_user(app, email=email)
    laptop = _sign_in(client, app, email)
    assert_no_content(client.end_session(app, phone["access_token"], phone["session_id"]))
    assert_session_ended(client, app, phone)
    assert_session_works(client, app, laptop)


def test_delete_session_of_another_user_is_404(client, app):
    victim = client.new_user(app)
    mallory = client.new_user(app)
    assert_problem(client.end_session(app, mallory["access_token"], victim["session_id"]), 404,
                   "auth/not-found")
    assert_session_works(client, app, victim)


def test_delete_unknown_session_is_404(client, app):
    signed_up = client.new_user(app)
    unknown = "ses_" + secrets.token_hex(12)
    assert_problem(client.end_session(app, signed_up["access_token"], unknown), 404, "auth/not-found")
    assert_session_works(client, app, signed_up)


# --- tenancy --------------------------------------------------------------------------------


def test_token_of_another_app_is_refused_on_session_calls(client, app, other_app):
    signed_up = client.new_user(app)
    client.new_user(other_app)
    token = signed_up["access_token"]
    assert_problem(client.sessions(other_app, token), 401, "auth/invalid-token")
    assert_problem(client.end_session(other_app, token, signed_up["session_id"]), 401,
                   "auth/invalid-token")
    assert_problem(client.sign_out(other_app, token), 401, "auth/invalid-token")
    assert_problem(client.sign_out_all(other_app, token), 401, "auth/invalid-token")
    # None of the refused calls ended anything.
    assert_session_works(client, app, signed_up)


def test_sign_out_in_one_app_leaves_the_same_email_signed_in_in_another(client, app, other_app):
    email = unique_email()
    in_a = client.new_user(app, email=email)
    in_a_again = _sign_in(client, app, email)
    in_b = client.new_user(other_app, email=email)
    assert_no_content(client.sign_out(app, in_a["access_token"]))
    assert_session_ended(client, app, in_a)
    in_b = assert_session_works(client, other_app, in_b)
    # Not even "every session of the user" reaches across apps.
    assert_no_content(client.sign_out_all(app, in_a_again["access_token"]))
    assert_session_ended(client, app, in_a_again)
    refreshed = assert_session_works(client, other_app, in_b)
    listed = _sessions(client, other_app, refreshed["access_token"])
    assert [entry["id"] for entry in listed] == [in_b["session_id"]], listed
