"""The console's Settings page over plain HTTP (docs/console.md): every section is its own form,
sent as the admin API's `UpdateAppSettings` and checked by its rules.

- Each section's save takes effect, seen through `GET /v1/admin/settings` and through the
  behaviour: a shorter access-token lifetime is a new token's `exp`, a rate limit set low
  answers 429, a sender and subject of the app's own are the next mail's. A section sends only
  the settings its form changed (the audit row names them, and only them).
- A refused value (the gateway's checks, or the worker's: an operator's ceiling, a passkey
  origin outside the relying party) shows its message next to its field and nothing is saved.
- The template preview renders the typed text with sample values and shows the HTML part
  escaped; nothing is saved by it.
- Secrets (the SMS auth token, the APNs key, the FCM service account) show only as set, are
  never echoed back, need a recent sign-in, and the audit row names the setting, not its value.
- A viewer sees the values with no form; a forged POST to any section is 403 and saves nothing.
"""

import html
import json
import re

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import db_tools
import jwt_tools
from admin_tools import admin
from identity_client import unique_email
from mail_flows import email_code
from test_console_browser import console, console_user, gateway  # noqa: F401 (fixtures)
from test_console_http import ConsoleSession

SECTIONS = ("providers", "mail", "templates", "sms", "push", "passkeys", "clients", "tokens", "rate-limits", "security")


def settings_of(client, app):
    got = admin(client, app, "GET", "/v1/admin/settings")
    assert got.status == 200, got
    return got.data


def owner_of(stack, client, console, gateway, role="owner"):
    app = stack.create_app()
    email, _ = console_user(stack, client, console, app, role, totp=False)
    return app, ConsoleSession(client, gateway, email), email


