"""Security alerts are on by default for every change of a way in (docs/security.md,
"Takeover"): a thief with a stolen token who adds a passkey, links a phone or a provider, or
renews the backup codes is heard of at once by the owner's mailbox. An app that turns alerts off
sends none. Alerts are told apart by the mailer's X-Identity-Mail-Kind header."""

import time

import pytest

import webauthn_authenticator as wa
from identity_client import PASSWORD, assert_no_content, unique_email
from provider_flows import google_body
from test_mfa import enrol_totp, fully_signed_in
from test_phone import code_of, french_mobile, sent, wait_sms_file

RP_ID = "alerts.example.test"
ORIGIN = "https://alerts.example.test"
ALERT_TIMEOUT = 15


@pytest.fixture
def default_app(provider_app_factory):
    """Providers, passkeys and phone codes, and nothing said about alerts."""
    return provider_app_factory(webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN], sms_allowed_calling_codes="33",
                                rate_limits={"sms_resend_per_number": "off"})


def alert(smtp_sink, email, kind, mark):
    return smtp_sink.wait_for(email, lambda m: m.kind == "security_alert_" + kind, timeout=ALERT_TIMEOUT, after=mark)


def test_each_change_of_a_way_in_alerts_by_default(stack, client, providers, smtp_sink, default_app):
    assert default_app["settings"].get("security_alerts", True) is True, default_app["settings"]
    email = unique_email("alerts")
    user = client.new_user(default_app, email=email)
    token, key = user["access_token"], default_app["app_key"]

    mark = smtp_sink.mark()
    options = client.post("/v1/me/passkeys/options", app_key=key, token=token).data
    _, registration = wa.create(options, ORIGIN)
    added = client.post("/v1/me/passkeys", {"response": registration}, app_key=key, token=token)
    assert added.status == 201, added
    alert(smtp_sink, email, "passkey_added", mark)

    mark = smtp_sink.mark()
    assert_no_content(client.delete(f"/v1/me/passkeys/{added.data['id']}", app_key=key, token=token))
    assert "removed" in alert(smtp_sink, email, "passkey_removed", mark).subject

    mark = smtp_sink.mark()
    phone = french_mobile()
    session = sent(client.post("/v1/me/phone", {"phone": phone}, app_key=key, token=token))
    linked = client.post("/v1/me/phone/verify", {"session_id": session, "code": code_of(wait_sms_file(stack, phone))},
                         app_key=key, token=token)
    assert linked.status == 200, linked
    alert(smtp_sink, email, "phone_changed", mark)

    mark = smtp_sink.mark()
    body, _ = google_body(providers)
    assert client.link_identity(default_app, token, "google", body).status == 200
    assert "Google" in alert(smtp_sink, email, "provider_linked", mark).text
    mark = smtp_sink.mark()
    assert_no_content(client.unlink_identity(default_app, token, "google"))
    assert "Google" in alert(smtp_sink, email, "provider_unlinked", mark).text

    mark = smtp_sink.mark()
    secret, _ = enrol_totp(client, default_app, token)
    alert(smtp_sink, email, "mfa_enabled", mark)
    full = fully_signed_in(client, default_app, email, secret, 1)
    mark = smtp_sink.mark()
    renewed = client.post("/v1/me/mfa/backup-codes", app_key=key, token=full["access_token"])
    assert renewed.status == 200, renewed
    alert(smtp_sink, email, "backup_codes_renewed", mark)

    mark = smtp_sink.mark()
    assert_no_content(client.change_password(default_app, full["access_token"], PASSWORD, "a brand new passphrase"))
    alert(smtp_sink, email, "password_changed", mark)


def test_an_app_that_turns_alerts_off_sends_none(stack, client, smtp_sink, default_app):
    stack.configure_app(default_app["app_id"], security_alerts="false")
    email = unique_email("no-alerts")
    user = client.new_user(default_app, email=email)
    mark = smtp_sink.mark()
    options = client.post("/v1/me/passkeys/options", app_key=default_app["app_key"], token=user["access_token"]).data
    _, registration = wa.create(options, ORIGIN)
    assert client.post("/v1/me/passkeys", {"response": registration}, app_key=default_app["app_key"],
                       token=user["access_token"]).status == 201
    assert_no_content(client.change_password(default_app, user["access_token"], PASSWORD, "a brand new passphrase"))
    time.sleep(3)
    assert smtp_sink.messages_to(email, after=mark, alerts=True) == []
