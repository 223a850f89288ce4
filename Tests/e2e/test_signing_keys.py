"""Signing keys: RS256, ES256 and EdDSA access tokens, the JWKS shapes checked with
the `cryptography` package, and rotation's lifecycle next → current → previous → retired: the
next key is published one JWKS cache period (the JWKS max-age) before it signs, and the key it
replaces verifies every token it signed until they have expired, under load without a 401."""

import base64
import datetime
import json
import random
import threading
import time

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import db_tools
from identity_client import assert_problem

CACHE_SECONDS = 2
PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi"}


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def header_of(token):
    return json.loads(b64url(token.split(".")[0]))


def public_key(jwk):
    """The key a JWK describes, built by `cryptography` from the JWK members alone."""
    assert not PRIVATE_MEMBERS & set(jwk), jwk
    assert jwk["use"] == "sig" and jwk["kid"], jwk
    if jwk["alg"] == "RS256":
        assert jwk["kty"] == "RSA", jwk
        key = rsa.RSAPublicNumbers(int.from_bytes(b64url(jwk["e"]), "big"),
                                   int.from_bytes(b64url(jwk["n"]), "big")).public_key()
        assert key.key_size == 2048
        return key
    if jwk["alg"] == "ES256":
        assert (jwk["kty"], jwk["crv"]) == ("EC", "P-256"), jwk
        x, y = b64url(jwk["x"]), b64url(jwk["y"])
        assert len(x) == len(y) == 32, jwk
        return ec.EllipticCurvePublicNumbers(int.from_bytes(x, "big"), int.from_bytes(y, "big"),
                                             ec.SECP256R1()).public_key()
    assert jwk["alg"] == "EdDSA" and (jwk["kty"], jwk["crv"]) == ("OKP", "Ed25519"), jwk
    x = b64url(jwk["x"])
    assert len(x) == 32 and set(jwk) == {"kty", "crv", "x", "kid", "use", "alg"}, jwk
    return ed25519.Ed25519PublicKey.from_public_bytes(x)


def verify(token, jwks):
    """Checks the token's signature with the JWKS key its kid names, as a backend would."""
    header = header_of(token)
    jwk = next(k for k in jwks["keys"] if k["kid"] == header["kid"])
    assert header["alg"] == jwk["alg"] and header["typ"] == "at+jwt", (header, jwk)
    key = public_key(jwk)
    signing_input = token.rsplit(".", 1)[0].encode()
    signature = b64url(token.rsplit(".", 1)[1])
    if jwk["alg"] == "RS256":
        key.verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
    elif jwk["alg"] == "ES256":
        assert len(signature) == 64
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
    else:
        key.verify(signature, signing_input)
    return json.loads(b64url(token.split(".")[1]))


def jwks(client, app):
    resp = client.get(f"/v1/apps/{app['app_id']}/jwks.json")
    assert resp.status == 200, resp
    return resp


def rotate(stack, app, alg=None):
    done = stack.ctl("keys", "rotate", app["app_id"], *(["--alg", alg] if alg else []))
    assert done.returncode == 0, f"keys rotate failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


def keys_by_kid(stack, app):
    done = stack.ctl("keys", "list", app["app_id"])
    assert done.returncode == 0, done.stderr
    return {key["kid"]: key for key in json.loads(done.stdout)["keys"]}


