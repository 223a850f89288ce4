"""An app's `session_end_proof` (OWASP ASVS 5.0 7.5.2): with `fresh`, ending another session of
the user (DELETE /v1/me/sessions/{id}) or all of them (POST /v1/auth/sign-out-all) takes a
sign-in within the step-up window, else 403 auth/reauth-required and nothing ends; signing out
of the caller's own session never needs it. The revocation worker holds a command published
straight to its queue to the same rule. With `none` (the default) a live session is enough."""

import db_tools
from admin_tools import admin
from identity_client import assert_no_content, assert_problem, assert_session_ended, assert_session_works, unique_email
from test_bus_trust import ERROR_TYPE, REVOCATION_QUEUE, _command

REAUTH = "auth/reauth-required"


def _require_fresh(client, app, proof="fresh"):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {"session_end_proof": proof})
    assert resp.status == 200 and resp.data["session_end_proof"] == proof, resp


def _two_sessions(client, app):
    email = unique_email()
    phone = client.new_user(app, email=email)
    laptop = client.sign_in(app, email=email)
    assert laptop.status == 200, laptop
    return phone, laptop.data


def _age(tokens, minutes=6):
    db_tools.rows(f"update sessions set created_at = now() - interval '{minutes} minutes' "
                  f"where id = {db_tools.literal(tokens['session_id'])}")


def test_the_setting_is_none_by_default_and_refuses_other_values(client, app):
    resp = admin(client, app, "GET", "/v1/admin/settings")
    assert resp.status == 200 and resp.data["session_end_proof"] == "none", resp
    assert_problem(admin(client, app, "PATCH", "/v1/admin/settings", {"session_end_proof": "always"}),
                   422, "auth/validation-failed")


def test_by_default_a_stale_session_still_ends_the_others(client, app):
    phone, laptop = _two_sessions(client, app)
    _age(laptop)
    assert_no_content(client.end_session(app, laptop["access_token"], phone["session_id"]))
    assert_session_ended(client, app, phone)


def test_with_fresh_a_stale_session_ends_no_other_session(client, app):
    _require_fresh(client, app)
    phone, laptop = _two_sessions(client, app)
    _age(laptop)
    assert_problem(client.end_session(app, laptop["access_token"], phone["session_id"]), 403, REAUTH)
    assert_problem(client.sign_out_all(app, laptop["access_token"]), 403, REAUTH)
    phone.update(assert_session_works(client, app, phone))
    laptop.update(assert_session_works(client, app, laptop))
    # Its own session it may always end, by id or by signing out.
    assert_no_content(client.end_session(app, laptop["access_token"], laptop["session_id"]))
    assert_session_ended(client, app, laptop)
    assert_session_works(client, app, phone)


def test_with_fresh_a_fresh_sign_in_ends_the_others(client, app):
    _require_fresh(client, app)
    phone, laptop = _two_sessions(client, app)
    _age(phone)
    assert_no_content(client.end_session(app, laptop["access_token"], phone["session_id"]))
    assert_session_ended(client, app, phone)
    assert_no_content(client.sign_out_all(app, laptop["access_token"]))
    assert_session_ended(client, app, laptop)


def test_with_fresh_a_stale_session_signs_out_of_itself(client, app):
    _require_fresh(client, app)
    phone, laptop = _two_sessions(client, app)
    _age(laptop)
    assert_no_content(client.sign_out(app, laptop["access_token"]))
    assert_session_ended(client, app, laptop)
    assert_session_works(client, app, phone)


def test_the_revocation_worker_holds_a_published_command_to_the_same_rule(client, app):
    """The gateway is not the only publisher: a command carrying the user's own (stale) token,
    published straight to the worker's queue, ends nothing either; a fresh one does."""
    _require_fresh(client, app)
    phone, laptop = _two_sessions(client, app)
    _age(laptop)
    uid = laptop["user"]["uid"]
    for type_name, body in (("identity.revocation.v1.EndAllSessions", {"app_id": app["app_id"], "uid": uid,
                                                                        "reason": "revoked_by_user"}),
                            ("identity.revocation.v1.EndSession", {"app_id": app["app_id"], "uid": uid,
                                                                    "session_id": phone["session_id"],
                                                                    "reason": "revoked_by_user"})):
        reply_type, reply = _command(REVOCATION_QUEUE, type_name, body, app["app_id"],
                                     caller_token=laptop["access_token"])
        assert reply_type == ERROR_TYPE and reply["code"] == REAUTH, reply
    phone.update(assert_session_works(client, app, phone))
    laptop.update(assert_session_works(client, app, laptop))
    # The control: the phone's session is fresh (it just signed up), so the same command runs.
    reply_type, reply = _command(REVOCATION_QUEUE, "identity.revocation.v1.EndSession",
                                 {"app_id": app["app_id"], "uid": uid, "session_id": laptop["session_id"],
                                  "reason": "revoked_by_user"}, app["app_id"], caller_token=phone["access_token"])
    assert reply_type != ERROR_TYPE, reply
    assert_session_ended(client, app, laptop)
