"""Push delivery and security alerts, against the APNs and FCM stand-ins
(push_standin.py: HTTP/2 over TLS with a provider-token check for APNs; the JWT-bearer grant and
messages:send for FCM).

An app turns alerts on (`--security-alerts true`) and uploads its APNs `.p8` (team id, key id,
topic) and its FCM service-account key. A sign-in from a device the user has not signed in from
before queues, in the sign-in's own transaction, a mail (identity.mailer.email) and a push
(identity.mailer.push) to the user's *other* devices. APNs 410 and FCM UNREGISTERED unregister the
device (`device.unregistered`); a failure that may pass is retried through the push channel's
delay queues, then dead-lettered on identity.mailer.push.dead; and a worker killed mid-send does
not send to a device twice (the delivery ledger, per message and device)."""

import json
import os
import secrets
import time

import pytest

import db_tools

from admin_tools import admin
from identity_client import PASSWORD, assert_problem, unique_email, unique_push_token
from mail_flows import MAIL_RETRY_DELAYS_MS, PUSH_DEAD_QUEUE, SEND_PUSH_TYPE, dead_letters

TEAM_ID = "TEAM123456"
TOPIC = "com.example.pushapp"
PHONE_UA = "ExampleApp/1.0 (iPhone; iOS 17.2)"
LAPTOP_UA = "Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0"
ALERT_TIMEOUT = 15.0


@pytest.fixture
def push_app(stack):
    """An app with alerts on, APNs and FCM credentials the stand-ins know, and loose limits."""
    app = stack.create_app()
    key_id = "K" + secrets.token_hex(4).upper()
    p8 = stack.apns.add_key(TEAM_ID, key_id, TOPIC)
    project = "proj-" + secrets.token_hex(3)
    account = stack.fcm.service_account(project)
    paths = {}
    for name, text in (("p8", p8), ("json", account)):
        path = os.path.join(stack.log_dir, f"{app['app_id']}.{name}")
        with open(path, "w") as f:
            f.write(text)
        paths[name] = path
    app["settings"] = stack.configure_app(
        app["app_id"], apns_team_id=TEAM_ID, apns_key_id=key_id, apns_topic=TOPIC,
        apns_private_key_file=paths["p8"], fcm_service_account_file=paths["json"], security_alerts="true")
    app["project"] = project
    return app


def _signed_up(client, app, email, user_agent=PHONE_UA):
    resp = client.sign_up(app, email=email, headers={"User-Agent": user_agent})
    assert resp.status in (200, 201), resp
    return resp.data


def _sign_in(client, app, email, user_agent):
    resp = client.sign_in(app, email=email, headers={"User-Agent": user_agent})
    assert resp.status == 200, resp
    return resp.data


def _phone_and_laptop(client, app, email):
    """The account signed up on a phone and signed in on a laptop, each session with an APNs
    device: (phone session, laptop session, phone's push token, laptop's push token)."""
    phone = _signed_up(client, app, email, PHONE_UA)
    laptop = _sign_in(client, app, email, LAPTOP_UA)
    phone_token, laptop_token = unique_push_token(), unique_push_token()
    _register(client, app, phone["access_token"], phone_token, "apns")
    _register(client, app, laptop["access_token"], laptop_token, "apns")
    return phone, laptop, phone_token, laptop_token


def _register(client, app, token, push_token, kind):
    platform = "ios" if kind == "apns" else "android"
    resp = client.register_device(app, token, push_token, platform=platform, kind=kind)
    assert resp.status in (200, 201), resp
    return resp.data


def _device_ids(client, app, token):
    resp = client.devices(app, token)
    assert resp.status == 200, resp
    return {device["id"] for device in resp.data}


def test_settings_show_push_credentials_without_secrets(push_app):
    settings = push_app["settings"]
    assert settings["apns_team_id"] == TEAM_ID and settings["apns_topic"] == TOPIC, settings
    assert settings["apns_private_key_set"] is True and settings["fcm_service_account_set"] is True, settings
    assert settings["fcm_project_id"] == push_app["project"], settings
    assert settings["security_alerts"] is True, settings
    assert "PRIVATE KEY" not in json.dumps(settings), "a secret came back in the settings"


