"""Sign-in with Apple, Google and Firebase as a client app does it: a token minted by the
stand-in (provider_standin.py), and for Apple a nonce fetched from the service first. The
*_signed_in helpers assert the 200 and the token-response shape and return (data, claims).
Also the fresh proof `DELETE /v1/me` takes from a provider's user, and what conftest runs the
revocation worker with for revoking Apple tokens."""

import secrets
import time

import db_tools
from identity_client import assert_token_response
from jwt_tools import split

# A failed revocation at Apple (account deletion) is retried after 0.3 s, 0.6 s, then every
# 1.2 s until Apple answers 200 (IDENTITY_APPLE_REVOKE_RETRY_DELAYS_MS, set by conftest).
APPLE_REVOKE_RETRY_DELAYS_MS = (300, 600, 1200)
# How long the provider worker may take to exchange an Apple authorization code and keep the
# refresh token.
CODE_EXCHANGE_TIMEOUT = 10.0


# The queue an Apple revocation goes to when it can never succeed (a code Apple will not
# exchange), as the revocation worker declares it; and the AMQP type of what lands there.
REVOCATION_DEAD_QUEUE = "identity.revocation.dead"
REVOKE_APPLE_TOKEN_TYPE = "identity.revocation.v1.RevokeAppleToken"


def quiet_revocations(client, providers, seconds=1.0, timeout=15.0):
    """Waits until the stand-in has had no revoke call for `seconds` (a revocation of an
    earlier test may still be going on); returns the number of revoke calls so far."""
    seen = {"count": -1, "since": time.monotonic()}

    def settled():
        count = len(providers.apple_revoke_calls())
        if count != seen["count"]:
            seen["count"], seen["since"] = count, time.monotonic()
            return False
        return time.monotonic() - seen["since"] >= seconds

    client.wait_for(settled, timeout=timeout, interval=0.2)
    return len(providers.apple_revoke_calls())


def new_authorization_code():
    return f"c_{secrets.token_hex(16)}"


def apple_body(client, providers, app, *, nonce=None, kid=None, alg="RS256", signer="published",
               **claims):
    """({"identity_token", "nonce"}, claims): a fresh nonce from the service (unless given),
    hashed into the token's nonce claim (unless nonce_hash= or without=("nonce",) says
    otherwise)."""
    nonce = nonce or client.new_nonce(app)
    token, claims = providers.apple_token(nonce=nonce, kid=kid, alg=alg, signer=signer, **claims)
    return {"identity_token": token, "nonce": nonce}, claims


def google_body(providers, *, send_nonce=None, kid=None, alg="RS256", signer="published",
                **claims):
    """({"id_token"[, "nonce"]}, claims); send_nonce goes into the body as `nonce`."""
    token, claims = providers.google_token(kid=kid, alg=alg, signer=signer, **claims)
    body = {"id_token": token}
    if send_nonce is not None:
        body["nonce"] = send_nonce
    return body, claims


def apple_proof(client, providers, app, *, sub, nonce=None, authorization_code=None, **claims):
    """The fresh proof an Apple user gives DELETE /v1/me: a new identity token of `sub` (for a
    fresh nonce unless one is given) and a new authorization code:
    ({"identity_token", "authorization_code", "nonce"}, claims)."""
    body, claims = apple_body(client, providers, app, nonce=nonce, sub=sub, **claims)
    body["authorization_code"] = authorization_code or new_authorization_code()
    return body, claims


def google_proof(providers, *, sub, **claims):
    """The fresh proof a Google user gives DELETE /v1/me: ({"id_token"}, claims)."""
    token, claims = providers.google_token(sub=sub, **claims)
    return {"id_token": token}, claims


def firebase_body(providers, *, kid=None, alg="RS256", signer="published", **claims):
    token, claims = providers.firebase_token(kid=kid, alg=alg, signer=signer, **claims)
    return {"provider": "firebase", "id_token": token}, claims


def _signed_in(resp, app, is_new_user):
    assert resp.status == 200, resp
    data = resp.data
    if is_new_user is None:
        is_new_user = data.get("is_new_user")
    assert_token_response(data, is_new_user=is_new_user, expires_in=app["access_token_ttl"])
    return data


def apple_signed_in(client, providers, app, *, is_new_user=None, fields=None, **claims):
    """Signs in with Apple (fresh nonce); fields are extra body fields (first_name,
    authorization_code…). Returns (data, claims)."""
    body, claims = apple_body(client, providers, app, **claims)
    resp = client.apple_sign_in(app, **body, **(fields or {}))
    return _signed_in(resp, app, is_new_user), claims


def google_signed_in(client, providers, app, *, is_new_user=None, **claims):
    body, claims = google_body(providers, **claims)
    return _signed_in(client.google_sign_in(app, **body), app, is_new_user), claims


def firebase_signed_in(client, providers, app, *, is_new_user=None, **claims):
    body, claims = firebase_body(providers, **claims)
    return _signed_in(client.id_token_sign_in(app, **body), app, is_new_user), claims


def amr(data):
    """The access token's amr claim."""
    return split(data["access_token"])[1].get("amr")


def apple_refresh_token_kept(app, sub):
    """True once the user's Apple identity has its (encrypted) Apple refresh token."""
    found = db_tools.rows("select apple_refresh_token_enc is not null from user_identities "
                          f"where app_id={db_tools.literal(app['app_id'])} and provider='apple' "
                          f"and subject={db_tools.literal(sub)}")
    return found == [["t"]]


def apple_signed_in_with_code(client, providers, app, **claims):
    """Signs in with Apple sending an authorization code, then waits until the stand-in has
    exchanged it and the service keeps the Apple refresh token. Returns (data, claims, the
    refresh token the stand-in issued for that code)."""
    code = new_authorization_code()
    data, claims = apple_signed_in(client, providers, app, fields={"authorization_code": code},
                                   **claims)
    call = providers.wait_for_apple_token_call(lambda c: c["code"] == code,
                                               timeout=CODE_EXCHANGE_TIMEOUT)
    assert call is not None and call["status"] == 200 and call["refresh_token"], \
        f"code {code} not exchanged within {CODE_EXCHANGE_TIMEOUT}s: {call!r}"
    assert client.wait_for(lambda: apple_refresh_token_kept(app, claims["sub"]),
                           timeout=CODE_EXCHANGE_TIMEOUT, interval=0.2), \
        "apple_refresh_token_enc not set on the user's Apple identity"
    return data, claims, call["refresh_token"]
