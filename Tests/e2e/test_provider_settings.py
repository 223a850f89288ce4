"""`identityctl apps settings`: per-app provider settings (Google client ids, Apple ids, team,
key id and .p8 key, Firebase project), printed without the key; and what an app without a
provider's settings answers (422 auth/provider-not-configured)."""

import base64
import json
import secrets

import pytest

from identity_client import assert_problem
from provider_flows import apple_body, firebase_body, google_body, google_signed_in
from provider_standin import (APPLE_BUNDLE_ID, APPLE_KEY_ID, APPLE_SERVICES_ID, APPLE_TEAM_ID,
                              FIREBASE_PROJECT_ID, GOOGLE_CLIENT_IDS)

SETTINGS_KEYS = ("app_id", "google_client_ids", "apple_bundle_ids", "apple_services_ids",
                 "apple_team_id", "apple_key_id", "apple_private_key_set", "firebase_project_id")
NOT_CONFIGURED = "auth/provider-not-configured"


def _p8_secret_part(pem):
    """The base64 body of the PEM: what must never be printed."""
    return "".join(line for line in pem.decode().splitlines() if not line.startswith("-----"))


def test_apps_settings_prints_the_settings_without_the_key(stack, providers, app):
    done = stack.ctl(*stack.settings_args(app["app_id"], **stack.provider_settings()))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    settings = json.loads(done.stdout)
    missing = [k for k in SETTINGS_KEYS if k not in settings]
    assert not missing, f"settings lack {missing}: {settings}"
    assert settings["app_id"] == app["app_id"]
    assert settings["google_client_ids"] == list(GOOGLE_CLIENT_IDS)
    assert settings["apple_bundle_ids"] == [APPLE_BUNDLE_ID]
    assert settings["apple_services_ids"] == [APPLE_SERVICES_ID]
    assert settings["apple_team_id"] == APPLE_TEAM_ID
    assert settings["apple_key_id"] == APPLE_KEY_ID
    assert settings["apple_private_key_set"] is True
    assert settings["firebase_project_id"] == FIREBASE_PROJECT_ID
    secret = _p8_secret_part(providers.apple_p8_pem)
    for output in (done.stdout, done.stderr):
        assert "PRIVATE KEY" not in output
        for i in range(0, len(secret) - 16, 16):  # not even a fragment of it
            assert secret[i:i + 16] not in output, "identityctl printed part of the .p8 key"


def test_each_flag_is_optional_and_the_others_are_kept(stack, app):
    first = stack.configure_app(app["app_id"], google_client_ids=["only.apps.example"])
    assert first["google_client_ids"] == ["only.apps.example"]
    assert first["apple_private_key_set"] is False
    assert not first["apple_bundle_ids"] and not first["firebase_project_id"], first
    second = stack.configure_app(app["app_id"], firebase_project_id="p-1")
    assert second["firebase_project_id"] == "p-1"
    assert second["google_client_ids"] == ["only.apps.example"], second


def test_settings_of_an_unknown_app_fail(stack):
    done = stack.ctl(*stack.settings_args("app_doesnotexist", firebase_project_id="p"))
    assert done.returncode != 0, done.stdout


@pytest.mark.parametrize("content", [None, b"not a key\n"], ids=["missing-file", "not-a-key"])
def test_a_bad_p8_file_is_refused(stack, app, tmp_path, content):
    path = tmp_path / "AuthKey.p8"
    if content is not None:
        path.write_bytes(content)
    done = stack.ctl(*stack.settings_args(app["app_id"], apple_private_key_file=str(path)))
    assert done.returncode != 0, done.stdout


# --- an app without a provider's settings ---------------------------------------------------------

def _apple_attempt(client, providers, app):
    # A nonce the service never issued: configuration is checked before anything else.
    body, _ = apple_body(client, providers, app, nonce=secrets.token_urlsafe(32))
    return client.apple_sign_in(app, **body)


def _google_attempt(client, providers, app):
    return client.google_sign_in(app, **google_body(providers)[0])


def _firebase_attempt(client, providers, app):
    return client.id_token_sign_in(app, **firebase_body(providers, phone_number="+15550000000")[0])


ATTEMPTS = {"apple": _apple_attempt, "google": _google_attempt, "firebase": _firebase_attempt}


@pytest.mark.parametrize("provider", list(ATTEMPTS))
def test_plain_app_answers_provider_not_configured(client, providers, app, provider):
    assert_problem(ATTEMPTS[provider](client, providers, app), 422, NOT_CONFIGURED)


def test_google_only_app_refuses_apple_and_firebase(client, providers, provider_app_factory):
    google_only = provider_app_factory(providers=("google",))
    assert_problem(_apple_attempt(client, providers, google_only), 422, NOT_CONFIGURED)
    assert_problem(_firebase_attempt(client, providers, google_only), 422, NOT_CONFIGURED)
    google_signed_in(client, providers, google_only, is_new_user=True)


def test_plain_app_cannot_link_a_provider(client, providers, app):
    token = client.new_user(app)["access_token"]
    resp = client.link_identity(app, token, "google", google_body(providers)[0])
    assert_problem(resp, 422, NOT_CONFIGURED)



def test_apps_settings_changes_the_access_token_lifetime(stack, client):
    # Set before the app's first sign-in: token workers cache an app's settings for a minute.
    app = stack.create_app()
    done = stack.ctl("apps", "settings", app["app_id"], "--access-token-ttl", "900")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["access_token_ttl"] == 900, done.stdout
    signed_up = client.new_user(app)
    assert signed_up["expires_in"] == 900, signed_up
    claims = json.loads(base64.urlsafe_b64decode(signed_up["access_token"].split(".")[1] + "=="))
    assert claims["exp"] - claims["iat"] == 900, claims


@pytest.mark.parametrize("ttl", ["299", "86401", "soon"])
def test_apps_settings_refuses_a_lifetime_out_of_range(stack, ttl):
    app = stack.create_app()
    done = stack.ctl("apps", "settings", app["app_id"], "--access-token-ttl", ttl)
    assert done.returncode != 0, done.stdout
    assert "access-token-ttl" in done.stderr, done.stderr