def test_push_settings_through_the_admin_api(stack, client, app):
    """PATCH /v1/admin/settings takes the same push fields (the same AppSettingsUpdate), seals the
    keys, never answers them, and refuses a key that is not one."""
    p8 = stack.apns.add_key(TEAM_ID, "KADMIN0001", TOPIC)
    account = stack.fcm.service_account("proj-admin")
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {
        "apns_team_id": TEAM_ID, "apns_key_id": "KADMIN0001", "apns_topic": TOPIC, "apns_private_key": p8,
        "fcm_service_account": account, "security_alerts": True})
    assert resp.status == 200, resp
    data = resp.data
    assert data["apns_private_key_set"] is True and data["fcm_service_account_set"] is True, data
    assert data["fcm_project_id"] == "proj-admin" and data["security_alerts"] is True, data
    assert "PRIVATE KEY" not in json.dumps(data)
    assert stack.configure_app(app["app_id"]) == data
    for body, location in (({"apns_private_key": "not a key"}, "body.apns_private_key"),
                           ({"fcm_service_account": "{}"}, "body.fcm_service_account"),
                           ({"security_alerts": "yes"}, "body.security_alerts")):
        refused = admin(client, app, "PATCH", "/v1/admin/settings", body)
        assert_problem(refused, 422, "auth/validation-failed", locations=[location])


def test_new_device_sign_in_alerts_the_other_devices_and_by_email(stack, client, smtp_sink, push_app):
    email = unique_email("alerted")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    apns_token, fcm_token = unique_push_token(), "fcm-" + secrets.token_urlsafe(40)
    _register(client, push_app, phone["access_token"], apns_token, "apns")
    _register(client, push_app, phone["access_token"], fcm_token, "fcm")
    mark = smtp_sink.mark()
    # The same device again: no alert.
    _sign_in(client, push_app, email, PHONE_UA)
    # A device not seen before for this user: the alert, by push to the phone and by mail.
    laptop = _sign_in(client, push_app, email, LAPTOP_UA)
    laptop_apns = unique_push_token()
    _register(client, push_app, laptop["access_token"], laptop_apns, "apns")

    received = stack.apns.wait_for(apns_token, timeout=ALERT_TIMEOUT)
    assert len(received) == 1, (received, stack.apns.refusals)
    alert = received[0]["aps"]["alert"]
    assert "New sign-in" in alert["title"], alert
    assert "Firefox" in alert["body"], alert
    pushed = stack.fcm.wait_for(fcm_token, timeout=ALERT_TIMEOUT)
    assert len(pushed) == 1, (pushed, stack.fcm.refusals)
    assert "New sign-in" in pushed[0]["notification"]["title"], pushed
    mail = smtp_sink.wait_for(email, lambda m: "New sign-in" in m.subject, timeout=ALERT_TIMEOUT, after=mark)
    assert "Firefox" in mail.text, mail.text
    # Exactly one alert: the repeated phone sign-in raised none, and the new device's own
    # session is left out of its alert.
    time.sleep(1.0)
    assert len(stack.apns.received(apns_token)) == 1
    assert [m for m in smtp_sink.messages_to(email, after=mark, alerts=True) if "New sign-in" in m.subject] == [mail]
    assert stack.apns.received(laptop_apns) == []
    assert stack.apns.refusals == [] and stack.fcm.refusals == [], (stack.apns.refusals, stack.fcm.refusals)


