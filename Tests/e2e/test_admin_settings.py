"""App settings through the admin API: GET and PATCH /v1/admin/settings set what
`identityctl apps settings` sets, through the same AppSettingsUpdate (same rules, same answer)."""

import pytest

from admin_tools import admin
from identity_client import assert_problem, unique_email


def test_get_settings_answers_what_identityctl_prints(stack, client, app):
    printed = stack.configure_app(app["app_id"])
    resp = admin(client, app, "GET", "/v1/admin/settings")
    assert resp.status == 200, resp
    assert resp.data == printed
    assert resp.data["app_id"] == app["app_id"] and resp.data["default_metadata"] == {}


def test_patch_settings_and_identityctl_sees_them(stack, client, app, providers):
    body = {"access_token_ttl": 900, "session_lifetime": 7200, "google_client_ids": ["web.apps", "ios.apps"],
            "apple_team_id": "TEAM123456", "deep_link_url": "https://example.com/auth", "mail_from_name": "Example",
            "mail_from_address": "no-reply@example.com", "mail_templates": {"email_code.subject": "Your code"},
            "rate_limits": {"sign_in_per_ip": "50/1m"}, "firebase_trust_email_verified": True,
            "apple_private_key": open(providers.apple_p8_path).read()}
    resp = admin(client, app, "PATCH", "/v1/admin/settings", body)
    assert resp.status == 200, resp
    data = resp.data
    assert data["access_token_ttl"] == 900 and data["session_lifetime"] == 7200
    assert data["google_client_ids"] == ["web.apps", "ios.apps"] and data["apple_team_id"] == "TEAM123456"
    assert data["apple_private_key_set"] is True and data["firebase_trust_email_verified"] is True
    assert data["rate_limits"]["sign_in_per_ip"] == "50/60s" and data["mail_from_name"] == "Example"
    assert stack.configure_app(app["app_id"]) == data
    # null clears a text setting; "default" restores a limit.
    cleared = admin(client, app, "PATCH", "/v1/admin/settings",
                    {"deep_link_url": None, "rate_limits": {"sign_in_per_ip": "default"}})
    assert cleared.status == 200, cleared
    assert cleared.data["deep_link_url"] is None and cleared.data["rate_limits"]["sign_in_per_ip"] == "100/60s"
    assert cleared.data["access_token_ttl"] == 900


@pytest.mark.parametrize("body,location,flag_args", [
    ({"access_token_ttl": 10}, "body.access_token_ttl", ["--access-token-ttl", "10"]),
    ({"session_lifetime": 60}, "body.session_lifetime", ["--session-lifetime", "60"]),
    ({"rate_limits": {"no_such_limit": "1/1m"}}, "body.rate_limits", ["--rate-limit", "no_such_limit=1/1m"]),
    ({"rate_limits": {"sign_in_per_ip": "lots"}}, "body.rate_limits", ["--rate-limit", "sign_in_per_ip=lots"]),
    ({"mail_templates": {"sms.subject": "x"}}, "body.mail_templates", ["--mail-template", "sms.subject=x"]),
    ({"mail_from_address": "nobody"}, "body.mail_from_address", ["--mail-from-address", "nobody"]),
    ({"deep_link_url": "not a url"}, "body.deep_link_url", ["--deep-link-url", "not a url"]),
], ids=["ttl", "lifetime", "unknown-limit", "bad-limit", "bad-template", "bad-sender", "bad-deep-link"])
def test_one_set_of_rules_for_the_api_and_identityctl(stack, client, app, body, location, flag_args):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", body)
    problem = assert_problem(resp, 422, "auth/validation-failed", locations=[location])
    message = next(e["message"] for e in problem["errors"] if e["location"] == location)
    done = stack.ctl("apps", "settings", app["app_id"], *flag_args)
    assert done.returncode != 0
    assert message in done.stderr, (message, done.stderr)


