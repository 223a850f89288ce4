"""Messages in the user's language: the user's stored `locale` (set at sign-up or PATCH /v1/me,
BCP 47), else the request's Accept-Language, else the app's `default_locale`, else English;
`pt-BR` falls back to `pt`. Built-in texts in en, de, fr, es, pt-BR and ja; an app overrides any
kind per language (`mail_templates` KIND.PART.LANGUAGE). Mail is parsed with Python's `email`
package (the sink's parser), so an RFC 2047 subject that does not decode fails here; SMS are
counted in GSM-7 or UCS-2 segments."""

import re
import uuid

import pytest

from identity_client import PASSWORD, assert_problem, unique_email
from mail_flows import email_code
from ops_metrics import scrape, value
from smtp_sink import code_from
from test_phone import code_of, french_mobile, send, sent, wait_sms_file

SUBJECTS = {  # email_code's built-in subject, per language ({} = the app's name)
    "en": "Your sign-in code for {}",
    "de": "Ihr Anmeldecode für {}",
    "fr": "Votre code de connexion pour {}",
    "es": "Tu código de inicio de sesión para {}",
    "pt-BR": "Seu código de login do {}",
    "ja": "{}のログインコード",
}


def mailed(client, smtp_sink, app, email, headers=None):
    """POST /v1/auth/email-code/send with these headers, then its mail."""
    mark = smtp_sink.mark()
    resp = client.email_code_send(app, email, headers=headers)
    assert resp.status == 202, resp
    return smtp_sink.wait_for(email, after=mark)


def language_of(message):
    return str(message.parsed.get("Content-Language", "") or "")


def raw_header_lines(message, name):
    """The header as it went over the wire: its first line and continuation lines."""
    head = message.raw.split(b"\r\n\r\n", 1)[0].decode("ascii")
    lines = head.split("\r\n")
    start = next(i for i, line in enumerate(lines) if line.lower().startswith(name.lower() + ":"))
    out = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith((" ", "\t")):
            break
        out.append(line)
    return out


# --- the user's locale ----------------------------------------------------------------------


def test_sign_up_stores_the_locale_in_canonical_case_and_refuses_a_malformed_one(client, app):
    resp = client.sign_up(app, locale="pt-br")
    assert resp.status == 201, resp
    assert resp.data["user"]["locale"] == "pt-BR", resp.data["user"]
    me = client.me(app, resp.data["access_token"])
    assert me.status == 200 and me.data["locale"] == "pt-BR", me
    without = client.new_user(app)
    assert without["user"]["locale"] is None, without["user"]
    for bad in ("pt_BR", "english", "e", "de-" + "x" * 40):
        assert_problem(client.sign_up(app, locale=bad), 422, "auth/validation-failed", locations=("body.locale",))


def test_profile_sets_changes_and_clears_the_locale(client, app):
    token = client.new_user(app)["access_token"]
    resp = client.patch_me(app, token, {"locale": "zh-hant-tw"})
    assert resp.status == 200 and resp.data["locale"] == "zh-Hant-TW", resp
    resp = client.patch_me(app, token, {"locale": None})
    assert resp.status == 200 and resp.data["locale"] is None, resp
    assert_problem(client.patch_me(app, token, {"locale": "de_DE"}), 422, "auth/validation-failed",
                   locations=("body.locale",))
    assert client.me(app, token).data["locale"] is None


def test_a_stored_locale_wins_over_the_request_language(client, smtp_sink, app):
    email = unique_email("de")
    assert client.sign_up(app, email=email, locale="de").status == 201
    mark = smtp_sink.mark()
    resp = client.password_forgot(app, email, headers={"Accept-Language": "fr-FR, fr;q=0.9"})
    assert resp.status == 202, resp
    message = smtp_sink.wait_for(email, after=mark)
    assert message.subject == f"Passwort für {app['name']} zurücksetzen", message.summary()
    assert language_of(message) == "de", message.raw[:600]
    assert "Passwort" in message.text and code_from(message)


# --- the request's Accept-Language, the fallbacks and the app's default -----------------------


@pytest.mark.parametrize("header,language", [
    ("fr-CA, en;q=0.5", "fr"),          # no fr-CA texts: fr
    ("it, es;q=0.8, de;q=0.9", "de"),   # no Italian; the best-ranked with texts
    ("pt-BR", "pt-BR"),
    ("ja-JP;q=1, *;q=0.1", "ja"),
    ("en-GB", "en"),
])
def test_the_request_language_decides_for_a_user_without_a_locale(client, smtp_sink, app, header,
                                                                   language):
    message = mailed(client, smtp_sink, app, unique_email("al"), {"Accept-Language": header})
    assert message.subject == SUBJECTS[language].format(app["name"]), message.summary()
    assert language_of(message) == language, message.raw[:600]
    assert code_from(message)


def test_pt_falls_back_from_pt_pt_and_unknown_languages_to_the_app_default(client, smtp_sink,
                                                                            configured_app_factory):
    app = configured_app_factory(default_locale="es")
    assert app["settings"]["default_locale"] == "es", app["settings"]
    portuguese = mailed(client, smtp_sink, app, unique_email("pt"), {"Accept-Language": "pt-PT"})
    assert portuguese.subject == SUBJECTS["pt-BR"].format(app["name"]), portuguese.summary()
    assert language_of(portuguese) == "pt"
    for headers in ({"Accept-Language": "it-IT, nl;q=0.5"}, None):
        message = mailed(client, smtp_sink, app, unique_email("es"), headers)
        assert message.subject == SUBJECTS["es"].format(app["name"]), message.summary()
        assert language_of(message) == "es"