def test_a_device_seen_days_ago_is_still_known_and_a_forgotten_one_alerts_again(stack, client, push_app):
    """A known device last seen days ago has its last_seen_at moved (the upsert's update path)
    and raises no alert; a device the retention purge forgot is new again on its next sign-in."""
    email = unique_email("known-device")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    phone_token = unique_push_token()
    _register(client, push_app, phone["access_token"], phone_token, "apns")
    uid = db_tools.literal(phone["user"]["uid"])
    db_tools.rows(f"update user_known_devices set first_seen_at = first_seen_at - interval '3 days', "
                  f"last_seen_at = last_seen_at - interval '2 days' where uid = {uid}")

    def new_sign_in_alerts():
        return sum("New sign-in" in title for title in _apns_titles(stack, phone_token))

    _sign_in(client, push_app, email, PHONE_UA)
    assert db_tools.value(f"select count(*) from user_known_devices where uid = {uid} "
                          f"and last_seen_at > now() - interval '1 minute'") == "1"
    _sign_in(client, push_app, email, LAPTOP_UA)
    assert _wait_for_count(new_sign_in_alerts, 1) == 1, stack.apns.refusals
    laptop = f"sha256(convert_to({db_tools.literal(LAPTOP_UA)}, 'UTF8'))"
    db_tools.rows(f"delete from user_known_devices where uid = {uid} and fingerprint = {laptop}")
    _sign_in(client, push_app, email, LAPTOP_UA)
    assert _wait_for_count(new_sign_in_alerts, 2) == 2, stack.apns.refusals
    time.sleep(ALERT_GRACE)
    assert new_sign_in_alerts() == 2, "the phone, seen two days ago, alerted as a new device"


def test_no_alert_when_the_app_has_alerts_off(stack, client, smtp_sink, push_app):
    stack.configure_app(push_app["app_id"], security_alerts="false")
    email = unique_email("quiet")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    apns_token = unique_push_token()
    _register(client, push_app, phone["access_token"], apns_token, "apns")
    mark = smtp_sink.mark()
    _sign_in(client, push_app, email, LAPTOP_UA)
    time.sleep(2.0)
    assert stack.apns.received(apns_token) == []
    assert [m for m in smtp_sink.messages_to(email, after=mark, alerts=True) if "New sign-in" in m.subject] == []


@pytest.mark.parametrize("kind", ["apns", "fcm"])
def test_a_token_the_service_calls_gone_unregisters_the_device(stack, client, events, push_app, kind):
    email = unique_email(f"gone-{kind}")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    push_token = unique_push_token() if kind == "apns" else "fcm-" + secrets.token_urlsafe(40)
    device = _register(client, push_app, phone["access_token"], push_token, kind)
    (stack.apns if kind == "apns" else stack.fcm).unregister(push_token)
    _sign_in(client, push_app, email, LAPTOP_UA)
    event = events.wait_for("device.unregistered", lambda body: body.get("device_id") == device["id"],
                            timeout=ALERT_TIMEOUT)
    assert event.body["reason"] == f"{kind}_unregistered", event.body
    assert event.body["uid"] == phone["user"]["uid"], event.body
    assert device["id"] not in _device_ids(client, push_app, phone["access_token"])


def test_a_failing_push_is_retried_then_dead_lettered(stack, client, push_app):
    email = unique_email("push-dead")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    failing, fine = unique_push_token(), unique_push_token()
    failing_device = _register(client, push_app, phone["access_token"], failing, "apns")
    _register(client, push_app, phone["access_token"], fine, "apns")
    stack.apns.fail(failing)
    _sign_in(client, push_app, email, LAPTOP_UA)
    # The first try and one per retry delay, then the dead letter.
    tries = 1 + len(MAIL_RETRY_DELAYS_MS)
    assert len(stack.apns.wait_attempts(failing, tries, timeout=ALERT_TIMEOUT)) == tries
    deadline = time.monotonic() + ALERT_TIMEOUT
    dead = []
    while time.monotonic() < deadline and not dead:
        dead = [m for m in dead_letters(queue=PUSH_DEAD_QUEUE)
                if isinstance(m.body, dict) and m.body.get("uid") == phone["user"]["uid"]]
        time.sleep(0.2)
    assert dead, "nothing on identity.mailer.push.dead"
    assert dead[0].type == SEND_PUSH_TYPE, dead[0].summary()
    # Only the failing device is named: the other one had its alert and gets no second.
    assert dead[0].body["device_ids"] == [failing_device["id"]], dead[0].body
    time.sleep(0.5)
    assert len(stack.apns.attempts(failing)) == tries, "tried again after the dead letter"
    assert len(stack.apns.received(fine)) == 1


