"""Every key is a sub-key of the master key (SubKey.swift): rows are sealed under HKDF sub-keys,
never under the
master key itself, and `identityctl keys reseal` moves rows an older version sealed with the
master key under their sub-keys, idempotently, without which such an app could not sign in."""

import json
import os
import subprocess

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import db_tools
import jwt_tools


def sealed_signing_key(app_id):
    kid, blob_hex = db_tools.rows("select kid, encode(private_key_enc, 'hex') from signing_keys "
                                  f"where app_id = {db_tools.literal(app_id)} and status = 'current'")[0]
    return kid, bytes.fromhex(blob_hex)


def master_key():
    return bytes.fromhex(os.environ["IDENTITY_MASTER_KEY"])


def open_blob(key, blob, aad):
    return AESGCM(key).decrypt(blob[:12], blob[12:], aad.encode())


def reseal(stack):
    done = subprocess.run([stack.binary("identityctl"), "keys", "reseal"], env=stack.env_for("identity-owner"),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_signing_keys_are_sealed_under_their_sub_key_not_the_master_key(app):
    kid, blob = sealed_signing_key(app["app_id"])
    aad = f"signing_key:{app['app_id']}:{kid}"
    pem = open_blob(jwt_tools.subkey("seal-signing-key-v1"), blob, aad)
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    try:
        open_blob(master_key(), blob, aad)
    except InvalidTag:
        pass
    else:
        raise AssertionError("the signing key opened under the raw master key")


def test_apple_key_is_sealed_under_the_apple_sub_key(stack, app):
    stack.configure_app(app["app_id"], **stack.provider_settings(("apple",)))
    blob = bytes.fromhex(db_tools.value("select encode(apple_private_key_enc, 'hex') from app_provider_settings "
                                        f"where app_id = {db_tools.literal(app['app_id'])}"))
    aad = f"apple_p8:{app['app_id']}"
    assert b"PRIVATE KEY" in open_blob(jwt_tools.subkey("seal-apple-secret-v1"), blob, aad)
    try:
        open_blob(master_key(), blob, aad)
    except InvalidTag:
        pass
    else:
        raise AssertionError("the .p8 key opened under the raw master key")


def test_reseal_moves_a_master_key_sealed_row_under_its_sub_key(stack, client, app):
    kid, blob = sealed_signing_key(app["app_id"])
    aad = f"signing_key:{app['app_id']}:{kid}"
    pem = open_blob(jwt_tools.subkey("seal-signing-key-v1"), blob, aad)
    # What the old code wrote: the same key sealed with the master key itself. The app has not
    # signed anything yet, so no worker has it cached.
    nonce = os.urandom(12)
    legacy = nonce + AESGCM(master_key()).encrypt(nonce, pem, aad.encode())
    db_tools.rows(f"update signing_keys set private_key_enc = '\\x{legacy.hex()}'::bytea "
                  f"where app_id = {db_tools.literal(app['app_id'])} and kid = {db_tools.literal(kid)}")

    counts = reseal(stack)
    assert counts["signing_keys"] == 1, counts

    _, resealed = sealed_signing_key(app["app_id"])
    assert resealed != legacy
    assert open_blob(jwt_tools.subkey("seal-signing-key-v1"), resealed, aad) == pem
    # The app signs with it again: a sign-up's access token verifies against the JWKS.
    answer = client.sign_up(app)
    assert answer.status == 201, answer.body
    jwks = client.get(f"/v1/apps/{app['app_id']}/jwks.json").json
    assert jwt_tools.verify_rs256(answer.json["data"]["access_token"], jwks)
    # Idempotent: nothing is left to move.
    assert reseal(stack) == {"signing_keys": 0, "apple_private_keys": 0, "apple_refresh_tokens": 0}