def test_a_japanese_subject_is_encoded_per_rfc_2047_and_decodes(client, smtp_sink, app_factory):
    # A long name, so the subject needs several encoded words.
    app = app_factory(name="Rezepte und Gerichte der Welt " + uuid.uuid4().hex[:8])
    message = mailed(client, smtp_sink, app, unique_email("ja"), {"Accept-Language": "ja"})
    assert message.subject == SUBJECTS["ja"].format(app["name"]), message.summary()
    lines = raw_header_lines(message, "Subject")
    words = re.findall(r"=\?UTF-8\?B\?[A-Za-z0-9+/=]*\?=", " ".join(lines))
    assert len(words) >= 2, lines
    assert all(len(word) <= 75 for word in words), words
    assert all(len(line) <= 78 for line in lines), lines
    assert "ログインコード" in message.text and "ログインコード" in message.html, message.text
    assert code_from(message)


# --- an app's own texts per language ----------------------------------------------------------


def test_an_app_overrides_a_kind_per_language(client, smtp_sink, configured_app_factory):
    app = configured_app_factory(mail_templates={
        "email_code.subject.de": "Dein Code: {{code}}",
        "email_code.subject": "Code: {{code}}",
        "email_code.text.it": "Il tuo codice: {{code}}",
    })
    german = mailed(client, smtp_sink, app, unique_email("o"), {"Accept-Language": "de-AT"})
    assert german.subject == f"Dein Code: {code_from(german)}", german.summary()
    assert "Ihr Anmeldecode" in german.text, german.text  # the body stays the built-in German
    english = mailed(client, smtp_sink, app, unique_email("o"), {"Accept-Language": "en-US"})
    assert english.subject == f"Code: {code_from(english)}", english.summary()
    french = mailed(client, smtp_sink, app, unique_email("o"), {"Accept-Language": "fr"})
    assert french.subject == SUBJECTS["fr"].format(app["name"]), french.summary()
    # A language only the app has texts for: its own text, the rest from its default language.
    italian = mailed(client, smtp_sink, app, unique_email("o"), {"Accept-Language": "it"})
    assert language_of(italian) == "it", italian.raw[:600]
    assert italian.text.startswith("Il tuo codice: "), italian.text
    assert italian.subject == f"Code: {code_from(italian)}", italian.summary()


def test_malformed_languages_and_parts_are_refused(stack, app):
    for args in (["--default-locale", "en_US"],
                 ["--mail-template", "email_code.subject.english!=x"],
                 ["--mail-template", "phone_code.subject=x"],
                 ["--mail-template", "email_code.subject.de.extra=x"]):
        done = stack.ctl("apps", "settings", app["app_id"], *args)
        assert done.returncode != 0, (args, done.stdout)
    done = stack.ctl("apps", "settings", app["app_id"], "--mail-template", "phone_code.text.DE=x {{code}}")
    assert done.returncode == 0, done.stderr


# --- security alerts and SMS ------------------------------------------------------------------


def test_an_alert_is_in_the_owner_locale_not_the_request_language(client, smtp_sink, app):
    email = unique_email("alert")
    token = client.sign_up(app, email=email, locale="fr").data["access_token"]
    mark = smtp_sink.mark()
    resp = client.change_password(app, token, PASSWORD, "another-ladder-7731",
                                  headers={"Accept-Language": "de"})
    assert resp.status in (200, 204), resp
    alert = smtp_sink.wait_for(email, lambda m: m.kind == "security_alert_password_changed", after=mark)
    assert alert.subject == f"Votre mot de passe {app['name']} a été modifié", alert.summary()
    assert language_of(alert) == "fr"


def sms_segments(stack, encoding):
    return value(scrape(stack.metrics_url(stack.mailer_worker)), "identity_sms_segments_total",
                 encoding=encoding)


def test_sms_texts_follow_the_language_and_their_segments_are_counted(stack, client,
                                                                      configured_app_factory):
    app = configured_app_factory(sms_allowed_calling_codes="33",
                                 rate_limits={"sms_resend_per_number": "off"})
    before = {encoding: sms_segments(stack, encoding) for encoding in ("gsm7", "ucs2")}
    phone = french_mobile()
    session = sent(send(client, app, phone, headers={"Accept-Language": "ja"}))
    text = wait_sms_file(stack, phone)
    assert "ログインコード" in text, text
    code = code_of(text)
    german_phone = french_mobile()
    sent(send(client, app, german_phone, headers={"Accept-Language": "de"}))
    assert "Anmeldecode" in wait_sms_file(stack, german_phone)
    client.wait_for(lambda: sms_segments(stack, "ucs2") >= before["ucs2"] + 1
                    and sms_segments(stack, "gsm7") >= before["gsm7"] + 1, timeout=10)
    # The account made by the Japanese request has no stored locale: it was never given one.
    resp = client.post("/v1/auth/phone/verify", {"session_id": session, "code": code}, app_key=app["app_key"])
    assert resp.status == 200 and resp.data["user"]["locale"] is None, resp


def test_graphql_register_passes_the_locale(client, app):
    query = "mutation($input: UserRegistrationInput!) { register(input: $input) { token } }"
    resp = client.post("/graphql", {"query": query, "variables": {"input": {
        "username": "u" + uuid.uuid4().hex[:10], "email": unique_email("gql"), "password": PASSWORD,
        "locale": "es-mx"}}}, app_key=app["app_key"])
    assert resp.status == 200 and not resp.json.get("errors"), resp
    # The standard profile's token is an access token.
    me = client.me(app, resp.json["data"]["register"]["token"])
    assert me.status == 200 and me.data["locale"] == "es-MX", me
