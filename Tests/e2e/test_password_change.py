"""Password change while signed in: POST /v1/me/password {current_password, new_password} → 204.
The calling session lives on; every other session of the user ends; a wrong current password or
a weak new one changes nothing."""

from identity_client import (PASSWORD, assert_no_content, assert_problem, assert_session_ended,
                             assert_session_works, unique_email)

NEW_PASSWORD = "Persimmon-Otter-77?"


def _signed_in(client, app, email, password=PASSWORD):
    resp = client.sign_in(app, email=email, password=password)
    assert resp.status == 200, f"sign-in with {password!r} refused: {resp!r}"
    return resp.data


def _refused(client, app, email, password):
    assert_problem(client.sign_in(app, email=email, password=password), 401,
                   "auth/invalid-credential")


def test_change_keeps_this_session_and_ends_the_others(client, app):
    email = unique_email()
    phone = client.new_user(app, email=email)
    laptop = _signed_in(client, app, email)
    caller = _signed_in(client, app, email)
    bystander = client.new_user(app)  # another user of the same app
    assert_no_content(client.change_password(app, caller["access_token"], PASSWORD, NEW_PASSWORD))
    # The calling session: its access token and its refresh token both still work.
    refreshed = assert_session_works(client, app, caller)
    me = client.me(app, refreshed["access_token"])
    assert me.status == 200 and me.data["email"] == email, me
    for tokens in (phone, laptop):
        assert_session_ended(client, app, tokens)
    assert_session_works(client, app, bystander)
    _refused(client, app, email, PASSWORD)
    assert _signed_in(client, app, email, NEW_PASSWORD)["user"]["uid"] == caller["user"]["uid"]


def test_wrong_current_password_is_401_and_changes_nothing(client, app):
    email = unique_email()
    other = client.new_user(app, email=email)
    caller = _signed_in(client, app, email)
    assert_problem(client.change_password(app, caller["access_token"], "Not-The-Password-1",
                                          NEW_PASSWORD), 401, "auth/invalid-credential")
    _refused(client, app, email, NEW_PASSWORD)
    _signed_in(client, app, email, PASSWORD)
    assert_session_works(client, app, other)
    assert_session_works(client, app, caller)


def test_weak_new_password_is_422_and_changes_nothing(client, app):
    email = unique_email()
    other = client.new_user(app, email=email)
    caller = _signed_in(client, app, email)
    assert_problem(client.change_password(app, caller["access_token"], PASSWORD, "password123"),
                   422, "auth/weak-password", locations=["body.new_password"])
    _signed_in(client, app, email, PASSWORD)
    assert_session_works(client, app, other)
    assert_session_works(client, app, caller)


def test_change_without_a_bearer_token_is_401(client, app):
    resp = client.post("/v1/me/password", {"current_password": PASSWORD,
                                            "new_password": NEW_PASSWORD},
                       app_key=app["app_key"])
    assert_problem(resp, 401, "auth/invalid-token")


def test_a_token_of_another_app_cannot_change_the_password(client, app, other_app):
    email = unique_email()
    tokens = client.new_user(app, email=email)
    client.new_user(other_app, email=email)
    assert_problem(client.change_password(other_app, tokens["access_token"], PASSWORD,
                                          NEW_PASSWORD), 401, "auth/invalid-token")
    _signed_in(client, app, email, PASSWORD)
    _signed_in(client, other_app, email, PASSWORD)
    assert_session_works(client, app, tokens)