def test_a_worker_killed_mid_send_does_not_send_twice(stack, client, push_app):
    email = unique_email("push-kill")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    slow = unique_push_token()
    _register(client, push_app, phone["access_token"], slow, "apns")
    # The stand-in takes the notification, then holds its answer while the worker is killed.
    stack.apns.hold(slow, 3.0)
    _sign_in(client, push_app, email, LAPTOP_UA)
    assert len(stack.apns.wait_for(slow, timeout=ALERT_TIMEOUT)) == 1
    stack.mailer_worker.kill()
    try:
        stack.start_mailer_worker()
        # The broker hands the unacked message to the new worker: the ledger drops it.
        time.sleep(4.0)
    finally:
        stack.apns.hold(slow, 0)
    assert len(stack.apns.received(slow)) == 1, "the device got the alert twice"
    with open(stack.mailer_worker.log_path, "rb") as log:
        text = log.read().decode("utf-8", "replace")
    assert "push already sent to this device or being sent; dropped" in text, text[-3000:]


def test_a_password_change_alerts_the_other_devices_and_by_email(stack, client, smtp_sink, push_app):
    """The change ends the user's other sessions (and unregisters their devices) in its
    transaction, yet their devices get the alert: it names them as they were before the change.
    The device of the session that changed the password gets none."""
    email = unique_email("pw-alert")
    phone, laptop, phone_token, laptop_token = _phone_and_laptop(client, push_app, email)
    mark = smtp_sink.mark()
    resp = client.change_password(push_app, laptop["access_token"], PASSWORD, PASSWORD + " changed")
    assert resp.status in (200, 204), resp
    smtp_sink.wait_for(email, lambda m: "password was changed" in m.subject, timeout=ALERT_TIMEOUT, after=mark)

    def password_alerts(token):
        return [p for p in stack.apns.received(token) if "password" in p["aps"]["alert"]["title"]]

    deadline = time.monotonic() + ALERT_TIMEOUT
    while time.monotonic() < deadline and not password_alerts(phone_token):
        time.sleep(0.1)
    assert len(password_alerts(phone_token)) == 1, stack.apns.refusals
    time.sleep(0.5)
    assert password_alerts(laptop_token) == []


def test_turning_mfa_on_alerts_the_other_devices_and_by_email(stack, client, smtp_sink, push_app):
    from test_mfa import enrol_totp
    email = unique_email("mfa-alert")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    phone_token = unique_push_token()
    _register(client, push_app, phone["access_token"], phone_token, "apns")
    laptop = _sign_in(client, push_app, email, LAPTOP_UA)
    mark = smtp_sink.mark()
    enrol_totp(client, push_app, laptop["access_token"])
    smtp_sink.wait_for(email, lambda m: "Two-step verification turned on" in m.subject, timeout=ALERT_TIMEOUT,
                       after=mark)
    deadline = time.monotonic() + ALERT_TIMEOUT
    while time.monotonic() < deadline and not [
            p for p in stack.apns.received(phone_token) if "Two-step" in p["aps"]["alert"]["title"]]:
        time.sleep(0.1)
    titles = [p["aps"]["alert"]["title"] for p in stack.apns.received(phone_token)]
    assert titles.count("Two-step verification turned on") == 1, titles


# --- the other alerts: email changed, MFA off, passkey added, backup codes low ---------------------
# Their titles are MailRenderer's defaults (the push title is the mail's subject); each test waits
# for the alert with a deadline, then gives a second of grace before asserting that nothing more
# came (a second alert, or one to a device the code leaves out).

ALERT_GRACE = 1.0
# SecurityAlerts.backupCodesLowThreshold: a use of a backup code that leaves this many or fewer
# raises backup_codes_low.
BACKUP_CODES_LOW_THRESHOLD = 2