def seconds_until(iso):
    when = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    return (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()


def wait_until(iso, extra=0.6):
    # signs_from is printed to the second: its fraction may be up to a second later.
    time.sleep(max(0.0, seconds_until(iso) + 1 + extra))


@pytest.fixture
def fast_app(stack, app):
    """An app whose JWKS cache period (and so a rotation's lead) is CACHE_SECONDS."""
    assert stack.configure_app(app["app_id"], jwks_cache_seconds=CACHE_SECONDS)["jwks_cache_seconds"] == CACHE_SECONDS
    return app


@pytest.mark.parametrize("alg", ["ES256", "EdDSA", "RS256"])
def test_rotation_to_each_algorithm_publishes_then_signs_then_keeps_the_previous(client, stack, fast_app, alg):
    app = fast_app
    first = client.new_user(app)
    old_token = first["access_token"]
    old_kid = header_of(old_token)["kid"]
    assert header_of(old_token)["alg"] == "RS256"

    rotation = rotate(stack, app, alg)
    assert (rotation["alg"], rotation["state"], rotation["replaces"]) == (alg, "next", old_kid), rotation
    new_kid = rotation["kid"]
    resp = jwks(client, app)
    # The max-age is the app's cache period, which is the rotation's lead.
    assert resp.header("Cache-Control") == f"public, max-age={CACHE_SECONDS}", resp.header("Cache-Control")
    published = {k["kid"]: k for k in resp.json["keys"]}
    assert set(published) == {old_kid, new_kid}, published
    public_key(published[new_kid])  # the next key's JWK has its algorithm's shape
    assert verify(old_token, resp.json)["sub"] == first["user"]["uid"]
    states = keys_by_kid(stack, app)
    assert (states[new_kid]["state"], states[old_kid]["state"]) == ("next", "current"), states

    wait_until(rotation["signs_from"])
    signed_in = client.sign_in(app, email=first["user"]["email"])
    assert signed_in.status == 200, signed_in
    new_token = signed_in.data["access_token"]
    assert (header_of(new_token)["alg"], header_of(new_token)["kid"]) == (alg, new_kid)
    claims = verify(new_token, jwks(client, app).json)
    assert claims["sub"] == first["user"]["uid"] and claims["aud"] == app["app_id"]
    with pytest.raises(InvalidSignature):
        forged = new_token[:-4] + ("AAAA" if not new_token.endswith("AAAA") else "BBBB")
        verify(forged, jwks(client, app).json)
    # The gateway accepts both: the new key's tokens and the previous key's.
    assert client.me(app, new_token).status == 200
    assert client.me(app, old_token).status == 200
    states = keys_by_kid(stack, app)
    assert (states[new_kid]["state"], states[old_kid]["state"]) == ("current", "previous"), states
    # The previous key leaves when its last token has expired: signs_from + TTL + 60 s slack.
    retires_in = seconds_until(states[old_kid]["retires_at"])
    assert app["access_token_ttl"] - 5 <= retires_in <= app["access_token_ttl"] + 61, states
    # The algorithm is the published key's own (the metadata names no ID-token algorithms).
    assert {(key["kid"], key["alg"]) for key in jwks(client, app).json["keys"]} >= {(new_kid, alg)}


def test_a_retired_key_leaves_the_jwks_and_its_tokens_are_refused(client, stack, fast_app):
    app = fast_app
    first = client.new_user(app)
    old_token, old_kid = first["access_token"], header_of(first["access_token"])["kid"]
    rotation = rotate(stack, app, "EdDSA")
    wait_until(rotation["signs_from"])
    assert client.me(app, old_token).status == 200
    # Time passes for the previous key: every token it signed has now expired.
    db_tools.rows(f"UPDATE signing_keys SET retires_at = now() - interval '1 second' "
                  f"WHERE app_id = {db_tools.literal(app['app_id'])} AND kid = {db_tools.literal(old_kid)}")
    assert keys_by_kid(stack, app)[old_kid]["state"] == "retired"
    assert old_kid not in {k["kid"] for k in jwks(client, app).json["keys"]}
    time.sleep(CACHE_SECONDS + 0.5)  # the gateway's key cache lives at most the cache period
    assert_problem(client.me(app, old_token), 401, "auth/invalid-token")
    # The next rotation writes the retirement down, and the app keeps its algorithm by default.
    second = rotate(stack, app)
    assert second["alg"] == "EdDSA" and second["replaces"] == rotation["kid"], second
    assert db_tools.value(f"SELECT status FROM signing_keys WHERE app_id = {db_tools.literal(app['app_id'])} "
                          f"AND kid = {db_tools.literal(old_kid)}") == "retired"


def test_a_second_rotation_waits_for_the_pending_next_key(stack, fast_app, app_factory):
    first = rotate(stack, fast_app, "ES256")
    done = stack.ctl("keys", "rotate", fast_app["app_id"])
    assert done.returncode != 0 and "still next" in done.stderr, (done.stdout, done.stderr)
    wait_until(first["signs_from"])
    assert rotate(stack, fast_app)["replaces"] == first["kid"]
    bad = stack.ctl("keys", "rotate", fast_app["app_id"], "--alg", "HS256")
    assert bad.returncode != 0 and "RS256, ES256 or EdDSA" in bad.stderr
    assert stack.ctl("keys", "rotate", "app_unknown").returncode != 0


def test_rotation_under_load_never_refuses_a_token_of_the_previous_key(client, stack, fast_app):
    """Parallel /me calls with tokens of the key being replaced, and (once it signs) of the new
    key, all across the rotation: every answer must be 200."""
    app = fast_app
    users = [client.new_user(app) for _ in range(6)]
    tokens = [u["access_token"] for u in users]
    old_kid = header_of(tokens[0])["kid"]
    lock = threading.Lock()
    statuses, kids_seen = [], set()
    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            with lock:
                token = random.choice(tokens)
            status = client.me(app, token).status
            with lock:
                statuses.append(status)
                kids_seen.add(header_of(token)["kid"])

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1)
        rotation = rotate(stack, app, "ES256")
        deadline = time.monotonic() + seconds_until(rotation["signs_from"]) + 1 + CACHE_SECONDS + 3
        while time.monotonic() < deadline:
            # Fresh sign-ins meanwhile: before the activation they carry the old kid, after it the new.
            user = random.choice(users)
            resp = client.sign_in(app, email=user["user"]["email"])
            assert resp.status == 200, resp
            with lock:
                tokens.append(resp.data["access_token"])
            time.sleep(0.3)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert {old_kid, rotation["kid"]} <= kids_seen, kids_seen
    refused = [s for s in statuses if s != 200]
    assert len(statuses) > 100 and not refused, (len(statuses), refused[:10])