def test_the_api_cannot_turn_a_limit_off(client, app):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", {"rate_limits": {"sign_in_per_ip": "off"}})
    assert_problem(resp, 422, "auth/validation-failed", locations=["body.rate_limits"])


def test_bad_apple_key_and_shapes_are_refused(client, app):
    resp = admin(client, app, "PATCH", "/v1/admin/settings",
                 {"apple_private_key": "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----",
                  "access_token_ttl": "600", "google_client_ids": "a,b", "default_metadata": {"other": {}}})
    assert_problem(resp, 422, "auth/validation-failed",
                   locations=["body.apple_private_key", "body.access_token_ttl", "body.google_client_ids",
                              "body.default_metadata"])


def test_a_misspelt_setting_is_refused_by_name_and_nothing_changes(client, app):
    before = admin(client, app, "GET", "/v1/admin/settings").data
    resp = admin(client, app, "PATCH", "/v1/admin/settings",
                 {"access_token_ttl": 600, "googel_client_ids": ["a.apps.googleusercontent.com"], "app_id": "x"})
    problem = assert_problem(resp, 422, "auth/validation-failed", locations=["body.app_id", "body.googel_client_ids"])
    assert {e["message"] for e in problem["errors"]} == {"is not a setting"}, problem
    assert admin(client, app, "GET", "/v1/admin/settings").data == before


def test_default_metadata_for_new_users(client, app):
    resp = admin(client, app, "PATCH", "/v1/admin/settings",
                 {"default_metadata": {"app_metadata": {"plan": "free"}, "user_metadata": {"locale": "en"}}})
    assert resp.status == 200 and resp.data["default_metadata"]["app_metadata"] == {"plan": "free"}, resp
    signed_up = client.new_user(app)
    assert signed_up["user"]["app_metadata"] == {"plan": "free"}
    assert signed_up["user"]["user_metadata"] == {"locale": "en"}
    made = admin(client, app, "POST", "/v1/admin/users", {"email": unique_email(), "app_metadata": {"plan": "pro"}})
    assert made.status == 201 and made.data["app_metadata"] == {"plan": "pro"}, made
    assert made.data["user_metadata"] == {"locale": "en"}


def test_settings_are_per_app(client, app, other_app):
    assert admin(client, app, "PATCH", "/v1/admin/settings", {"mail_from_name": "Only A"}).status == 200
    assert admin(client, other_app, "GET", "/v1/admin/settings").data["mail_from_name"] is None


def test_client_edge_settings_through_the_api_as_identityctl_sets_them(stack, client, app):
    """Everything identityctl sets (profile, domains, prefix, origins, Apple nonce, passkey
    relying party, JWKS cache, audit threshold) is the API's too, and takes effect."""
    host = f"auth-{app['app_id'][-8:].lower()}.example.test"
    body = {"profile": "standard", "domains": [host], "path_prefix": "/api/v2",
            "allowed_origins": ["https://web.example.test"], "apple_nonce": "client",
            "webauthn_rp_id": "example.test", "webauthn_origins": ["https://web.example.test"],
            "webauthn_rp_name": "Example", "webauthn_require_uv": True, "jwks_cache_seconds": 120,
            "failed_sign_in_audit_threshold": 7}
    resp = admin(client, app, "PATCH", "/v1/admin/settings", body)
    assert resp.status == 200, resp
    for name, value in body.items():
        assert resp.data[name] == value, (name, resp.data[name])
    assert stack.configure_app(app["app_id"]) == resp.data
    # The API only requests a domain (test_domain_verification.py); the operator allows it.
    assert list(resp.data["domains_pending"]) == [host], resp.data["domains_pending"]
    assert stack.configure_app(app["app_id"], domains=[host])["domains_pending"] == {}
    # The gateway now finds the app by its host (no X-App-Key), as the profile's clients reach it.
    by_host = client.post("/v1/auth/sign-in", {"email": unique_email(), "password": "Wrong-password-1!"},
                          headers={"Host": host})
    assert_problem(by_host, 401, "auth/invalid-credential")
    # The passkey options carry the relying party set through the API.
    options = client.post("/v1/auth/passkey/options", {}, app_key=app["app_key"])
    assert options.status == 200, options
    assert options.data["options"]["rpId"] == "example.test", options.data
    # Empty values clear, as identityctl's empty flags do.
    cleared = admin(client, app, "PATCH", "/v1/admin/settings",
                    {"domains": [], "path_prefix": None, "allowed_origins": [], "profile": "session-object"})
    assert cleared.status == 200, cleared
    assert cleared.data["domains"] == [] and cleared.data["path_prefix"] is None
    assert cleared.data["profile"] == "session-object" and cleared.data["webauthn_rp_id"] == "example.test"