def _apns_titles(stack, token):
    return [p["aps"]["alert"]["title"] for p in stack.apns.received(token)]


def _fcm_titles(stack, token):
    return [p["notification"]["title"] for p in stack.fcm.received(token)]


def _wait_for_count(count_now, count):
    """Polls count_now() until it reaches `count` or ALERT_TIMEOUT passes; returns the last value."""
    deadline = time.monotonic() + ALERT_TIMEOUT
    seen = count_now()
    while seen < count and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = count_now()
    return seen


def _alert_mails(smtp_sink, address, subject, mark):
    return [m for m in smtp_sink.messages_to(address, after=mark, alerts=True) if m.subject == subject]


def _assert_one_alert_but_not_to_the_acting_device(stack, smtp_sink, email, title, mark, mail_text, other_token,
                                                   acting_token):
    """Exactly one alert `title`: by mail (saying `mail_text`) and by push to the other device's
    `other_token`, none to the device of the session that made the change (`acting_token`)."""
    mail = smtp_sink.wait_for(email, lambda m: m.subject == title, timeout=ALERT_TIMEOUT, after=mark)
    assert mail_text in mail.text, mail.text
    assert _wait_for_count(lambda: _apns_titles(stack, other_token).count(title), 1) == 1, \
        (_apns_titles(stack, other_token), stack.apns.refusals)
    time.sleep(ALERT_GRACE)
    assert _apns_titles(stack, other_token).count(title) == 1
    assert title not in _apns_titles(stack, acting_token), "the session that made the change got the alert"
    assert _alert_mails(smtp_sink, email, title, mark) == [mail]
    assert stack.apns.refusals == [], stack.apns.refusals


def _mfa_signed_in(client, app, email, code, user_agent):
    """Password, then a second factor (`code`), both from `user_agent`: a fresh aal 2 session."""
    from test_mfa import challenge_of
    challenge = challenge_of(client.sign_in(app, email=email, headers={"User-Agent": user_agent}))
    resp = client.post("/v1/auth/mfa/verify", {"challenge_token": challenge["challenge_token"], "code": code},
                       app_key=app["app_key"], headers={"User-Agent": user_agent})
    assert resp.status == 200, resp
    return resp.data


def test_an_email_change_alerts_the_old_address_and_every_device(stack, client, smtp_sink, push_app):
    """The app's backend changes the address (admin API, UserAdministration.update): the mail goes
    to the address it was changed *from* (its owner must hear of it), none to the new one. No
    session of the user made the change, so none is left out: every device gets the push."""
    old = unique_email("email-alert")
    phone = _signed_up(client, push_app, old, PHONE_UA)
    laptop = _sign_in(client, push_app, old, LAPTOP_UA)
    phone_token, laptop_fcm = unique_push_token(), "fcm-" + secrets.token_urlsafe(40)
    _register(client, push_app, phone["access_token"], phone_token, "apns")
    _register(client, push_app, laptop["access_token"], laptop_fcm, "fcm")
    title = f"Your {push_app['name']} email address was changed"
    mark = smtp_sink.mark()
    new = unique_email("email-alert-new")
    resp = admin(client, push_app, "PATCH", f"/v1/admin/users/{phone['user']['uid']}", {"email": new})
    assert resp.status == 200 and resp.data["email"] == new, resp

    mail = smtp_sink.wait_for(old, lambda m: m.subject == title, timeout=ALERT_TIMEOUT, after=mark)
    assert f"The email address of your {push_app['name']} account was changed" in mail.text, mail.text
    assert _wait_for_count(lambda: _apns_titles(stack, phone_token).count(title), 1) == 1, \
        (_apns_titles(stack, phone_token), stack.apns.refusals)
    assert _wait_for_count(lambda: _fcm_titles(stack, laptop_fcm).count(title), 1) == 1, \
        (_fcm_titles(stack, laptop_fcm), stack.fcm.refusals)
    time.sleep(ALERT_GRACE)
    assert _alert_mails(smtp_sink, old, title, mark) == [mail]
    assert _alert_mails(smtp_sink, new, title, mark) == [], "the new address got the alert"
    assert _apns_titles(stack, phone_token).count(title) == 1
    assert _fcm_titles(stack, laptop_fcm).count(title) == 1
    assert stack.apns.refusals == [] and stack.fcm.refusals == [], (stack.apns.refusals, stack.fcm.refusals)