# --- POST /v1/admin/keys/rotate -----------------------------------------------------------------

def test_admin_rotate_route_publishes_the_next_key_and_refuses_a_second_rotation(client, stack, fast_app):
    from admin_tools import admin, audit_rows
    app = fast_app
    first = client.new_user(app)
    old_kid = header_of(first["access_token"])["kid"]
    assert_problem(admin(client, app, "POST", "/v1/admin/keys/rotate", {"alg": "HS256"}), 422, "auth/validation-failed")
    resp = admin(client, app, "POST", "/v1/admin/keys/rotate", {"alg": "EdDSA"})
    assert resp.status == 201, resp
    rotated = resp.data
    assert (rotated["alg"], rotated["state"], rotated["replaces"]) == ("EdDSA", "next", old_kid), rotated
    assert rotated["kid"] in {k["kid"] for k in jwks(client, app).json["keys"]}
    assert_problem(admin(client, app, "POST", "/v1/admin/keys/rotate", {}), 409, "auth/key-rotation-pending")
    when = datetime.datetime.strptime(rotated["signs_from"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    time.sleep(max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) + 1.6)
    token = client.sign_in(app, email=first["user"]["email"]).data["access_token"]
    assert (header_of(token)["alg"], header_of(token)["kid"]) == ("EdDSA", rotated["kid"])
    verify(token, jwks(client, app).json)
    assert client.me(app, first["access_token"]).status == 200
    assert any(row["action"] == "admin.keys.rotate" for row in audit_rows(client, app, action="admin.keys.rotate"))
    # A user's token is never a secret key.
    assert_problem(client.post("/v1/admin/keys/rotate", {}, token=token, app_key=app["app_key"]), 401,
                   "auth/invalid-secret-key")


def test_a_longer_token_lifetime_pushes_back_the_replaced_keys_retirement(client, stack, fast_app):
    app = fast_app
    old_kid = header_of(client.new_user(app)["access_token"])["kid"]
    rotate(stack, app, "ES256")
    before = seconds_until(keys_by_kid(stack, app)[old_kid]["retires_at"])
    longer = app["access_token_ttl"] + 600
    assert stack.configure_app(app["app_id"], access_token_ttl=longer)["access_token_ttl"] == longer
    after = seconds_until(keys_by_kid(stack, app)[old_kid]["retires_at"])
    assert 595 <= after - before <= 605, (before, after)
    # A shorter one leaves it: tokens signed earlier still carry the longer lifetime.
    assert stack.configure_app(app["app_id"], access_token_ttl=app["access_token_ttl"])
    assert abs(seconds_until(keys_by_kid(stack, app)[old_kid]["retires_at"]) - after) <= 5