@pytest.mark.parametrize("body,location,flag_args", [
    ({"profile": "firebase"}, "body.profile", ["--profile", "firebase"]),
    ({"domains": ["not a host"]}, "body.domains", ["--domains", "not a host"]),
    ({"path_prefix": "/v1/x"}, "body.path_prefix", ["--path-prefix", "/v1/x"]),
    ({"allowed_origins": ["https://*.example.com"]}, "body.allowed_origins",
     ["--allowed-origins", "https://*.example.com"]),
    ({"apple_nonce": "maybe"}, "body.apple_nonce", ["--apple-nonce", "maybe"]),
    ({"webauthn_rp_id": "https://example.com"}, "body.webauthn_rp_id", ["--webauthn-rp-id", "https://example.com"]),
    ({"jwks_cache_seconds": 0}, "body.jwks_cache_seconds", ["--jwks-cache-seconds", "0"]),
    ({"failed_sign_in_audit_threshold": 0}, "body.failed_sign_in_audit_threshold",
     ["--failed-sign-in-audit-threshold", "0"]),
], ids=["profile", "domains", "prefix", "wildcard-origin", "apple-nonce", "rp-id", "jwks-cache", "audit-threshold"])
def test_one_set_of_rules_for_the_edge_settings(stack, client, app, body, location, flag_args):
    resp = admin(client, app, "PATCH", "/v1/admin/settings", body)
    problem = assert_problem(resp, 422, "auth/validation-failed", locations=[location])
    message = next(e["message"] for e in problem["errors"] if e["location"] == location)
    done = stack.ctl("apps", "settings", app["app_id"], *flag_args)
    assert done.returncode != 0
    assert message in done.stderr, (message, done.stderr)


def test_rules_that_need_what_is_stored(stack, client, app, other_app):
    host = f"taken-{other_app['app_id'][-8:].lower()}.example.test"
    stack.configure_app(other_app["app_id"], domains=[host])
    # Through the API a host another app holds is only requested, like any host: the answer
    # does not tell that it is taken, nor whose it is (test_domain_verification.py).
    requested = admin(client, app, "PATCH", "/v1/admin/settings", {"domains": [host]})
    assert requested.status == 200 and list(requested.data["domains_pending"]) == [host], requested
    answer = requested.body.decode()
    assert other_app["app_id"] not in answer and other_app["name"] not in answer, answer
    # The operator, who may know, is told the host is another app's.
    done = stack.ctl("apps", "settings", app["app_id"], "--domains", host)
    assert done.returncode != 0 and "already another app's" in done.stderr, done.stderr
    # Passkey origins must sit under the relying party, stored or given.
    assert admin(client, app, "PATCH", "/v1/admin/settings", {"webauthn_rp_id": "example.test"}).status == 200
    outside = admin(client, app, "PATCH", "/v1/admin/settings", {"webauthn_origins": ["https://evil.test"]})
    assert_problem(outside, 422, "auth/validation-failed", locations=["body.webauthn_origins"])
    assert admin(client, app, "GET", "/v1/admin/settings").data["webauthn_origins"] == []