def test_turning_mfa_off_alerts_the_other_devices_and_by_email(stack, client, smtp_sink, push_app):
    """DELETE /v1/me/mfa from a fresh aal 2 session on the laptop: the phone's device gets the
    alert, the laptop's (the session that turned it off) none."""
    from test_mfa import enrol_totp
    email = unique_email("mfa-off-alert")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    phone_token, laptop_token = unique_push_token(), unique_push_token()
    _register(client, push_app, phone["access_token"], phone_token, "apns")
    _, codes = enrol_totp(client, push_app, phone["access_token"])
    laptop = _mfa_signed_in(client, push_app, email, codes[0], LAPTOP_UA)
    _register(client, push_app, laptop["access_token"], laptop_token, "apns")
    title = "Two-step verification turned off"
    mark = smtp_sink.mark()
    resp = client.request("DELETE", "/v1/me/mfa", {"code": codes[1]}, app_key=push_app["app_key"],
                          token=laptop["access_token"])
    assert resp.status == 204, resp

    _assert_one_alert_but_not_to_the_acting_device(stack, smtp_sink, email, title, mark,
                                                    "Two-step verification was turned off", phone_token, laptop_token)


def test_adding_a_passkey_alerts_the_other_devices_and_by_email(stack, client, smtp_sink, push_app):
    """POST /v1/me/passkeys from the laptop (a software authenticator, as in test_passkeys): the
    phone's device gets the alert, the laptop's none."""
    import webauthn_authenticator as wa
    rp_id = "push-passkeys.example.test"
    origin = "https://" + rp_id
    stack.configure_app(push_app["app_id"], webauthn_rp_id=rp_id, webauthn_origins=[origin])
    email = unique_email("passkey-alert")
    phone, laptop, phone_token, laptop_token = _phone_and_laptop(client, push_app, email)
    title = f"A passkey was added to {push_app['name']}"
    mark = smtp_sink.mark()
    options = client.post("/v1/me/passkeys/options", app_key=push_app["app_key"], token=laptop["access_token"])
    assert options.status == 200, options
    _, registration = wa.create(options.data, origin)
    resp = client.post("/v1/me/passkeys", {"response": registration}, app_key=push_app["app_key"],
                       token=laptop["access_token"])
    assert resp.status == 201, resp

    _assert_one_alert_but_not_to_the_acting_device(stack, smtp_sink, email, title, mark,
                                                    "A passkey was added to your", phone_token, laptop_token)


