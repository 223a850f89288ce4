"""Which account a provider sign-in lands in: by the provider's subject first, then by a
**verified** email of this app (linking), never through an unverified one (409
auth/account-exists-with-different-credential). Signed-in linking and unlinking
(/v1/me/identities/{provider}), and tenant isolation of provider identities."""

import uuid

import pytest

import db_tools
from identity_client import PASSWORD, assert_no_content, assert_problem, assert_user_shape, unique_email
from provider_flows import (amr, apple_body, apple_signed_in, firebase_body, google_body,
                            google_signed_in)


def _providers_of(client, app, token):
    me = client.me(app, token)
    assert me.status == 200, me
    return set(me.data["providers"])


def _verify_email(uid):
    updated = db_tools.value(
        "with v as (update users set email_verified = true "
        f"where uid = {db_tools.literal(uid)} returning 1) select count(*) from v")
    assert updated == "1", uid


# --- linking by verified email -------------------------------------------------------------------

def test_google_with_the_verified_email_of_an_apple_user_links_to_it(client, providers,
                                                                     provider_app):
    email = unique_email("linked")
    apple, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, email=email,
                               email_verified="true")
    # example.com is a Google Workspace domain here (`hd`): Google is an authority for it.
    google, gclaims = google_signed_in(client, providers, provider_app, is_new_user=False,
                                       email=email, email_verified=True, hd="example.com")
    uid = apple["user"]["uid"]
    assert google["user"]["uid"] == uid
    assert {"apple", "google"} <= set(google["user"]["providers"]), google["user"]
    assert amr(google) == ["google"]
    assert {"apple", "google"} <= _providers_of(client, provider_app, google["access_token"])
    # From now on the Google subject itself finds the account.
    again, _ = google_signed_in(client, providers, provider_app, is_new_user=False,
                                sub=gclaims["sub"], email=email)
    assert again["user"]["uid"] == uid


def test_email_match_ignores_case(client, providers, provider_app):
    local = unique_email("case").split("@")[0]
    apple, _ = apple_signed_in(client, providers, provider_app, is_new_user=True,
                               email=f"{local}@example.com")
    google, _ = google_signed_in(client, providers, provider_app, is_new_user=False,
                                 email=f"{local.upper()}@Example.com", hd="example.com")
    assert google["user"]["uid"] == apple["user"]["uid"]


def test_unverified_password_account_is_409_until_its_email_is_verified(client, providers,
                                                                        provider_app):
    email = unique_email("pwd")
    signed_up = client.new_user(provider_app, email=email)
    assert signed_up["user"]["email_verified"] is False
    body, _ = google_body(providers, email=email, email_verified=True, hd="example.com")
    assert_problem(client.google_sign_in(provider_app, **body), 409,
                   "auth/account-exists-with-different-credential")
    # The refusal linked nothing.
    assert _providers_of(client, provider_app, signed_up["access_token"]) == {"password"}

    _verify_email(signed_up["user"]["uid"])
    resp = client.google_sign_in(provider_app, **body)
    assert resp.status == 200, resp
    assert resp.data["is_new_user"] is False
    assert resp.data["user"]["uid"] == signed_up["user"]["uid"]
    assert {"password", "google"} <= set(resp.data["user"]["providers"]), resp.data["user"]


def test_google_is_no_authority_for_an_address_outside_gmail_and_its_hosted_domain(
        client, providers, provider_app):
    """Google reports email_verified for any address once it saw a confirmation mail, which a
    stranger can arrange before the owner ever signs up: only gmail.com / googlemail.com or the
    Workspace domain (`hd`) may link by email."""
    email = unique_email("outside")
    apple, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, email=email,
                               email_verified="true")
    for claims in ({}, {"hd": "other.example"}):
        body, _ = google_body(providers, email=email, email_verified=True, **claims)
        assert_problem(client.google_sign_in(provider_app, **body), 409,
                       "auth/account-exists-with-different-credential")
    assert _providers_of(client, provider_app, apple["access_token"]) == {"apple"}


def test_google_links_a_gmail_address(client, providers, provider_app):
    email = f"{uuid.uuid4().hex[:12]}@gmail.com"
    apple, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, email=email,
                               email_verified="true")
    google, _ = google_signed_in(client, providers, provider_app, is_new_user=False, email=email,
                                 email_verified=True)
    assert google["user"]["uid"] == apple["user"]["uid"]


def test_firebase_links_by_email_only_when_the_app_trusts_it(client, providers, stack,
                                                            provider_app):
    email = unique_email("fb")
    apple, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, email=email,
                               email_verified="true")
    body, _ = firebase_body(providers, email=email, email_verified=True)
    assert_problem(client.id_token_sign_in(provider_app, **body), 409,
                   "auth/account-exists-with-different-credential")
    shown = stack.configure_app(provider_app["app_id"], firebase_trust_email_verified="true")
    assert shown["firebase_trust_email_verified"] is True
    resp = client.id_token_sign_in(provider_app, **body)
    assert resp.status == 200, resp
    assert resp.data["user"]["uid"] == apple["user"]["uid"]


