"""Phone sign-in (POST /v1/auth/phone/send → {session_id, expires_in}; POST /v1/auth/phone/verify
{session_id, code}), phone linking (POST /v1/me/phone + /v1/me/phone/verify), guest upgrade by
phone, and the SMS-pumping policy (allowed calling codes, caps per number/IP/app, the breaker),
whose refusals answer exactly like a send. SMS go through the mailer's SMS channel: to .sms files
for apps without an account (IDENTITY_SMS_DIR), or to a Twilio-compatible stand-in
(sms_standin.py) for apps that set one."""

import glob
import os
import random
import re
import tempfile
import time
import uuid

import pytest

from identity_client import assert_problem, assert_token_response
from admin_tools import admin
from mail_flows import dead_letters, expire_codes
from ops_metrics import scrape, value
from provider_flows import amr
from sms_standin import SmsStandin

SMS_DEAD = "identity.mailer.sms.dead"


def french_mobile():
    return "+336" + "".join(random.choice("0123456789") for _ in range(8))


def national_fr(e164):
    """+33612345678 → 06 12 34 56 78."""
    digits = "0" + e164[3:]
    return " ".join(digits[i:i + 2] for i in range(0, 10, 2))


@pytest.fixture
def phone_app(configured_app_factory):
    """An app that allows France (+33) and the UK (+44), with the resend cooldown off so a test
    may send twice to one number."""
    return configured_app_factory(sms_allowed_calling_codes="33,44",
                                  rate_limits={"sms_resend_per_number": "off"})


@pytest.fixture(scope="module")
def twilio():
    standin = SmsStandin("AC" + uuid.uuid4().hex, "tok-" + uuid.uuid4().hex)
    yield standin
    standin.stop()


@pytest.fixture
def twilio_app(stack, configured_app_factory, twilio):
    with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as token:
        token.write(twilio.auth_token + "\n")
    try:
        return configured_app_factory(sms_allowed_calling_codes="33,44", sms_api_url=twilio.url,
                                      sms_account_sid=twilio.account_sid, sms_auth_token_file=token.name,
                                      sms_from="+15005550006", rate_limits={"sms_resend_per_number": "off"})
    finally:
        os.unlink(token.name)


def send(client, app, phone, country_code=None, **kw):
    body = {"phone": phone}
    if country_code is not None:
        body["country_code"] = country_code
    return client.post("/v1/auth/phone/send", body, app_key=app["app_key"], **kw)


def sent(resp):
    assert resp.status == 202, resp
    data = resp.data
    assert set(data) == {"session_id", "expires_in"}, data
    assert data["expires_in"] == 600, data
    assert data["session_id"].startswith("phs_"), data
    return data["session_id"]


def verify(client, app, session_id, code, token=None, **fields):
    return client.post("/v1/auth/phone/verify", {"session_id": session_id, "code": code, **fields},
                       app_key=app["app_key"], token=token)


def sms_files(stack, phone):
    found = []
    for path in glob.glob(os.path.join(stack.log_dir, "sms", "*.sms")):
        with open(path) as f:
            text = f.read()
        if text.startswith(f"To: {phone}\n"):
            found.append((os.path.getmtime(path), text))
    return [text for _, text in sorted(found)]


