"""Revoking a deleted Apple user's tokens at Apple when no refresh token was kept at sign-in:
the authorization code sent with DELETE /v1/me is exchanged for one. Apple's codes are
single-use (the stand-in refuses a second exchange with invalid_grant, as Apple does), so

- the code is exchanged once, and a failed revoke is retried with the token it gave, never by
  exchanging the code again;
- a code Apple will not exchange at all goes to the dead-letter queue `identity.revocation.dead`
  (with an error line in the revocation worker's log, and nothing secret in it), not into
  endless retries;
- a sign-in's code whose exchange finishes after the account was deleted has its refresh token
  revoked at Apple, not stored for a user who no longer exists."""

import time

import db_tools
from identity_client import assert_no_content
from mail_flows import dead_letters
from provider_flows import (APPLE_REVOKE_RETRY_DELAYS_MS, CODE_EXCHANGE_TIMEOUT,
                            REVOCATION_DEAD_QUEUE, REVOKE_APPLE_TOKEN_TYPE, apple_proof,
                            apple_signed_in, new_authorization_code, quiet_revocations)
from provider_standin import APPLE_BUNDLE_ID

REVOKE_TIMEOUT = 20.0
# Long enough for every retry delay to pass once: a retry that was going to happen has.
ALL_RETRY_DELAYS = sum(APPLE_REVOKE_RETRY_DELAYS_MS) / 1000 + 1.0


def _token_calls(providers, code):
    return [c for c in providers.apple_token_calls() if c["code"] == code]


def _revoke_calls(providers, token, since=0):
    return [c for c in providers.apple_revoke_calls()[since:] if c["token"] == token]


def _apple_user_without_kept_token(client, providers, app):
    """An Apple user who signed in without an authorization code (so no Apple refresh token is
    kept) and the fresh proof, with a new code, that deletes it: (data, claims, proof, code)."""
    data, claims = apple_signed_in(client, providers, app, is_new_user=True)
    code = new_authorization_code()
    proof, _ = apple_proof(client, providers, app, sub=claims["sub"], email=claims["email"],
                           authorization_code=code)
    return data, claims, proof, code


def _log(process):
    with open(process.log_path, encoding="utf-8", errors="replace") as log:
        return log.read()


def test_a_failed_revocation_is_retried_with_the_token_not_a_second_exchange(client, providers,
                                                                            provider_app):
    data, _, proof, code = _apple_user_without_kept_token(client, providers, provider_app)
    mark = quiet_revocations(client, providers)
    providers.fail_revoke(2)
    try:
        assert_no_content(client.delete_me(provider_app, data["access_token"], proof))

        def revoked():
            exchanged = [c for c in _token_calls(providers, code) if c["status"] == 200]
            if not exchanged:
                return None
            ours = _revoke_calls(providers, exchanged[0]["refresh_token"], mark)
            return ours if ours and ours[-1]["status"] == 200 else None

        ours = client.wait_for(revoked, timeout=REVOKE_TIMEOUT, interval=0.2)
        assert ours, f"not revoked within {REVOKE_TIMEOUT}s: exchanges of the code " \
            f"{[(c['status'], c['reason']) for c in _token_calls(providers, code)]}, revoke calls " \
            f"{[(c['token'], c['status']) for c in providers.apple_revoke_calls()[mark:]]}"
    finally:
        providers.fail_revoke(0)
    assert [c["status"] for c in ours] == [500, 500, 200], [(c["token"], c["status"]) for c in ours]
    for call in ours:
        assert call["client_id"] == APPLE_BUNDLE_ID and call["client_secret_ok"], call
        assert call["token_type_hint"] == "refresh_token", call
    time.sleep(ALL_RETRY_DELAYS)
    calls = _token_calls(providers, code)
    assert [c["status"] for c in calls] == [200], \
        f"the code was exchanged {len(calls)} times: {[(c['status'], c['reason']) for c in calls]}"
    assert len(_revoke_calls(providers, calls[0]["refresh_token"], mark)) == 3