def test_backup_codes_running_low_alert_at_the_threshold_and_at_each_use_below(stack, client, smtp_sink,
                                                                                 push_app):
    """Backup codes spent one per MFA sign-in from the laptop. No use that leaves more than the
    threshold alerts; the use that leaves exactly the threshold raises one alert, and (as
    SecurityAlerts.backupCodesLowThreshold says: "this many or fewer") each later use one more.
    The code spends them while signing in, before the new session exists, so no session is left
    out: the phone's device and an earlier laptop session's device both get each alert."""
    from test_mfa import enrol_totp
    # Ten sign-ins of one account in a minute: above the default per-identifier limit.
    stack.configure_app(push_app["app_id"], rate_limits={"sign_in_per_identifier": "50/1m"})
    email = unique_email("backup-low")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    phone_token, laptop_token = unique_push_token(), unique_push_token()
    _register(client, push_app, phone["access_token"], phone_token, "apns")
    _, codes = enrol_totp(client, push_app, phone["access_token"])
    title = f"Few backup codes left for {push_app['name']}"
    mark = smtp_sink.mark()

    def use(code):
        return _mfa_signed_in(client, push_app, email, code, LAPTOP_UA)

    def remaining(session):
        status = client.get("/v1/me/mfa", app_key=push_app["app_key"], token=session["access_token"])
        assert status.status == 200, status
        return status.data["backup_codes_remaining"]

    first = use(codes[0])
    _register(client, push_app, first["access_token"], laptop_token, "apns")
    above = len(codes) - BACKUP_CODES_LOW_THRESHOLD - 1  # uses that leave more than the threshold
    for code in codes[1:above]:
        last = use(code)
    assert remaining(last) == BACKUP_CODES_LOW_THRESHOLD + 1

    # The use that reaches the threshold: one alert, by mail and to both devices.
    crossing = use(codes[above])
    assert remaining(crossing) == BACKUP_CODES_LOW_THRESHOLD
    mail = smtp_sink.wait_for(email, lambda m: m.subject == title, timeout=ALERT_TIMEOUT, after=mark)
    assert "few backup codes left" in mail.text, mail.text
    for token in (phone_token, laptop_token):
        assert _wait_for_count(lambda t=token: _apns_titles(stack, t).count(title), 1) == 1, \
            (_apns_titles(stack, token), stack.apns.refusals)
    time.sleep(ALERT_GRACE)
    # Exactly one: none of the earlier uses alerted.
    assert _alert_mails(smtp_sink, email, title, mark) == [mail]
    assert _apns_titles(stack, phone_token).count(title) == 1
    assert _apns_titles(stack, laptop_token).count(title) == 1

    # One use below the threshold: one alert more.
    below = use(codes[above + 1])
    assert remaining(below) == BACKUP_CODES_LOW_THRESHOLD - 1
    assert _wait_for_count(lambda: len(_alert_mails(smtp_sink, email, title, mark)), 2) == 2
    for token in (phone_token, laptop_token):
        assert _wait_for_count(lambda t=token: _apns_titles(stack, t).count(title), 2) == 2, \
            (_apns_titles(stack, token), stack.apns.refusals)
    time.sleep(ALERT_GRACE)
    assert len(_alert_mails(smtp_sink, email, title, mark)) == 2
    assert [_apns_titles(stack, t).count(title) for t in (phone_token, laptop_token)] == [2, 2]
    assert stack.apns.refusals == [], stack.apns.refusals


def test_turning_mfa_off_with_one_of_the_last_backup_codes_raises_no_low_codes_alert(stack, client, smtp_sink,
                                                                                       push_app):
    """Turning MFA off removes every backup code: spending one of the last few to do it says
    "turned off", never "few backup codes left" (SecondFactors.check, alertingLowBackupCodes)."""
    from test_mfa import enrol_totp
    stack.configure_app(push_app["app_id"], rate_limits={"sign_in_per_identifier": "50/1m"})
    email = unique_email("mfa-off-last-codes")
    phone = _signed_up(client, push_app, email, PHONE_UA)
    _, codes = enrol_totp(client, push_app, phone["access_token"])
    # Spend codes at sign-in until the next use would reach the threshold.
    above = len(codes) - BACKUP_CODES_LOW_THRESHOLD - 1
    for code in codes[:above]:
        session = _mfa_signed_in(client, push_app, email, code, LAPTOP_UA)
    low_title = f"Few backup codes left for {push_app['name']}"
    off_title = "Two-step verification turned off"
    mark = smtp_sink.mark()
    resp = client.request("DELETE", "/v1/me/mfa", {"code": codes[above]}, app_key=push_app["app_key"],
                          token=session["access_token"])
    assert resp.status == 204, resp
    smtp_sink.wait_for(email, lambda m: m.subject == off_title, timeout=ALERT_TIMEOUT, after=mark)
    time.sleep(ALERT_GRACE)
    assert _alert_mails(smtp_sink, email, low_title, mark) == [], "a low-codes alert for codes just removed"
