"""The SMS breaker per lane (SmsPolicy.swift, SmsLane): anonymous phone sign-in sends and the
texts only an account holder causes (phone linking, the SMS second factor) open separate
breakers. A flood of anonymous sends opens the anonymous lane's breaker and stops phone
sign-in codes, but a user with SMS MFA who passes the password still gets the challenge code;
the trip is counted (identity_sms_breaker_trips_total{lane}), audited (sms.breaker_opened) and
logged at warning without the number. The authenticated lane has its own breaker, which does
not stop phone sign-in."""

import time

import db_tools
from admin_tools import audit_rows
from identity_client import assert_problem
from ops_metrics import scrape, value
from test_mfa import challenge_of
from test_mfa import verify as mfa_verify
from test_mfa_sms import sms_mfa_user, texted_code
from test_phone import code_of, french_mobile, refusals, send, sent, sms_files, verify as phone_verify, \
    wait_sms_file

BREAKER = 4


def trips(stack, lane):
    return value(scrape(stack.metrics_url(stack.worker)), "identity_sms_breaker_trips_total", lane=lane)


def breaker_log_lines(stack, app):
    with open(stack.worker.log_path, encoding="utf-8", errors="replace") as log:
        return [line for line in log if 'msg="sms breaker opened' in line and f"app_id={app['app_id']}" in line]


def flood(stack, client, app, count):
    """`count` anonymous phone sign-in sends to fresh numbers, each from a fresh client address
    (the shared client forwards a random one), all answered 202; returns the numbers."""
    numbers = [french_mobile() for _ in range(count)]
    for phone in numbers:
        sent(send(client, app, phone))
    return numbers


def test_an_anonymous_flood_does_not_stop_second_factor_codes(stack, client, configured_app_factory):
    app = configured_app_factory(sms_allowed_calling_codes="33", sms_breaker_hourly=BREAKER,
                                 rate_limits={"sms_resend_per_number": "off"})
    # Linking the phone and enrolling the factor: two texts of the authenticated lane.
    email, phone, uid, _ = sms_mfa_user(stack, client, app)
    anonymous_trips, authenticated_trips = trips(stack, "anonymous"), trips(stack, "authenticated")

    # The flood: BREAKER anonymous sends go out, the next one opens the anonymous breaker.
    numbers = flood(stack, client, app, BREAKER)
    for number in numbers:
        wait_sms_file(stack, number)
    refused_before = refusals(stack, "breaker")
    tripping = french_mobile()
    sent(send(client, app, tripping))
    numbers.append(tripping)
    time.sleep(1.0)
    assert refusals(stack, "breaker") == refused_before + 1, "the tripping send was not refused by the breaker"
    assert sms_files(stack, tripping) == []
    # Open: phone sign-in stays stopped (answered like a send, nothing texted).
    later = french_mobile()
    session = sent(send(client, app, later))
    numbers.append(later)
    time.sleep(0.5)
    assert sms_files(stack, later) == []
    assert_problem(phone_verify(client, app, session, "123456"), 401, "auth/invalid-code")

    # The user who passes the password still gets the challenge code by SMS, and it signs in.
    before = len(sms_files(stack, phone))
    challenge = challenge_of(client.sign_in(app, email=email))
    assert challenge["methods"] == ["sms", "backup_code"], challenge
    done = mfa_verify(client, app, challenge, texted_code(stack, phone, before), method="sms")
    assert done.status == 200 and done.data["user"]["uid"] == uid, done

    # The trip is a metric (by lane), an audit row the app's team sees, and a warning line.
    assert trips(stack, "anonymous") == anonymous_trips + 1
    assert trips(stack, "authenticated") == authenticated_trips
    [row] = audit_rows(client, app, action="sms.breaker_opened")
    assert row["actor"] == "system" and row["target"] == "sms_breaker:anonymous", row
    assert row["detail"] == {"lane": "anonymous", "breaker_hourly": BREAKER, "open_seconds": 3600,
                             "calling_code": "+33"}, row
    assert db_tools.value(f"select count(*) from sms_breakers where app_id = {db_tools.literal(app['app_id'])} "
                          "and lane = 'anonymous' and open_until > now() + interval '59 minutes'") == "1"
    [line] = breaker_log_lines(stack, app)
    assert "level=warning" in line and "lane=anonymous" in line, line
    for number in numbers + [phone]:
        assert number[3:] not in line, f"a phone number is in the log line: {line}"


def test_the_authenticated_lane_has_a_breaker_of_its_own(stack, client, configured_app_factory):
    """Account holders can pump too (accounts are cheap): their texts open their own breaker,
    which stops their lane and leaves phone sign-in working."""
    app = configured_app_factory(sms_allowed_calling_codes="33", sms_breaker_hourly=3,
                                 rate_limits={"sms_resend_per_number": "off"})
    email, phone, _, backup_codes = sms_mfa_user(stack, client, app)  # the link and the enrolment: 2
    before = len(sms_files(stack, phone))
    challenge_of(client.sign_in(app, email=email))
    texted_code(stack, phone, before)  # the third
    authenticated_trips = trips(stack, "authenticated")
    challenge = challenge_of(client.sign_in(app, email=email))  # the fourth opens it
    time.sleep(1.0)
    assert len(sms_files(stack, phone)) == before + 1, "a challenge code was texted past the breaker"
    assert trips(stack, "authenticated") == authenticated_trips + 1
    # The password was right: the challenge opened, and a backup code still finishes it.
    assert mfa_verify(client, app, challenge, backup_codes[0]).status == 200
    # Phone sign-in is another lane: its codes still go.
    number = french_mobile()
    session = sent(send(client, app, number))
    assert phone_verify(client, app, session, code_of(wait_sms_file(stack, number))).status == 200
    [row] = audit_rows(client, app, action="sms.breaker_opened")
    assert row["target"] == "sms_breaker:authenticated" and row["detail"]["lane"] == "authenticated", row