def wait_sms_file(stack, phone, count=1, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sms_files(stack, phone)
        if len(found) >= count:
            return found[-1]
        time.sleep(0.05)
    pytest.fail(f"no SMS file to {phone} within {timeout}s\n{stack.mailer_worker.tail(20)}")


def code_of(text):
    match = re.search(r"\b(\d{6})\b", text)
    assert match, text
    return match.group(1)


def refusals(stack, reason):
    return value(scrape(stack.metrics_url(stack.worker)), "identity_sms_refusals_total", reason=reason)


def deliveries(stack, outcome):
    return value(scrape(stack.metrics_url(stack.mailer_worker)), "identity_deliveries_total",
                 channel="sms", outcome=outcome)


# --- sign-in --------------------------------------------------------------------------------


def test_sign_in_with_e164_creates_the_account_and_national_input_finds_it(stack, client, phone_app):
    phone = french_mobile()
    session = sent(send(client, phone_app, phone[:3] + " " + phone[3:]))
    text = wait_sms_file(stack, phone)
    assert phone_app["name"] in text, text
    resp = verify(client, phone_app, session, code_of(text), first_name="Ada")
    assert resp.status == 200, resp
    data = resp.data
    assert_token_response(data, is_new_user=True, expires_in=phone_app["access_token_ttl"])
    assert data["user"]["phone"] == phone, data["user"]
    assert data["user"]["first_name"] == "Ada", data["user"]
    assert data["user"]["email"] is None, data["user"]
    assert amr(data) == ["sms"], amr(data)
    me = client.me(phone_app, data["access_token"])
    assert me.status == 200 and me.data["phone"] == phone, me

    # The same number, national with its country (as ISO region, then as calling code).
    for country in ("FR", "+33"):
        session = sent(send(client, phone_app, national_fr(phone), country_code=country))
        again = verify(client, phone_app, session, code_of(wait_sms_file(stack, phone, count=2 if country == "FR" else 3)))
        assert again.status == 200, again
        assert again.data["is_new_user"] is False, again.data
        assert again.data["user"]["uid"] == data["user"]["uid"], again.data


def test_a_code_is_single_use_and_a_wrong_one_is_a_wrong_guess(stack, client, phone_app):
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    code = code_of(wait_sms_file(stack, phone))
    wrong = "000000" if code != "000000" else "111111"
    assert_problem(verify(client, phone_app, session, wrong), 401, "auth/invalid-code")
    assert verify(client, phone_app, session, code).status == 200
    assert_problem(verify(client, phone_app, session, code), 401, "auth/invalid-code")


def test_five_wrong_guesses_kill_the_code(stack, client, phone_app):
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    code = code_of(wait_sms_file(stack, phone))
    wrong = "000000" if code != "000000" else "111111"
    for _ in range(5):
        assert_problem(verify(client, phone_app, session, wrong), 401, "auth/invalid-code")
    assert_problem(verify(client, phone_app, session, code), 401, "auth/invalid-code")


def test_an_expired_code_is_401_code_expired(stack, client, phone_app):
    """docs/api-contract.md: the same code rules as email codes, expiry included."""
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    code = code_of(wait_sms_file(stack, phone))
    expire_codes(phone_app)
    assert_problem(verify(client, phone_app, session, code), 401, "auth/code-expired")


def test_a_disabled_account_cannot_sign_in_by_phone(stack, client, phone_app):
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    signed_up = verify(client, phone_app, session, code_of(wait_sms_file(stack, phone)))
    assert signed_up.status == 200, signed_up
    disabled = admin(client, phone_app, "POST", f"/v1/admin/users/{signed_up.data['user']['uid']}/disable")
    assert disabled.status == 200, disabled
    session = sent(send(client, phone_app, phone))
    assert_problem(verify(client, phone_app, session, code_of(wait_sms_file(stack, phone, count=2))), 403,
                   "auth/user-disabled")


def test_a_new_send_replaces_the_old_session(stack, client, phone_app):
    phone = french_mobile()
    first = sent(send(client, phone_app, phone))
    first_code = code_of(wait_sms_file(stack, phone))
    second = sent(send(client, phone_app, phone))
    second_code = code_of(wait_sms_file(stack, phone, count=2))
    assert_problem(verify(client, phone_app, first, first_code), 401, "auth/invalid-code")
    assert verify(client, phone_app, second, second_code).status == 200


@pytest.mark.parametrize("phone,country", [("12345", None), ("+33 6 12", None), ("0612345678", None),
                                           ("0612345678", "ZZ"), ("+999123456789", None), ("+33abc", None)])
def test_an_impossible_number_is_422(client, phone_app, phone, country):
    assert_problem(send(client, phone_app, phone, country_code=country), 422, "auth/invalid-phone-number")


def test_a_session_of_another_app_is_refused(stack, client, phone_app, configured_app_factory):
    other = configured_app_factory(sms_allowed_calling_codes="33")
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    code = code_of(wait_sms_file(stack, phone))
    assert_problem(verify(client, other, session, code), 401, "auth/invalid-code")
    assert verify(client, phone_app, session, code).status == 200


def test_mfa_applies_to_a_phone_sign_in(stack, client, phone_app):
    """The phone code is a first factor: with TOTP on, it answers 202 and the challenge finishes
    the sign-in with amr sms, otp (the TOTP code), mfa (SignInOutcome, as for every first factor)."""
    from test_mfa import challenge_of, code_at, enrol_totp
    from test_mfa import verify as mfa_verify
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    first = verify(client, phone_app, session, code_of(wait_sms_file(stack, phone)))
    assert first.status == 200, first
    secret, _ = enrol_totp(client, phone_app, first.data["access_token"])
    session = sent(send(client, phone_app, phone))
    challenge = challenge_of(verify(client, phone_app, session, code_of(wait_sms_file(stack, phone, count=2))))
    # The current step's code confirmed the enrolment (each code once): the next step's (±1 accepted).
    done = mfa_verify(client, phone_app, challenge, code_at(secret, 1))
    assert done.status == 200, done
    assert done.data["user"]["uid"] == first.data["user"]["uid"], done.data
    assert amr(done.data) == ["sms", "otp", "mfa"], amr(done.data)


# --- linking and guests ---------------------------------------------------------------------


def test_link_a_phone_while_signed_in(stack, client, phone_app):
    user = client.new_user(phone_app)
    token = user["access_token"]
    phone = french_mobile()
    resp = client.post("/v1/me/phone", {"phone": phone}, app_key=phone_app["app_key"], token=token)
    session = sent(resp)
    code = code_of(wait_sms_file(stack, phone))
    # Another user's token cannot spend it.
    stranger = client.new_user(phone_app)["access_token"]
    assert_problem(client.post("/v1/me/phone/verify", {"session_id": session, "code": code},
                               app_key=phone_app["app_key"], token=stranger), 401, "auth/invalid-code")
    done = client.post("/v1/me/phone/verify", {"session_id": session, "code": code},
                       app_key=phone_app["app_key"], token=token)
    assert done.status == 200, done
    assert done.data["phone"] == phone, done.data
    # The number now signs in to that account.
    session = sent(send(client, phone_app, phone))
    signed = verify(client, phone_app, session, code_of(wait_sms_file(stack, phone, count=2)))
    assert signed.status == 200 and signed.data["user"]["uid"] == user["user"]["uid"], signed


def test_link_refuses_a_number_another_account_verified(stack, client, phone_app):
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    assert verify(client, phone_app, session, code_of(wait_sms_file(stack, phone))).status == 200
    token = client.new_user(phone_app)["access_token"]
    session = sent(client.post("/v1/me/phone", {"phone": phone}, app_key=phone_app["app_key"], token=token))
    code = code_of(wait_sms_file(stack, phone, count=2))
    assert_problem(client.post("/v1/me/phone/verify", {"session_id": session, "code": code},
                               app_key=phone_app["app_key"], token=token), 409, "auth/phone-already-in-use")


def test_guest_upgrade_by_phone_keeps_the_uid(stack, client, phone_app):
    guest = client.guest(phone_app, "g" * 10 + uuid.uuid4().hex)
    assert guest.status in (200, 201), guest
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    code = code_of(wait_sms_file(stack, phone))
    resp = verify(client, phone_app, session, code, token=guest.data["access_token"])
    assert resp.status == 200, resp
    assert resp.data["user"]["uid"] == guest.data["user"]["uid"], resp.data
    assert resp.data["user"]["is_guest"] is False and resp.data["user"]["phone"] == phone, resp.data


def test_guest_upgrade_to_a_taken_number_is_409_and_the_code_still_signs_in(stack, client, phone_app):
    phone = french_mobile()
    session = sent(send(client, phone_app, phone))
    owner = verify(client, phone_app, session, code_of(wait_sms_file(stack, phone)))
    assert owner.status == 200
    guest = client.guest(phone_app, "g" * 10 + uuid.uuid4().hex)
    session = sent(send(client, phone_app, phone))
    code = code_of(wait_sms_file(stack, phone, count=2))
    assert_problem(verify(client, phone_app, session, code, token=guest.data["access_token"]), 409, "auth/account-exists")
    again = verify(client, phone_app, session, code)
    assert again.status == 200 and again.data["user"]["uid"] == owner.data["user"]["uid"], again


# --- SMS-pumping protection: refusals answer like sends -------------------------------------


def _refused_like_a_send(stack, client, app, phone, reason, **kw):
    before = refusals(stack, reason)
    resp = send(client, app, phone, **kw)
    session = sent(resp)
    time.sleep(1.0)
    assert refusals(stack, reason) == before + 1, f"refusal {reason} not counted"
    # Nothing was texted, and the session leads nowhere.
    assert_problem(verify(client, app, session, "123456"), 401, "auth/invalid-code")
    return session


def test_a_calling_code_the_app_did_not_allow_answers_like_a_send(stack, client, phone_app, app):
    uk_before = len(sms_files(stack, "+447700900123"))
    _refused_like_a_send(stack, client, phone_app, "+1 202 555 0143", "calling_code")
    # A fresh app allows no calling code at all.
    phone = french_mobile()
    _refused_like_a_send(stack, client, app, phone, "calling_code")
    assert sms_files(stack, phone) == [] and len(sms_files(stack, "+447700900123")) == uk_before


def test_the_per_number_cap(stack, client, configured_app_factory):
    capped = configured_app_factory(sms_allowed_calling_codes="33",
                                    rate_limits={"sms_resend_per_number": "off", "sms_send_per_number": "2/1h"})
    phone = french_mobile()
    for count in (1, 2):
        sent(send(client, capped, phone))
        wait_sms_file(stack, phone, count=count)
    _refused_like_a_send(stack, client, capped, phone, "sms_send_per_number")
    assert len(sms_files(stack, phone)) == 2


def test_the_per_ip_cap(stack, client, configured_app_factory):
    capped = configured_app_factory(sms_allowed_calling_codes="33", rate_limits={"sms_send_per_ip": "2/1h"})
    ip = f"198.51.100.{random.randint(1, 254)}"
    for _ in range(2):
        phone = french_mobile()
        sent(send(client, capped, phone, headers={"X-Forwarded-For": ip}))
        wait_sms_file(stack, phone)
    phone = french_mobile()
    _refused_like_a_send(stack, client, capped, phone, "sms_send_per_ip", headers={"X-Forwarded-For": ip})
    assert sms_files(stack, phone) == []


def test_the_per_app_cap(stack, client, configured_app_factory):
    capped = configured_app_factory(sms_allowed_calling_codes="33", rate_limits={"sms_send_per_app": "2/1h"})
    for _ in range(2):
        phone = french_mobile()
        sent(send(client, capped, phone))
        wait_sms_file(stack, phone)
    _refused_like_a_send(stack, client, capped, french_mobile(), "sms_send_per_app")


def test_the_breaker_opens_past_the_hourly_threshold_and_stops_every_send(stack, client, configured_app_factory):
    app = configured_app_factory(sms_allowed_calling_codes="33", sms_breaker_hourly=3)
    for _ in range(3):
        phone = french_mobile()
        sent(send(client, app, phone))
        wait_sms_file(stack, phone)
    _refused_like_a_send(stack, client, app, french_mobile(), "breaker")
    # Open: the next sends are refused too, and another app is not affected.
    _refused_like_a_send(stack, client, app, french_mobile(), "breaker")
    settings = app["settings"]
    assert settings["sms_breaker_hourly"] == 3 and settings["sms_allowed_calling_codes"] == [33], settings


# --- the Twilio-compatible transport ----------------------------------------------------------


def test_an_app_account_sends_through_the_messaging_api(stack, client, twilio_app, twilio):
    phone = french_mobile()
    session = sent(send(client, twilio_app, phone))
    [body] = twilio.wait_for(phone)
    assert verify(client, twilio_app, session, code_of(body)).status == 200
    assert sms_files(stack, phone) == []
    settings = twilio_app["settings"]
    assert settings["sms_auth_token_set"] is True and "sms_auth_token" not in settings, settings
    assert twilio.auth_token not in str(settings)


def test_429_and_5xx_are_retried_then_delivered_once(stack, client, twilio_app, twilio):
    phone = french_mobile()
    twilio.answer(phone, 429, 503)
    before = deliveries(stack, "retried")
    sent(send(client, twilio_app, phone))
    assert len(twilio.wait_for(phone)) == 1
    time.sleep(1.5)
    assert twilio.messages_to(phone) and len(twilio.messages_to(phone)) == 1
    assert twilio.statuses_for(phone) == [429, 503, 201], twilio.statuses_for(phone)
    assert deliveries(stack, "retried") >= before + 2


def test_a_4xx_is_dead_lettered_at_once(stack, client, twilio_app, twilio):
    phone = french_mobile()
    twilio.answer(phone, 400)
    sent(send(client, twilio_app, phone))
    deadline = time.monotonic() + 10
    found = []
    while time.monotonic() < deadline and not found:
        found = [m for m in dead_letters(queue=SMS_DEAD) if m.get("to") == phone]
        time.sleep(0.2)
    assert found, f"no dead letter for {phone}\n{stack.mailer_worker.tail(20)}"
    assert twilio.statuses_for(phone) == [400], twilio.statuses_for(phone)
    assert twilio.messages_to(phone) == []
    # The code travels sealed, even in a dead letter.
    assert found[0].body.get("sealed_code") and not found[0].body.get("code"), found[0].body


# --- the ledger: one SMS per message, whatever the deliveries --------------------------------


@pytest.mark.disruptive
def test_a_duplicated_sms_message_is_sent_once(stack, client, twilio_app, twilio):
    """The same SendSms delivered three times (a publisher's retry, a redelivery after a crash)
    texts once: the mailer's delivery ledger claims each message id once. Stops the mailer
    worker while the copies are made."""
    import pika
    phone = french_mobile()
    stack.stop_mailer_worker()
    try:
        session = sent(send(client, twilio_app, phone))
        connection = pika.BlockingConnection(pika.URLParameters(os.environ["IDENTITY_AMQP_URL"]))
        try:
            channel = connection.channel()
            deadline = time.monotonic() + 10
            method = None
            while method is None and time.monotonic() < deadline:
                method, properties, body = channel.basic_get("identity.mailer.sms", auto_ack=False)
                if method is None:
                    time.sleep(0.1)
            assert method is not None, "the SMS command never reached identity.mailer.sms"
            # The copies come from another broker user: they cannot claim the first publisher's
            # user_id (the broker refuses a user_id that is not the connection's own).
            properties.user_id = None
            for _ in range(3):
                channel.basic_publish("", "identity.mailer.sms", body, properties)
            channel.basic_ack(method.delivery_tag)
        finally:
            connection.close()
    finally:
        stack.start_mailer_worker()
    [text] = twilio.wait_for(phone)
    time.sleep(2.0)
    assert len(twilio.messages_to(phone)) == 1, twilio.messages_to(phone)
    assert deliveries(stack, "duplicate") >= 2
    assert verify(client, twilio_app, session, code_of(text)).status == 200
