"""Push devices: POST /v1/me/devices {token, platform: ios|android|web, kind: apns|fcm|voip,
device_name?}, GET /v1/me/devices, DELETE /v1/me/devices/{id}. A device belongs to the session
that registered it (a push token registered again moves to the new user or session, keeping its
id); when that session ends (sign-out, sign-out-all, ending it from the list, deleting the
account) the device is unregistered and `device.unregistered` tells push operators to stop."""

import secrets

import pytest

import db_tools
from event_tools import assert_event
from identity_client import (PASSWORD, TIMESTAMP_RE, assert_no_content, assert_problem,
                             unique_email, unique_push_token)

DEVICE_KEYS = ("id", "token", "platform", "kind", "device_name", "session_id", "created_at")
# Unregistering is part of ending a session; the list may lag the 204 by a moment at most.
UNREGISTER_TIMEOUT = 5.0


def _assert_device(device, **expected):
    assert isinstance(device, dict), device
    missing = [key for key in DEVICE_KEYS if key not in device]
    assert not missing, f"device lacks {missing}: {device!r}"
    assert isinstance(device["id"], str) and device["id"].startswith("dev_") \
        and len(device["id"]) > 4, device
    assert isinstance(device["created_at"], str) and TIMESTAMP_RE.match(device["created_at"]), \
        device
    for key, value in expected.items():
        assert device[key] == value, (key, device)
    return device


def _listed(client, app, token):
    """GET /v1/me/devices (asserting 200 and each device's shape): the list."""
    resp = client.devices(app, token)
    assert resp.status == 200, resp
    listed = resp.data
    assert isinstance(listed, list), resp.json
    for device in listed:
        _assert_device(device)
    return listed


def _ids(listed):
    return [device["id"] for device in listed]


def _public(devices):
    """The documented device fields only, so comparisons survive extra fields added later."""
    return [{key: device.get(key) for key in DEVICE_KEYS} for device in devices]


def _sign_in(client, app, email):
    resp = client.sign_in(app, email=email)
    assert resp.status == 200, resp
    return resp.data


def _rows_with_token(app, push_token):
    return db_tools.value(f"select count(*) from devices d "
                          f"where d.app_id = {db_tools.literal(app['app_id'])} "
                          f"and strpos(d::text, {db_tools.literal(push_token)}) > 0")


def _unregistered(events, app, uid, push_token):
    """Waits for the device.unregistered event of that push token; checks it; returns the body."""
    event = events.wait_for("device.unregistered", lambda b: b.get("token") == push_token)
    body = assert_event(event, "device.unregistered", "DeviceUnregistered", app, uid)
    assert isinstance(body.get("reason"), str) and body["reason"], body
    return body


def _gone_from(client, app, token, device_id):
    return client.wait_for(lambda: device_id not in _ids(_listed(client, app, token)),
                           timeout=UNREGISTER_TIMEOUT, interval=0.2)


# --- registering ----------------------------------------------------------------------------


@pytest.mark.parametrize("platform, kind, device_name", [
    ("ios", "apns", "Jane's iPhone"),
    ("ios", "voip", None),
    ("android", "fcm", "Pixel 9"),
    ("web", "fcm", None),
])
def test_register_device_answers_201_and_publishes_device_registered(client, app, events,
                                                                     platform, kind,
                                                                     device_name):
    signed_up = client.new_user(app)
    push_token = unique_push_token()
    fields = {"device_name": device_name} if device_name is not None else {}
    resp = client.register_device(app, signed_up["access_token"], push_token, platform, kind,
                                  **fields)
    assert resp.status == 201, resp
    assert resp.header("Content-Type").split(";")[0].strip() == "application/json"
    device = _assert_device(resp.data, token=push_token, platform=platform, kind=kind,
                            device_name=device_name, session_id=signed_up["session_id"])
    assert _public(_listed(client, app, signed_up["access_token"])) == _public([device])

    uid = signed_up["user"]["uid"]
    event = events.wait_for("device.registered", lambda b: b.get("token") == push_token)
    body = assert_event(event, "device.registered", "DeviceRegistered", app, uid)
    assert body.get("device_id") == device["id"], body
    assert body.get("platform") == platform and body.get("kind") == kind, body
    assert body.get("session_id") == signed_up["session_id"], body