def test_apple_sign_in_with_the_email_of_an_unverified_account_is_409(client, providers,
                                                                      provider_app):
    email = unique_email("pwd")
    client.new_user(provider_app, email=email)
    body, _ = apple_body(client, providers, provider_app, email=email)
    assert_problem(client.apple_sign_in(provider_app, **body), 409,
                   "auth/account-exists-with-different-credential")


def test_apple_and_google_with_different_emails_stay_separate(client, providers, provider_app):
    apple, _ = apple_signed_in(client, providers, provider_app, is_new_user=True)
    google, _ = google_signed_in(client, providers, provider_app, is_new_user=True)
    assert apple["user"]["uid"] != google["user"]["uid"]
    assert set(apple["user"]["providers"]) == {"apple"}
    assert set(google["user"]["providers"]) == {"google"}


# --- signed-in linking ---------------------------------------------------------------------------

def test_link_google_while_signed_in(client, providers, provider_app):
    signed_up = client.new_user(provider_app)
    body, claims = google_body(providers)
    resp = client.link_identity(provider_app, signed_up["access_token"], "google", body)
    assert resp.status == 200, resp
    user = resp.data
    assert_user_shape(user)
    assert user["uid"] == signed_up["user"]["uid"]
    assert {"password", "google"} <= set(user["providers"]), user
    assert {"password", "google"} <= _providers_of(client, provider_app, signed_up["access_token"])
    later, _ = google_signed_in(client, providers, provider_app, is_new_user=False,
                                sub=claims["sub"], email=claims["email"])
    assert later["user"]["uid"] == signed_up["user"]["uid"]


def test_link_apple_while_signed_in(client, providers, provider_app):
    signed_up = client.new_user(provider_app)
    body, claims = apple_body(client, providers, provider_app)
    resp = client.link_identity(provider_app, signed_up["access_token"], "apple", body)
    assert resp.status == 200, resp
    assert resp.data["uid"] == signed_up["user"]["uid"]
    assert {"password", "apple"} <= set(resp.data["providers"]), resp.data
    later, _ = apple_signed_in(client, providers, provider_app, is_new_user=False,
                               sub=claims["sub"], email=claims["email"])
    assert later["user"]["uid"] == signed_up["user"]["uid"]


def _signed_in_long_ago(session_id, minutes=6):
    db_tools.rows(f"update sessions set created_at = now() - interval '{minutes} minutes' "
                  f"where id = {db_tools.literal(session_id)}")


def test_linking_from_an_old_session_needs_the_password(client, providers, provider_app):
    """A stolen access token must not plant a lasting way in: a session signed in more than 5
    minutes ago links only with the account's password as fresh proof."""
    signed_up = client.new_user(provider_app)
    token = signed_up["access_token"]
    _signed_in_long_ago(signed_up["session_id"])
    nonce = client.new_nonce(provider_app)
    body, claims = apple_body(client, providers, provider_app, nonce=nonce)
    assert_problem(client.link_identity(provider_app, token, "apple", body), 403, "auth/reauth-required")
    assert_problem(client.link_identity(provider_app, token, "apple", dict(body, password="wrong-password")),
                   403, "auth/reauth-required")
    assert _providers_of(client, provider_app, token) == {"password"}
    # The refusals spent nothing: the same token and nonce link with the password.
    resp = client.link_identity(provider_app, token, "apple", dict(body, password=PASSWORD))
    assert resp.status == 200, resp
    assert {"password", "apple"} <= set(resp.data["providers"])


def test_linking_from_an_old_session_without_a_password_means_signing_in_again(client, providers,
                                                                              provider_app):
    apple, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    _signed_in_long_ago(apple["session_id"])
    body, _ = google_body(providers)
    assert_problem(client.link_identity(provider_app, apple["access_token"], "google", body), 403,
                   "auth/reauth-required")
    # Signing in again makes a fresh session, which may link.
    again, _ = apple_signed_in(client, providers, provider_app, is_new_user=False, sub=claims["sub"],
                               email=claims["email"])
    resp = client.link_identity(provider_app, again["access_token"], "google", body)
    assert resp.status == 200, resp
    assert {"apple", "google"} <= set(resp.data["providers"])


def test_link_apple_spends_the_nonce(client, providers, provider_app):
    signed_up = client.new_user(provider_app)
    nonce = client.new_nonce(provider_app)
    body, claims = apple_body(client, providers, provider_app, nonce=nonce)
    assert client.link_identity(provider_app, signed_up["access_token"], "apple", body).status == 200
    again, _ = apple_body(client, providers, provider_app, nonce=nonce, sub=claims["sub"],
                          email=claims["email"])
    assert_problem(client.apple_sign_in(provider_app, **again), 401, "auth/invalid-apple-token")


def test_link_with_an_invalid_token_is_401(client, providers, provider_app):
    signed_up = client.new_user(provider_app)
    body, _ = google_body(providers, aud="android.apps.example")
    assert_problem(client.link_identity(provider_app, signed_up["access_token"], "google", body),
                   401, "auth/invalid-google-token")
    assert _providers_of(client, provider_app, signed_up["access_token"]) == {"password"}


