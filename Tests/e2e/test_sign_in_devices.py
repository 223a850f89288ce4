"""Lockout without locking out the owner (issue: account takeover; OWASP's device cookies): ten
wrong passwords from anywhere spend an identifier's sign-in budget, but a device that signed in
before keeps a budget of its own. A successful password sign-in answers with `device_token`; sent
back as `X-Device-Token`, it is counted against `sign_in_per_device` once
`sign_in_per_identifier` is spent. Forged, foreign, replaced or expired tokens unlock nothing, and
wrong guesses through a real one spend that device's budget only.

The attacker comes from a fresh address each time (the trusted proxy's X-Forwarded-For), so only
the per-identifier limit stands in the way."""

import re
import secrets

import db_tools
from identity_client import PASSWORD, assert_problem, unique_email

WRONG = "not-the-password-1"


def ip():
    return f"198.18.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"


def sign_in(client, app, email, password=PASSWORD, device=None):
    headers = {"X-Forwarded-For": ip()}
    if device is not None:
        headers["X-Device-Token"] = device
    return client.sign_in(app, email=email, password=password, headers=headers)


def device_token(resp):
    assert resp.status == 200, resp
    token = resp.data["device_token"]
    assert re.fullmatch(r"dt_[A-Za-z0-9_-]{43}", token), token
    return token


def owner(client, app):
    """A user and the device token of their first sign-in."""
    email = unique_email("owner")
    client.new_user(app, email=email)
    return email, device_token(sign_in(client, app, email))


def spend_identifier(client, app, email):
    """Wrong passwords until the identifier's budget (10, less what the owner's sign-ins took)
    is spent; then the right one is refused too. Returns the seconds until it reopens."""
    for _ in range(10):
        resp = sign_in(client, app, email, WRONG)
        if resp.status == 429:
            break
        assert_problem(resp, 401, "auth/invalid-credential")
    return refused_by(sign_in(client, app, email), "sign_in_per_identifier")


def refused_by(resp, name):
    """429 naming `name` as the spent limit; returns its seconds to reset."""
    assert_problem(resp, 429, "auth/rate-limited")
    found = re.search(rf'"{name}";r=0;t=(\d+)', resp.header("RateLimit") or "")
    assert found, resp.headers
    return int(found.group(1))


def test_the_owners_device_signs_in_after_an_attacker_spent_the_identifier(client, app):
    email, token = owner(client, app)
    spend_identifier(client, app, email)
    # Without the token the right password is refused like the guesses...
    refused_by(sign_in(client, app, email), "sign_in_per_identifier")
    # ... with it, the owner is in, counted against this device's budget.
    resp = sign_in(client, app, email, device=token)
    assert resp.status == 200, resp
    assert '"sign_in_per_device";q=10;w=900' in resp.header("RateLimit-Policy"), resp.headers
    assert "sign_in_per_identifier" not in resp.header("RateLimit-Policy"), resp.headers
    assert client.me(app, resp.data["access_token"]).status == 200
    # The answer replaces the token: the old one is spent, the new one works.
    renewed = device_token(resp)
    assert renewed != token
    refused_by(sign_in(client, app, email, device=token), "sign_in_per_identifier")
    assert sign_in(client, app, email, device=renewed).status == 200


def test_wrong_passwords_through_a_device_token_spend_that_devices_budget_only(client, configured_app_factory):
    app = configured_app_factory(rate_limits={"sign_in_per_device": "3/1h"})
    email, stolen = owner(client, app)
    other_device = device_token(sign_in(client, app, email))
    before = spend_identifier(client, app, email)
    for _ in range(3):
        assert_problem(sign_in(client, app, email, WRONG, device=stolen), 401, "auth/invalid-credential")
    refused_by(sign_in(client, app, email, WRONG, device=stolen), "sign_in_per_device")
    refused_by(sign_in(client, app, email, device=stolen), "sign_in_per_device")
    # The guesses moved neither the identifier's reopening nor the owner's other device.
    after = refused_by(sign_in(client, app, email), "sign_in_per_identifier")
    assert after <= before + 1, (before, after)
    assert sign_in(client, app, email, device=other_device).status == 200


def test_forged_foreign_and_expired_tokens_unlock_nothing(client, app, other_app):
    email, token = owner(client, app)
    _, someone_elses = owner(client, app)
    client.new_user(other_app, email=email)
    other_apps = device_token(sign_in(client, other_app, email))
    expired = device_token(sign_in(client, app, email))
    db_tools.rows(f"update sign_in_devices set expires_at = now() - interval '1 second' "
                  f"where token_hash = {db_tools.token_hash(expired)}")
    spend_identifier(client, app, email)
    for presented in ("dt_" + secrets.token_urlsafe(32), someone_elses, other_apps, expired, "garbage",
                      token + "x"):
        refused_by(sign_in(client, app, email, device=presented), "sign_in_per_identifier")
    assert sign_in(client, app, email, device=token).status == 200


def test_only_the_tokens_hash_is_stored(client, app):
    email, token = owner(client, app)
    assert db_tools.tables_containing(token) == []
    assert db_tools.value("select count(*) from sign_in_devices "
                          f"where token_hash = {db_tools.token_hash(token)}") == "1"


def test_sign_up_and_refresh_answers_carry_no_device_token(client, app):
    signed_up = client.new_user(app)
    assert "device_token" not in signed_up
    refreshed = client.refresh(app, signed_up["refresh_token"])
    assert refreshed.status == 200 and "device_token" not in refreshed.data, refreshed


def test_apps_with_session_tokens_never_show_it_in_a_body(client, configured_app_factory):
    """Their shipped clients' answers are rebuilt field by field and they never send the header:
    the bearer transport's answer has no device token, in its body or a cookie. (The cookie
    transport keeps it in a cookie: test_profile_session_object.py.)"""
    host = f"devices-{secrets.token_hex(4)}.example.test"
    app = configured_app_factory(profile="session-object", domains=[host])
    email = unique_email("so")
    assert client.post("/v1/auth/sign-up", {"email": email, "password": PASSWORD}, headers={"Host": host}).status == 201
    resp = client.post("/v1/auth/login", {"email": email, "password": PASSWORD}, headers={"Host": host})
    assert resp.status == 200 and set(resp.json) == {"token", "session", "user"}, resp
    assert not [v for k, v in resp.headers.items() if k.lower() == "set-cookie"], resp.headers