@pytest.mark.parametrize("change, location", [
    pytest.param({"platform": "windows"}, "body.platform", id="platform-unknown"),
    pytest.param({"platform": ""}, "body.platform", id="platform-empty"),
    pytest.param({"platform": None}, "body.platform", id="platform-null"),
    pytest.param({"platform": ...}, "body.platform", id="platform-missing"),
    pytest.param({"kind": "sms"}, "body.kind", id="kind-unknown"),
    pytest.param({"kind": 1}, "body.kind", id="kind-number"),
    pytest.param({"kind": ...}, "body.kind", id="kind-missing"),
    pytest.param({"token": ...}, "body.token", id="token-missing"),
    pytest.param({"token": None}, "body.token", id="token-null"),
    pytest.param({"token": ["x"]}, "body.token", id="token-array"),
])
def test_bad_device_bodies_are_422(client, app, change, location):
    signed_up = client.new_user(app)
    body = {"token": unique_push_token(), "platform": "ios", "kind": "apns"}
    for key, value in change.items():
        if value is ...:
            body.pop(key)
        else:
            body[key] = value
    resp = client.post("/v1/me/devices", body, app_key=app["app_key"],
                       token=signed_up["access_token"])
    assert_problem(resp, 422, "auth/validation-failed", locations=[location])
    assert _listed(client, app, signed_up["access_token"]) == []


def test_register_needs_a_signed_in_user(client, app):
    resp = client.post("/v1/me/devices", {"token": unique_push_token(), "platform": "ios",
                                          "kind": "apns"}, app_key=app["app_key"])
    assert_problem(resp, 401, "auth/invalid-token")
    assert_problem(client.get("/v1/me/devices", app_key=app["app_key"]), 401,
                   "auth/invalid-token")


# --- listing --------------------------------------------------------------------------------


def test_list_is_the_users_devices_newest_first(client, app):
    email = unique_email()
    phone = client.new_user(app, email=email)
    laptop = _sign_in(client, app, email)
    first = client.new_device(app, phone["access_token"], platform="ios", kind="apns")
    second = client.new_device(app, laptop["access_token"], platform="web", kind="fcm")
    third = client.new_device(app, phone["access_token"], platform="ios", kind="voip")
    client.new_device(app, client.new_user(app)["access_token"])  # someone else's: never listed

    listed = _listed(client, app, phone["access_token"])
    assert _ids(listed) == [third["id"], second["id"], first["id"]], listed
    assert _public(listed) == _public([third, second, first])
    assert listed[1]["session_id"] == laptop["session_id"], listed
    # The same list from the user's other session.
    assert _public(_listed(client, app, laptop["access_token"])) == _public(listed)


def test_list_of_a_user_without_devices_is_empty(client, app):
    signed_up = client.new_user(app)
    resp = client.devices(app, signed_up["access_token"])
    assert resp.status == 200, resp
    assert resp.data == [], resp.json


def test_same_token_registered_by_another_user_leaves_the_first_with_an_event(client, app, events):
    """The phone changed hands: the first user's device is unregistered (device.unregistered,
    so their notifications stop), and the new user gets a device of their own."""
    alice = client.new_user(app)
    bob = client.new_user(app)
    push_token = unique_push_token()
    first = client.new_device(app, alice["access_token"], push_token)
    resp = client.register_device(app, bob["access_token"], push_token, "ios", "apns")
    assert resp.status == 201, resp
    moved = _assert_device(resp.data, token=push_token, session_id=bob["session_id"])
    assert moved["id"] != first["id"], "a device id never passes from one user to another"
    assert _ids(_listed(client, app, bob["access_token"])) == [moved["id"]]
    assert _listed(client, app, alice["access_token"]) == []
    assert _rows_with_token(app, push_token) == "1"
    body = _unregistered(events, app, alice["user"]["uid"], push_token)
    assert body["device_id"] == first["id"] and body["reason"] == "registered_by_another_user", body


def test_same_token_registered_from_another_session_moves_to_it(client, app):
    email = unique_email()
    old = client.new_user(app, email=email)
    new = _sign_in(client, app, email)
    push_token = unique_push_token()
    first = client.new_device(app, old["access_token"], push_token)
    resp = client.register_device(app, new["access_token"], push_token, "ios", "apns")
    assert resp.status == 201, resp
    _assert_device(resp.data, id=first["id"], session_id=new["session_id"])
    listed = _listed(client, app, old["access_token"])
    assert [(d["id"], d["session_id"]) for d in listed] == [(first["id"], new["session_id"])]
    assert _rows_with_token(app, push_token) == "1"
    # It belongs to the new session now: ending the old one leaves it registered.
    assert_no_content(client.sign_out(app, old["access_token"]))
    assert _ids(_listed(client, app, new["access_token"])) == [first["id"]]


# --- unregistering --------------------------------------------------------------------------


def test_unregister_device_answers_204_and_publishes_device_unregistered(client, app, events):
    signed_up = client.new_user(app)
    token = signed_up["access_token"]
    keep = client.new_device(app, token)
    gone = client.new_device(app, token)
    assert_no_content(client.unregister_device(app, token, gone["id"]))
    assert _ids(_listed(client, app, token)) == [keep["id"]]
    _unregistered(events, app, signed_up["user"]["uid"], gone["token"])
    assert_problem(client.unregister_device(app, token, gone["id"]), 404, "auth/not-found")


