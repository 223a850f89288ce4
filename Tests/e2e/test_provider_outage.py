"""The providers unreachable: keys already cached keep sign-ins working; a provider worker that
never fetched them answers 503 auth/provider-unavailable (fast, not the gateway's deadline),
and sign-in comes back on its own once the provider is reachable again. The stand-in is
stopped (connection refused) and the provider worker restarted, so conftest runs this last
(marker `disruptive`) and it restores both, even when it fails."""

import time

import pytest

from identity_client import assert_problem
from provider_flows import google_body, google_signed_in

pytestmark = pytest.mark.disruptive

RECOVERY = 15.0


def _code(resp):
    try:
        return resp.json.get("code") if isinstance(resp.json, dict) else None
    except AssertionError:
        return None


def _first_answer_from_a_ready_worker(client, app, body, timeout=20.0):
    """Retries while the gateway answers 503 auth/unavailable (the fresh worker is not
    consuming yet); returns the first other answer, or the last one at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        resp = client.google_sign_in(app, **body)
        if not (resp.status == 503 and _code(resp) == "auth/unavailable"):
            return resp
        if time.monotonic() >= deadline:
            return resp
        time.sleep(0.3)


def test_cached_keys_survive_an_outage_and_a_cold_worker_answers_503(stack, client, providers,
                                                                      provider_app):
    worker = stack.provider_worker
    google_signed_in(client, providers, provider_app)  # Google's keys are cached now
    kid = providers.current_kid("google")
    providers.stop()
    try:
        # Same kid, new user: verified from the cache, nothing fetched.
        google_signed_in(client, providers, provider_app, is_new_user=True, kid=kid)

        stack.restart_provider_worker()
        body, claims = google_body(providers, kid=kid)
        resp = _first_answer_from_a_ready_worker(client, provider_app, body)
        assert_problem(resp, 503, "auth/provider-unavailable")
        assert resp.elapsed < stack.request_timeout_ms / 1000, \
            f"took {resp.elapsed:.2f}s: a refused connection should fail fast"
        # Other provider work that needs no provider still goes on.
        assert client.auth_nonce(provider_app).status == 200
    finally:
        providers.start()
        if not worker.alive():
            worker.start()

    deadline = time.monotonic() + RECOVERY
    while True:
        resp = client.google_sign_in(provider_app, **body)
        if resp.status == 200 or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    assert resp.status == 200, f"Google sign-in did not recover within {RECOVERY}s: {resp!r}"
    assert resp.data["is_new_user"] is True  # the refused attempts made no account
    assert resp.data["user"]["email"] == claims["email"]
    assert worker.alive(), "the provider worker died over the outage"