@pytest.mark.parametrize("provider", ["google", "apple"])
def test_linking_an_identity_of_another_account_is_409(client, providers, provider_app,
                                                       provider):
    if provider == "google":
        owner, claims = google_signed_in(client, providers, provider_app, is_new_user=True)
        body, _ = google_body(providers, sub=claims["sub"], email=claims["email"])
    else:
        owner, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
        body, _ = apple_body(client, providers, provider_app, sub=claims["sub"],
                             email=claims["email"])
    other = client.new_user(provider_app)
    assert_problem(client.link_identity(provider_app, other["access_token"], provider, body), 409,
                   "auth/account-exists")
    assert _providers_of(client, provider_app, other["access_token"]) == {"password"}
    assert provider in _providers_of(client, provider_app, owner["access_token"])


def test_link_needs_a_signed_in_user(client, providers, provider_app):
    body, _ = google_body(providers)
    assert_problem(client.post("/v1/me/identities/google", body, app_key=provider_app["app_key"]),
                   401, "auth/invalid-token")


# --- unlinking -----------------------------------------------------------------------------------

def test_password_user_can_unlink_google(client, providers, provider_app):
    signed_up = client.new_user(provider_app)
    token = signed_up["access_token"]
    body, claims = google_body(providers)
    assert client.link_identity(provider_app, token, "google", body).status == 200
    assert_no_content(client.unlink_identity(provider_app, token, "google"))
    assert _providers_of(client, provider_app, token) == {"password"}
    # The Google identity is free again: signing in with it makes a new account.
    later, _ = google_signed_in(client, providers, provider_app, is_new_user=True,
                                sub=claims["sub"], email=claims["email"])
    assert later["user"]["uid"] != signed_up["user"]["uid"]


def test_unlinking_a_provider_not_linked_is_404(client, providers, provider_app):
    token = client.new_user(provider_app)["access_token"]
    for provider in ("google", "apple", "firebase"):
        assert_problem(client.unlink_identity(provider_app, token, provider), 404,
                       "auth/not-found")


def test_apple_only_user_cannot_unlink_apple(client, providers, provider_app):
    # Apple does not vouch for the address: a verified email would be a way in of its own
    # (email codes; test_ownership_rule.py), so here Apple is the only one.
    data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True, email_verified="false")
    assert_problem(client.unlink_identity(provider_app, data["access_token"], "apple"), 409,
                   "auth/last-sign-in-method")
    assert _providers_of(client, provider_app, data["access_token"]) == {"apple"}
    again, _ = apple_signed_in(client, providers, provider_app, is_new_user=False,
                               sub=claims["sub"], email=claims["email"], email_verified="false")
    assert again["user"]["uid"] == data["user"]["uid"]


def test_apple_user_with_google_linked_can_unlink_either_but_not_both(client, providers,
                                                                     provider_app):
    # Without a verified email (which would be a way in too), the two providers are all.
    data, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, email_verified="false")
    token = data["access_token"]
    body, _ = google_body(providers)
    assert client.link_identity(provider_app, token, "google", body).status == 200
    assert_no_content(client.unlink_identity(provider_app, token, "apple"))
    assert _providers_of(client, provider_app, token) == {"google"}
    assert_problem(client.unlink_identity(provider_app, token, "google"), 409,
                   "auth/last-sign-in-method")


def test_unlink_needs_a_signed_in_user(client, provider_app):
    assert_problem(client.delete("/v1/me/identities/google", app_key=provider_app["app_key"]),
                   401, "auth/invalid-token")


# --- tenancy -------------------------------------------------------------------------------------

def test_same_apple_sub_in_two_apps_is_two_users(client, providers, provider_app,
                                                 other_provider_app):
    a, claims = apple_signed_in(client, providers, provider_app, is_new_user=True)
    b, _ = apple_signed_in(client, providers, other_provider_app, is_new_user=True,
                           sub=claims["sub"], email=claims["email"])
    assert a["user"]["uid"] != b["user"]["uid"]
    assert_problem(client.me(provider_app, b["access_token"]), 401, "auth/invalid-token")


def test_same_google_sub_in_two_apps_is_two_users(client, providers, provider_app,
                                                  other_provider_app):
    a, claims = google_signed_in(client, providers, provider_app, is_new_user=True)
    b, _ = google_signed_in(client, providers, other_provider_app, is_new_user=True,
                            sub=claims["sub"], email=claims["email"])
    assert a["user"]["uid"] != b["user"]["uid"]


def test_verified_email_of_another_app_does_not_link(client, providers, provider_app,
                                                     other_provider_app):
    email = unique_email("tenant")
    a, _ = apple_signed_in(client, providers, provider_app, is_new_user=True, email=email)
    b, _ = google_signed_in(client, providers, other_provider_app, is_new_user=True, email=email)
    assert a["user"]["uid"] != b["user"]["uid"]