def test_a_code_apple_will_not_exchange_is_dead_lettered(stack, client, providers, provider_app):
    data, claims, proof, code = _apple_user_without_kept_token(client, providers, provider_app)
    providers.spend_apple_code(code)  # used or expired already: Apple answers invalid_grant
    assert_no_content(client.delete_me(provider_app, data["access_token"], proof))

    def dead():
        return [m for m in dead_letters(queue=REVOCATION_DEAD_QUEUE)
                if m.get("subject") == claims["sub"]]
    found = client.wait_for(dead, timeout=REVOKE_TIMEOUT, interval=0.3)
    assert found, f"nothing for {claims['sub']} on {REVOCATION_DEAD_QUEUE} within " \
        f"{REVOKE_TIMEOUT}s; exchanges of the code: " \
        f"{[(c['status'], c['reason']) for c in _token_calls(providers, code)]}"
    assert len(found) == 1, [m.summary() for m in found]
    letter = found[0]
    assert letter.type == REVOKE_APPLE_TOKEN_TYPE, letter.summary()
    assert letter.get("app_id") == provider_app["app_id"], letter.summary()
    assert letter.get("client_id") == APPLE_BUNDLE_ID, letter.summary()
    assert code.encode() not in letter.raw, "the authorization code travels in clear"

    # Tried once, then never again: no retry exchanges it, and there is nothing to revoke.
    time.sleep(ALL_RETRY_DELAYS)
    calls = _token_calls(providers, code)
    assert [(c["status"], c["reason"]) for c in calls] == [(400, "code already used")], calls
    assert len(dead()) == 1, "dead-lettered more than once"

    lines = [line for line in _log(stack.revocation).splitlines()
             if "Apple revocation dead-lettered" in line and provider_app["app_id"] in line]
    assert len(lines) == 1, lines
    assert "level=error" in lines[0] and "apple_error=invalid_grant" in lines[0], lines[0]
    assert "dead_lettered_total=" in lines[0], lines[0]
    assert code not in _log(stack.revocation), "the authorization code is in the log"


def test_a_sign_in_code_exchanged_after_the_deletion_has_its_token_revoked(client, providers,
                                                                           provider_app):
    code = new_authorization_code()
    providers.hold_apple_token(code, timeout=4.0)
    try:
        data, claims = apple_signed_in(client, providers, provider_app, is_new_user=True,
                                       fields={"authorization_code": code})
        # The provider worker is now inside its exchange of the sign-in's code: delete the
        # account before Apple (the stand-in) answers.
        assert providers.apple_token_arrived(code, timeout=CODE_EXCHANGE_TIMEOUT), \
            f"the sign-in's code never reached /apple/token: {providers.summary()}"
        proof, _ = apple_proof(client, providers, provider_app, sub=claims["sub"],
                               email=claims["email"])
        assert_no_content(client.delete_me(provider_app, data["access_token"], proof))
    finally:
        providers.release_apple_token(code)

    calls = client.wait_for(lambda: _token_calls(providers, code), timeout=CODE_EXCHANGE_TIMEOUT,
                            interval=0.1)
    assert calls and calls[0]["status"] == 200, calls
    refresh_token = calls[0]["refresh_token"]

    def revoked():
        return [c for c in _revoke_calls(providers, refresh_token) if c["status"] == 200]
    done = client.wait_for(revoked, timeout=REVOKE_TIMEOUT, interval=0.2)
    assert done, f"the refresh token of the late exchange was not revoked within " \
        f"{REVOKE_TIMEOUT}s; revoke calls: {providers.apple_revoke_calls()[-5:]}"
    assert done[0]["client_id"] == APPLE_BUNDLE_ID and done[0]["client_secret_ok"], done[0]
    # Nothing was kept for the user who is gone.
    sub = db_tools.literal(claims["sub"])
    assert db_tools.value(f"select count(*) from user_identities where subject = {sub}") == "0"
