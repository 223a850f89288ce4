"""The operator's ceilings on tenants' settings (OperatorLimits.swift): through the admin API a
tenant's rate-limit override may not pass the operator's ceiling (built in: 10 times the
default over the default window; IDENTITY_RATE_LIMIT_CEILINGS, which the harness sets to
guest_per_ip=none, sign_up_per_ip=40/1h, sms_breaker_hourly=5000/1h), in count or in rate, nor
turn a limit off unless its ceiling is `none`; the operator's identityctl is not held to them.
An app that texts through the operator's shared SMS account may allow only the operator's
calling codes (IDENTITY_SMS_SHARED_CALLING_CODES, here 1,33,44,52): refused with a 422 at
save, and at send time answered like a send. An app with its own account may allow others."""

import random
import time

import pytest

import db_tools
from admin_tools import admin
from identity_client import assert_problem, new_guest_secret
from test_phone import code_of, french_mobile, refusals, send, sent, sms_files, twilio, verify, \
    wait_sms_file  # noqa: F401 (twilio is a fixture)


def german_mobile():
    return "+49151" + "".join(random.choice("0123456789") for _ in range(8))


def patch(client, app, body):
    return admin(client, app, "PATCH", "/v1/admin/settings", body)


def refused_at(resp, location):
    problem = assert_problem(resp, 422, "auth/validation-failed", locations=[location])
    return next(e["message"] for e in problem["errors"] if e["location"] == location)


@pytest.mark.parametrize("value", ["1001/1m", "1000/30s", "10000/10m", "1000000000/1s"],
                         ids=["count", "rate", "burst-at-the-same-rate", "huge"])
def test_an_override_above_the_built_in_ceiling_is_refused(client, app, value):
    # sign_in_per_ip is 100/1m by default: its built-in ceiling is 1000/60s.
    message = refused_at(patch(client, app, {"rate_limits": {"sign_in_per_ip": value}}), "body.rate_limits")
    assert "sign_in_per_ip" in message and "1000/60s" in message, message
    shown = admin(client, app, "GET", "/v1/admin/settings").data["rate_limits"]
    assert shown["sign_in_per_ip"] == "100/60s", shown


def test_an_override_at_or_under_the_ceiling_is_saved(client, app):
    resp = patch(client, app, {"rate_limits": {"sign_in_per_ip": "1000/1m", "sms_send_per_app": "500/1h"}})
    assert resp.status == 200, resp
    assert resp.data["rate_limits"]["sign_in_per_ip"] == "1000/60s"
    assert resp.data["rate_limits"]["sms_send_per_app"] == "500/3600s"
    # The SMS caps have ceilings too (sms_send_per_app: 1000/1h by default).
    refused_at(patch(client, app, {"rate_limits": {"sms_send_per_app": "10001/1h"}}), "body.rate_limits")


def test_the_operator_environment_sets_ceilings_and_allows_off(client, app):
    # sign_up_per_ip=40/1h: lower than the built-in 200/1h.
    message = refused_at(patch(client, app, {"rate_limits": {"sign_up_per_ip": "41/1h"}}), "body.rate_limits")
    assert "40/3600s" in message, message
    assert patch(client, app, {"rate_limits": {"sign_up_per_ip": "40/1h"}}).status == 200
    # Off only where the ceiling is none.
    refused_at(patch(client, app, {"rate_limits": {"sms_send_per_number": "off"}}), "body.rate_limits")
    resp = patch(client, app, {"rate_limits": {"guest_per_ip": "off"}})
    assert resp.status == 200 and resp.data["rate_limits"]["guest_per_ip"] == "off", resp
    for _ in range(31):  # past the default of 30 per IP per hour
        assert client.guest(app, new_guest_secret(), headers={"X-Forwarded-For": "198.51.100.77"}).status in (200, 201)


def test_the_breaker_threshold_has_a_ceiling(client, app):
    message = refused_at(patch(client, app, {"sms_breaker_hourly": 5001}), "body.sms_breaker_hourly")
    assert "5000" in message, message
    resp = patch(client, app, {"sms_breaker_hourly": 5000})
    assert resp.status == 200 and resp.data["sms_breaker_hourly"] == 5000, resp


def test_the_operator_is_not_held_to_the_ceilings(stack, app):
    shown = stack.configure_app(app["app_id"], rate_limits={"sign_in_per_ip": "100000/1m"}, sms_breaker_hourly=90000)
    assert shown["rate_limits"]["sign_in_per_ip"] == "100000/60s" and shown["sms_breaker_hourly"] == 90000, shown


# --- the shared SMS account's calling codes ----------------------------------------------------


def test_codes_outside_the_shared_account_are_refused_at_save(stack, client, app):
    message = refused_at(patch(client, app, {"sms_allowed_calling_codes": [33, 49]}), "body.sms_allowed_calling_codes")
    assert "+49" in message and "+33" not in message.split("(")[0], message
    assert admin(client, app, "GET", "/v1/admin/settings").data["sms_allowed_calling_codes"] == []
    assert patch(client, app, {"sms_allowed_calling_codes": [33, 44]}).status == 200
    # identityctl too: the codes are a property of the operator's account, not a tenant ceiling.
    done = stack.ctl("apps", "settings", app["app_id"], "--sms-allowed-calling-codes", "33,49")
    assert done.returncode != 0 and "--sms-allowed-calling-codes" in done.stderr and "+49" in done.stderr, done.stderr


def test_an_app_with_its_own_account_may_allow_other_codes(client, app, twilio):
    own = {"sms_api_url": twilio.url, "sms_account_sid": twilio.account_sid, "sms_auth_token": twilio.auth_token,
           "sms_from": "+15005550006"}
    resp = patch(client, app, {"sms_allowed_calling_codes": [33, 49], **own})
    assert resp.status == 200 and resp.data["sms_allowed_calling_codes"] == [33, 49], resp
    # Its texts to Germany go through its own account.
    phone = german_mobile()
    session = sent(send(client, app, phone))
    [body] = twilio.wait_for(phone)
    assert verify(client, app, session, code_of(body)).status == 200
    # Dropping its account would leave +49 on the operator's: refused.
    refused_at(patch(client, app, {"sms_account_sid": None}), "body.sms_allowed_calling_codes")
    assert admin(client, app, "GET", "/v1/admin/settings").data["sms_account_sid"] == twilio.account_sid


def test_a_code_the_operator_no_longer_allows_is_refused_at_send_time(stack, client, configured_app_factory):
    app = configured_app_factory(sms_allowed_calling_codes="33")
    # As if the operator had narrowed IDENTITY_SMS_SHARED_CALLING_CODES after the app saved +49.
    db_tools.rows(f"update app_sms_settings set allowed_calling_codes = '{{33,49}}' "
                  f"where app_id = {db_tools.literal(app['app_id'])}")
    phone = german_mobile()
    before = refusals(stack, "shared_calling_code")
    session = sent(send(client, app, phone))
    time.sleep(1.0)
    assert refusals(stack, "shared_calling_code") == before + 1
    assert sms_files(stack, phone) == []
    assert_problem(verify(client, app, session, "123456"), 401, "auth/invalid-code")
    # France is the operator's: still texted.
    french = french_mobile()
    sent(send(client, app, french))
    wait_sms_file(stack, french)
