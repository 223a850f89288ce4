"""Self-service email change: POST /v1/me/email/change {email} (a fresh sign-in; 202, a code to
the new address) then POST /v1/me/email/change/confirm {code} (200, the user). The new
address becomes the account's, verified; the old one is told (security alert) and keeps
nothing; every other session ends; user.updated (change "email") is published. A taken address
gets the same 202 and is refused at confirm (409), so only the address's owner learns it."""

from identity_client import PASSWORD, assert_problem, assert_session_ended, assert_session_works, unique_email
from smtp_sink import code_from

MAIL_TIMEOUT = 15


def _start(client, app, token, email):
    return client.post("/v1/me/email/change", {"email": email}, app_key=app["app_key"], token=token)


def _confirm(client, app, token, code):
    return client.post("/v1/me/email/change/confirm", {"code": code}, app_key=app["app_key"], token=token)


def _code_for(client, smtp_sink, app, token, email):
    mark = smtp_sink.mark()
    resp = _start(client, app, token, email)
    assert resp.status == 202 and resp.data["expires_in"] > 0, resp
    return code_from(smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT))


def test_the_account_moves_to_the_new_address(client, smtp_sink, app, events):
    old, new = unique_email("old"), unique_email("new")
    other_device = client.new_user(app, email=old)
    caller = client.sign_in(app, email=old).data
    uid = caller["user"]["uid"]
    mark = smtp_sink.mark()
    code = _code_for(client, smtp_sink, app, caller["access_token"], new)
    # Nothing changed yet: the old address still signs in.
    assert client.sign_in(app, email=old).status == 200
    resp = _confirm(client, app, caller["access_token"], code)
    assert resp.status == 200, resp
    assert resp.data["uid"] == uid and resp.data["email"] == new and resp.data["email_verified"] is True, resp.data
    me = client.me(app, caller["access_token"])
    assert me.status == 200 and me.data["email"] == new, me
    assert_session_works(client, app, caller)
    assert_session_ended(client, app, other_device)
    assert client.sign_in(app, email=new, password=PASSWORD).data["user"]["uid"] == uid
    assert_problem(client.sign_in(app, email=old, password=PASSWORD), 401, "auth/invalid-credential")
    alert = smtp_sink.wait_for(old, lambda m: m.kind == "security_alert_email_changed", after=mark,
                               timeout=MAIL_TIMEOUT)
    assert alert is not None
    events.wait_for("user.updated", lambda b: b.get("uid") == uid and b.get("change") == "email")


def test_a_wrong_code_changes_nothing(client, smtp_sink, app):
    old, new = unique_email("old"), unique_email("new")
    user = client.new_user(app, email=old)
    code = _code_for(client, smtp_sink, app, user["access_token"], new)
    wrong = "000000" if code != "000000" else "111111"
    assert_problem(_confirm(client, app, user["access_token"], wrong), 401, "auth/invalid-code")
    assert client.me(app, user["access_token"]).data["email"] == old
    # The right code still works afterwards (one wrong guess spends nothing).
    assert _confirm(client, app, user["access_token"], code).status == 200


def test_an_address_of_another_account_is_refused_at_confirm_only(client, smtp_sink, app):
    taken = unique_email("taken")
    holder = client.new_user(app, email=taken)
    user = client.new_user(app, email=unique_email("mover"))
    code = _code_for(client, smtp_sink, app, user["access_token"], taken)
    assert_problem(_confirm(client, app, user["access_token"], code), 409, "auth/email-already-in-use")
    assert client.me(app, holder["access_token"]).data["email"] == taken
    assert client.me(app, user["access_token"]).data["email"] != taken
    assert_session_works(client, app, holder)


def test_a_code_asked_for_by_another_user_is_no_code(client, smtp_sink, app):
    new = unique_email("wanted")
    asker = client.new_user(app, email=unique_email("asker"))
    thief = client.new_user(app, email=unique_email("thief"))
    code = _code_for(client, smtp_sink, app, asker["access_token"], new)
    assert_problem(_confirm(client, app, thief["access_token"], code), 401, "auth/invalid-code")
    assert client.me(app, thief["access_token"]).data["email"] != new
    assert _confirm(client, app, asker["access_token"], code).data["email"] == new


def test_a_new_start_replaces_the_pending_change(client, smtp_sink, app):
    user = client.new_user(app, email=unique_email("twice"))
    first, second = unique_email("first"), unique_email("second")
    first_code = _code_for(client, smtp_sink, app, user["access_token"], first)
    second_code = _code_for(client, smtp_sink, app, user["access_token"], second)
    assert_problem(_confirm(client, app, user["access_token"], first_code), 401, "auth/invalid-code")
    assert _confirm(client, app, user["access_token"], second_code).data["email"] == second


def test_an_invalid_address_is_422(client, app):
    user = client.new_user(app)
    assert_problem(_start(client, app, user["access_token"], "not-an-address"), 422, "auth/invalid-email")