def test_unregister_another_users_device_is_404(client, app):
    victim = client.new_user(app)
    mallory = client.new_user(app)
    device = client.new_device(app, victim["access_token"])
    assert_problem(client.unregister_device(app, mallory["access_token"], device["id"]), 404,
                   "auth/not-found")
    assert _ids(_listed(client, app, victim["access_token"])) == [device["id"]]


def test_unregister_unknown_device_is_404(client, app):
    signed_up = client.new_user(app)
    unknown = "dev_" + secrets.token_hex(12)
    assert_problem(client.unregister_device(app, signed_up["access_token"], unknown), 404,
                   "auth/not-found")


def test_sign_out_unregisters_that_sessions_devices_only(client, app, events):
    email = unique_email()
    leaving = client.new_user(app, email=email)
    staying = _sign_in(client, app, email)
    uid = leaving["user"]["uid"]
    gone = [client.new_device(app, leaving["access_token"]) for _ in range(2)]
    kept = client.new_device(app, staying["access_token"])

    assert_no_content(client.sign_out(app, leaving["access_token"]))
    for device in gone:
        assert _gone_from(client, app, staying["access_token"], device["id"]), \
            f"device {device['id']} of the signed-out session still listed"
        _unregistered(events, app, uid, device["token"])
    events.collect(1.0)
    assert not events.matching("device.unregistered", lambda b: b.get("token") == kept["token"])
    assert _ids(_listed(client, app, staying["access_token"])) == [kept["id"]]


def test_ending_a_session_from_the_list_unregisters_its_devices(client, app, events):
    email = unique_email()
    phone = client.new_user(app, email=email)
    laptop = _sign_in(client, app, email)
    device = client.new_device(app, phone["access_token"])
    assert_no_content(client.end_session(app, laptop["access_token"], phone["session_id"]))
    assert _gone_from(client, app, laptop["access_token"], device["id"])
    _unregistered(events, app, phone["user"]["uid"], device["token"])


def test_sign_out_all_unregisters_every_device_of_the_user(client, app, events):
    email = unique_email()
    sessions = [client.new_user(app, email=email), _sign_in(client, app, email)]
    uid = sessions[0]["user"]["uid"]
    devices = [client.new_device(app, tokens["access_token"]) for tokens in sessions]
    bystander = client.new_user(app)
    other = client.new_device(app, bystander["access_token"])

    assert_no_content(client.sign_out_all(app, sessions[1]["access_token"]))
    for device in devices:
        _unregistered(events, app, uid, device["token"])
        assert client.wait_for(lambda d=device: _rows_with_token(app, d["token"]) == "0",
                               timeout=UNREGISTER_TIMEOUT, interval=0.2), device
    assert _ids(_listed(client, app, bystander["access_token"])) == [other["id"]]


def test_account_deletion_unregisters_every_device(client, app, events):
    email = unique_email()
    sessions = [client.new_user(app, email=email), _sign_in(client, app, email)]
    uid = sessions[0]["user"]["uid"]
    devices = [client.new_device(app, tokens["access_token"]) for tokens in sessions]
    assert_no_content(client.delete_me(app, sessions[0]["access_token"], {"password": PASSWORD}))
    for device in devices:
        _unregistered(events, app, uid, device["token"])
        assert _rows_with_token(app, device["token"]) == "0"


# --- tenancy --------------------------------------------------------------------------------


def test_token_of_another_app_is_refused_on_device_calls(client, app, other_app):
    signed_up = client.new_user(app)
    client.new_user(other_app)
    token = signed_up["access_token"]
    device = client.new_device(app, token)
    assert_problem(client.devices(other_app, token), 401, "auth/invalid-token")
    assert_problem(client.register_device(other_app, token, unique_push_token()), 401,
                   "auth/invalid-token")
    assert_problem(client.unregister_device(other_app, token, device["id"]), 401,
                   "auth/invalid-token")
    assert _ids(_listed(client, app, token)) == [device["id"]]


def test_same_push_token_in_two_apps_is_two_devices(client, app, other_app):
    in_a = client.new_user(app)
    in_b = client.new_user(other_app)
    push_token = unique_push_token()
    a = client.new_device(app, in_a["access_token"], push_token)
    b = client.new_device(other_app, in_b["access_token"], push_token)
    assert b["session_id"] == in_b["session_id"], b
    assert _ids(_listed(client, app, in_a["access_token"])) == [a["id"]]
    assert _ids(_listed(client, other_app, in_b["access_token"])) == [b["id"]]
