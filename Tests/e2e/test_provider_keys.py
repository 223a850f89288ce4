"""The providers' signing keys as the service sees them: each JWKS fetched once and cached, a
new `kid` (key rotation) fetched on demand, an unknown `kid` refetching at most once per
IDENTITY_JWKS_REFETCH_INTERVAL_SECONDS (1 s here, 60 in production)."""

import time

import pytest

from identity_client import assert_problem
from provider_flows import apple_signed_in, firebase_signed_in, google_body, google_signed_in

SIGN_IN = {"apple": apple_signed_in, "google": google_signed_in, "firebase": firebase_signed_in}
PROVIDERS = list(SIGN_IN)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_known_kid_is_served_from_the_cache(client, providers, provider_app, provider):
    SIGN_IN[provider](client, providers, provider_app)  # fetched now, if never before
    before = providers.fetch_count(provider)
    for _ in range(3):
        SIGN_IN[provider](client, providers, provider_app)
    assert providers.fetch_count(provider) == before, \
        f"{provider}'s keys were fetched again although the kid is known (max-age 3600)"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rotated_key_is_picked_up_and_the_old_one_still_works(stack, client, providers,
                                                               provider_app, provider):
    sign_in = SIGN_IN[provider]
    old = providers.current_kid(provider)
    sign_in(client, providers, provider_app, kid=old)
    new = providers.rotate(provider)
    assert new != old and old in providers.kids(provider)
    time.sleep(stack.jwks_refetch_interval + 0.1)
    before = providers.fetch_count(provider)
    sign_in(client, providers, provider_app, kid=new)
    assert providers.fetch_count(provider) == before + 1, "the new kid did not cause one refetch"
    # Both keys are published: the old kid still signs in, from the cache.
    sign_in(client, providers, provider_app, kid=old)
    assert providers.fetch_count(provider) == before + 1


def test_unknown_kids_refetch_at_most_once_per_interval(stack, client, providers, provider_app):
    google_signed_in(client, providers, provider_app)  # Google's keys are cached
    time.sleep(stack.jwks_refetch_interval + 0.1)
    before = providers.fetch_count("google")
    started = time.monotonic()
    for _ in range(4):
        body, _ = google_body(providers, signer="unpublished")
        assert_problem(client.google_sign_in(provider_app, **body), 401,
                       "auth/invalid-google-token")
    elapsed = time.monotonic() - started
    fetched = providers.fetch_count("google") - before
    allowed = 1 + int(elapsed // stack.jwks_refetch_interval)
    assert 1 <= fetched <= allowed, \
        f"{fetched} fetches for 4 unknown kids in {elapsed:.2f}s (at most {allowed} allowed)"


def test_each_provider_has_its_own_cache(stack, client, providers, provider_app):
    # A Google rotation is no reason to fetch Apple's or Firebase's keys.
    for provider in PROVIDERS:
        SIGN_IN[provider](client, providers, provider_app)
    counts = {p: providers.fetch_count(p) for p in ("apple", "firebase")}
    new = providers.rotate("google")
    time.sleep(stack.jwks_refetch_interval + 0.1)
    google_signed_in(client, providers, provider_app, kid=new)
    assert {p: providers.fetch_count(p) for p in ("apple", "firebase")} == counts