def page_form(session, app):
    """The Settings page and its fields as a browser would post them: name → value (inputs,
    ticked checkboxes, textareas, selected options)."""
    page = session.get(f"/console/apps/{app['app_id']}/settings")
    assert page.status == 200, page
    text = page.body.decode()
    fields = {}
    for tag in re.findall(r"<input[^>]*>", text):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', tag))
        kind = attrs.get("type", "text")
        if "name" not in attrs or kind == "file" or (kind == "checkbox" and " checked" not in tag):
            continue
        fields[attrs["name"]] = html.unescape(attrs.get("value", ""))
    for name, value in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>([^<]*)</textarea>', text):
        fields[name] = html.unescape(value)
    for name, options in re.findall(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', text, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        if chosen:
            fields[name] = html.unescape(chosen.group(1))
    return text, fields


def save(session, app, section, changes, base=None):
    """Posts `section`'s form as the browser would: what the page showed (with the values it
    remembers), with `changes` typed over it."""
    _, shown = page_form(session, app) if base is None else (None, base)
    fields = {k: v for k, v in shown.items() if k != "csrf" and not k.startswith("template_")}
    fields.update(changes)
    return session.post(f"/console/apps/{app['app_id']}/settings/{section}", fields)


def field_block(page_html, name):
    """The markup of one field (its control, hint and errors), entities decoded."""
    found = re.search(r'<div class="field">(?:(?!<div class="field">).)*?id="' + re.escape(name) + r'".*?</div>', page_html, re.S)
    assert found, name
    return html.unescape(found.group(0))


def settings_updates(client, app):
    rows = admin(client, app, "GET", "/v1/admin/audit?action=admin.settings.update")
    assert rows.status == 200, rows
    return rows.data


def test_each_section_saves_through_the_admin_api_and_takes_effect(stack, client, console, gateway, smtp_sink):
    app, owner, email = owner_of(stack, client, console, gateway)
    page, _ = page_form(owner, app)
    for section in SECTIONS:
        assert f'action="/console/apps/{app["app_id"]}/settings/{section}#{section}"' in page, section
        assert f'href="#{section}"' in page or section == "templates", section

    # Tokens: a new token lives as long as set.
    saved = save(owner, app, "tokens", {"access_token_ttl": "600", "session_lifetime": "7200"})
    assert saved.status == 200 and "Saved." in saved.body.decode(), saved
    settings = settings_of(client, app)
    assert settings["access_token_ttl"] == 600 and settings["session_lifetime"] == 7200, settings
    signed_up = client.sign_up(app, email=unique_email("ttl"))
    assert signed_up.status == 201, signed_up
    _, claims, _, _ = jwt_tools.split(signed_up.data["access_token"])
    assert claims["exp"] - claims["iat"] == 600, claims
    # Only what the form changed was sent.
    assert settings_updates(client, app)[0]["detail"]["settings"] == ["access_token_ttl", "session_lifetime"]

    # Mail sender and language: the next mail comes from them.
    assert save(owner, app, "mail", {"mail_from_name": "Acme Support", "mail_from_address": "hello@acme.example",
                                     "default_locale": "pt-br"}).status == 200
    settings = settings_of(client, app)
    assert (settings["mail_from_name"], settings["mail_from_address"], settings["default_locale"]) == \
        ("Acme Support", "hello@acme.example", "pt-BR"), settings
    message, _ = email_code(client, smtp_sink, app, unique_email("mail"))
    assert "hello@acme.example" in message.from_header and "Acme Support" in message.from_header, message

    # SMS policy and account (the token is the Secrets test's).
    assert save(owner, app, "sms", {"sms_allowed_calling_codes": "33, +44", "sms_breaker_hourly": "50",
                                    "sms_from": "+15551234567", "sms_api_url": "https://api.twilio.com"}).status == 200
    settings = settings_of(client, app)
    assert settings["sms_allowed_calling_codes"] == [33, 44] and settings["sms_breaker_hourly"] == 50, settings
    assert settings["sms_from"] == "+15551234567", settings

    # Push: public fields.
    assert save(owner, app, "push", {"apns_team_id": "TEAM123456", "apns_key_id": "KEY1234567",
                                     "apns_topic": "com.example.app"}).status == 200
    assert settings_of(client, app)["apns_topic"] == "com.example.app"

    # Passkeys.
    assert save(owner, app, "passkeys", {"webauthn_rp_id": "example.com", "webauthn_rp_name": "Example",
                                         "webauthn_origins": "https://app.example.com\nhttps://example.com",
                                         "webauthn_require_uv": "true"}).status == 200
    settings = settings_of(client, app)
    assert settings["webauthn_rp_id"] == "example.com" and settings["webauthn_require_uv"] is True, settings
    assert settings["webauthn_origins"] == ["https://app.example.com", "https://example.com"], settings

    # Clients & domains.
    assert save(owner, app, "clients", {"path_prefix": "/auth", "allowed_origins": "https://app.example.com",
                                        "apple_nonce": "client", "deep_link_url": "https://app.example.com/auth",
                                        "domains": "id.acme.example"}).status == 200
    settings = settings_of(client, app)
    assert settings["path_prefix"] == "/auth" and settings["allowed_origins"] == ["https://app.example.com"], settings
    assert settings["apple_nonce"] == "client" and settings["deep_link_url"] == "https://app.example.com/auth", settings
    assert "id.acme.example" in settings["domains_pending"], settings
    page, _ = page_form(owner, app)
    assert "id.acme.example waits for verification" in page  # the proof to publish is shown

    # Security: alerts off (the checkbox left unticked), a threshold.
    assert settings_of(client, app)["security_alerts"] is True
    _, shown = page_form(owner, app)
    assert save(owner, app, "security", {"failed_sign_in_audit_threshold": "7"},
                base={k: v for k, v in shown.items() if k != "security_alerts"}).status == 200
    settings = settings_of(client, app)
    assert settings["security_alerts"] is False and settings["failed_sign_in_audit_threshold"] == 7, settings

    # Providers (today's fields, through their own section).
    assert save(owner, app, "providers", {"google_client_ids": "a.apps.googleusercontent.com\nb.apps.googleusercontent.com"}
                ).status == 200
    assert settings_of(client, app)["google_client_ids"] == ["a.apps.googleusercontent.com", "b.apps.googleusercontent.com"]

    # Rate limits: one set low answers 429; the others stay the service's defaults.
    before = settings_of(client, app)["rate_limits"]
    assert save(owner, app, "rate-limits", {"rate_limit_sign_in_per_identifier": "2/15m"}).status == 200
    limits = settings_of(client, app)["rate_limits"]
    assert limits["sign_in_per_identifier"] == "2/900s", limits
    assert {k: v for k, v in limits.items() if k != "sign_in_per_identifier"} == \
        {k: v for k, v in before.items() if k != "sign_in_per_identifier"}
    assert settings_updates(client, app)[0]["detail"]["settings"] == ["rate_limits"]
    target = unique_email("limited")
    assert client.sign_up(app, email=target).status == 201
    statuses = [client.sign_in(app, email=target, password="wrong-password-1").status for _ in range(3)]
    assert statuses[:2] == [401, 401] and statuses[2] == 429, statuses
    # Back to the default.
    assert save(owner, app, "rate-limits", {"rate_limit_sign_in_per_identifier": "default"}).status == 200
    assert settings_of(client, app)["rate_limits"]["sign_in_per_identifier"] == "10/900s"

    # Saving a form unchanged sends nothing.
    unchanged = save(owner, app, "tokens", {})
    assert unchanged.status == 200 and "Nothing was changed." in unchanged.body.decode(), unchanged
    rows = settings_updates(client, app)
    assert rows and all(row["actor"].startswith("console:") and row["detail"]["console_email"] == email for row in rows)


def test_a_refused_value_shows_next_to_its_field_and_nothing_is_saved(stack, client, console, gateway):
    app, owner, _ = owner_of(stack, client, console, gateway)
    before = settings_of(client, app)

    # The gateway's checks (the admin API's rules): every message at its field, nothing saved.
    refused = save(owner, app, "tokens", {"access_token_ttl": "5", "session_lifetime": "7200", "jwks_cache_seconds": "soon"})
    page = refused.body.decode()
    assert refused.status == 422 and "Nothing was saved" in page, refused
    assert "must be 300 to 86400 seconds" in field_block(page, "access_token_ttl")
    assert 'aria-invalid="true"' in field_block(page, "access_token_ttl")
    assert "must be an integer" in field_block(page, "jwks_cache_seconds")
    assert "value=\"7200\"" in field_block(page, "session_lifetime")  # what was typed, shown again
    after = settings_of(client, app)
    assert after["session_lifetime"] == before["session_lifetime"] and after["access_token_ttl"] == before["access_token_ttl"]

    malformed = save(owner, app, "rate-limits", {"rate_limit_sign_up_per_ip": "lots", "rate_limit_guest_per_ip": "5/1h"})
    assert malformed.status == 422
    assert "sign_up_per_ip wants COUNT/WINDOW" in field_block(malformed.body.decode(), "rate_limit_sign_up_per_ip")

    # The worker's: past the operator's ceiling (sign_in_per_ip: 1000/60s).
    ceiling = save(owner, app, "rate-limits", {"rate_limit_sign_in_per_ip": "5000/1m", "rate_limit_guest_per_ip": "5/1h"})
    assert ceiling.status == 422, ceiling
    assert "above the operator's ceiling of 1000/60s" in field_block(ceiling.body.decode(), "rate_limit_sign_in_per_ip")
    assert settings_of(client, app)["rate_limits"] == before["rate_limits"]

    # A passkey origin outside the relying party (the worker's check, with the stored RP).
    outside = save(owner, app, "passkeys", {"webauthn_rp_id": "example.com", "webauthn_origins": "https://evil.example"})
    assert outside.status == 422, outside
    assert "is not example.com or under it" in field_block(outside.body.decode(), "webauthn_origins")
    assert settings_of(client, app)["webauthn_rp_id"] is None

    bad = save(owner, app, "mail", {"mail_from_address": "not an address", "mail_from_name": "Fine"})
    assert bad.status == 422 and "must be a valid email address" in field_block(bad.body.decode(), "mail_from_address")
    assert settings_of(client, app)["mail_from_name"] == before["mail_from_name"]


def test_the_template_preview_renders_with_sample_values_and_a_saved_text_is_sent(stack, client, console, gateway,
                                                                                   smtp_sink):
    app, owner, _ = owner_of(stack, client, console, gateway)
    templates = f"/console/apps/{app['app_id']}/settings/templates"
    html_text = "<p>Hi <b>{{email}}</b>, your code is {{code}}</p><script>alert(1)</script>"
    preview = owner.post(templates, {"template_kind": "email_code", "template_part": "html", "template_language": "",
                                     "template_text": html_text, "intent": "preview"})
    page = preview.body.decode()
    assert preview.status == 200 and 'id="preview"' in page, preview
    shown = re.search(r'<pre id="preview-html">(.*?)</pre>', page, re.S).group(1)
    # Sample values filled in, and the whole HTML part shown as escaped source.
    assert "&lt;b&gt;ada@example.com&lt;/b&gt;, your code is 123456" in shown, shown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown and "<script>alert" not in page
    [[name]] = db_tools.rows(f"select name from apps where id={db_tools.literal(app['app_id'])}")
    subject = re.search(r'<pre id="preview-subject">(.*?)</pre>', page, re.S).group(1)
    assert subject == f"Your sign-in code for {name}", subject  # the built-in subject, the app named
    assert settings_of(client, app)["mail_templates"] == {}  # a preview saves nothing

    german = owner.post(templates, {"template_kind": "email_code", "template_part": "text", "template_language": "de",
                                    "template_text": "Dein Code: {{code}}", "intent": "preview"})
    assert "Dein Code: 123456" in re.search(r'<pre id="preview-text">(.*?)</pre>', german.body.decode(), re.S).group(1)

    # Refused targets: at the part (an SMS has only text), at the language.
    sms_subject = owner.post(templates, {"template_kind": "phone_code", "template_part": "subject",
                                         "template_language": "", "template_text": "x", "intent": "save"})
    assert sms_subject.status == 422
    assert re.search(r'id="template_part".*?</select><p class="field-error">wants KIND.PART', sms_subject.body.decode(), re.S)
    bad_language = owner.post(templates, {"template_kind": "email_code", "template_part": "subject",
                                          "template_language": "pt_BR", "template_text": "x", "intent": "save"})
    assert bad_language.status == 422
    assert re.search(r'id="template_language"[^>]*aria-invalid="true"', bad_language.body.decode())
    assert settings_of(client, app)["mail_templates"] == {}

    saved = owner.post(templates, {"template_kind": "email_code", "template_part": "subject", "template_language": "",
                                   "template_text": "Code {{code}} for {{app_name}}", "intent": "save"})
    assert saved.status == 200 and "Saved." in saved.body.decode(), saved
    assert settings_of(client, app)["mail_templates"] == {"email_code.subject": "Code {{code}} for {{app_name}}"}
    message, code = email_code(client, smtp_sink, app, unique_email("template"))
    assert message.subject == f"Code {code} for {name}", message
    listed = owner.get(f"/console/apps/{app['app_id']}/settings?template=email_code.subject")
    assert "Code {{code}} for {{app_name}}</textarea>" in listed.body.decode()

    # An empty text goes back to the built-in one.
    cleared = owner.post(templates, {"template_kind": "email_code", "template_part": "subject", "template_language": "",
                                     "template_text": "", "intent": "save"})
    assert cleared.status == 200 and settings_of(client, app)["mail_templates"] == {}


def _apns_p8():
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def test_secrets_are_write_only_need_a_recent_sign_in_and_stay_out_of_the_audit_log(stack, client, console, gateway):
    app, owner, email = owner_of(stack, client, console, gateway)
    token = "sms-token-" + "7" * 24
    p8 = _apns_p8()
    p8_body = p8.splitlines()[1]
    account = stack.fcm.service_account("proj-console")
    account_key = json.loads(account)["private_key"].splitlines()[1]

    page, _ = page_form(owner, app)
    for state in ("sms_auth_token_state", "apns_private_key_state", "fcm_service_account_state"):
        assert re.search(f'id="{state}">not set<', page), state

    refused = save(owner, app, "push", {"apns_private_key": "not a key"})
    assert refused.status == 422 and "must be an EC private key in PEM" in field_block(refused.body.decode(), "apns_private_key")
    assert "not a key" not in refused.body.decode()  # a refused secret is not echoed either

    sms = save(owner, app, "sms", {"sms_account_sid": "AC" + "1" * 32, "sms_auth_token": token})
    push = save(owner, app, "push", {"apns_private_key": p8, "fcm_service_account": account})
    for done in (sms, push):
        body = done.body.decode()
        assert done.status == 200 and "Saved." in body, done
        assert token not in body and p8_body not in body and account_key not in body
    page, _ = page_form(owner, app)
    for state in ("sms_auth_token_state", "apns_private_key_state", "fcm_service_account_state"):
        assert re.search(f'id="{state}">set<', page), state
    assert token not in page and p8_body not in page and account_key not in page
    assert "FCM project of the service account set: proj-console" in page
    settings = settings_of(client, app)
    assert settings["sms_auth_token_set"] and settings["apns_private_key_set"] and settings["fcm_service_account_set"]

    audit = settings_updates(client, app)
    assert [row["detail"]["settings"] for row in audit[:2]] == [["apns_private_key", "fcm_service_account"],
                                                                 ["sms_account_sid", "sms_auth_token"]]
    dumped = json.dumps(audit)
    assert token not in dumped and p8_body not in dumped and account_key not in dumped

    # A sign-in older than a few minutes is asked to sign in again, and the key is not replaced.
    db_tools.rows("update sessions set created_at = now() - interval '10 minutes' "
                  f"where app_id = {db_tools.literal(console['app_id'])} and ended_at is null and uid = "
                  f"(select uid from users where app_id = {db_tools.literal(console['app_id'])} "
                  f"and email = {db_tools.literal(email)})")
    stale = save(owner, app, "sms", {"sms_auth_token": "another-token"})
    assert stale.status == 403 and "needs a sign-in of the last few minutes" in stale.body.decode(), stale
    assert len(settings_updates(client, app)) == len(audit)
    # The sender is who the texts come from: a fresh sign-in too (docs/console.md, "Pages").
    assert save(owner, app, "sms", {"sms_from": "+15557654321"}).status == 403
    # A setting that hands nothing over needs no fresh sign-in.
    assert save(owner, app, "sms", {"sms_breaker_hourly": "150"}).status == 200


def test_a_viewer_sees_the_values_without_forms_and_a_forged_post_is_refused(stack, client, console, gateway):
    app, viewer, _ = owner_of(stack, client, console, gateway, role="viewer")
    assert admin(client, app, "PATCH", "/v1/admin/settings", {"access_token_ttl": 900, "mail_from_name": "Acme"}).status == 200
    before = settings_of(client, app)
    rows = len(settings_updates(client, app))
    page = viewer.get(f"/console/apps/{app['app_id']}/settings")
    text = page.body.decode()
    assert page.status == 200 and "you can see its settings but not change them" in text, page
    assert re.search(r'id="access_token_ttl"[^>]*value="900"[^>]*readonly', text)
    assert re.search(r'id="mail_from_name"[^>]*value="Acme"[^>]*readonly', text)
    assert "<form method=\"post\" action=\"/console/apps/" not in text  # no form of the app's at all
    assert 'type="file"' not in text and '<button id="save' not in text and "preview-template" not in text
    for section, field in (("tokens", {"access_token_ttl": "600"}), ("rate-limits", {"rate_limit_sign_in_per_ip": "1/1h"}),
                           ("templates", {"template_kind": "email_code", "template_part": "subject",
                                          "template_text": "Hacked", "intent": "save"}),
                           ("sms", {"sms_auth_token": "x"})):
        forged = viewer.post(f"/console/apps/{app['app_id']}/settings/{section}", field)
        assert forged.status == 403 and "only lets you look" in forged.body.decode(), (section, forged)
    forged = viewer.post(f"/console/apps/{app['app_id']}/settings", {"google_client_ids": "attacker.apps.googleusercontent.com"})
    assert forged.status == 403, forged
    assert settings_of(client, app) == before
    assert len(settings_updates(client, app)) == rows
