"""Sign-in with Apple, Google and Firebase as a client app does it: a token minted by the
stand-in (provider_standin.py), and for Apple a nonce fetched from the service first. The
*_signed_in helpers assert the 200 and the token-response shape and return (data, claims)."""

from identity_client import assert_token_response
from jwt_tools import split


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
