"""JWT helpers that never ask the service: decode, verify against a JWKS, and mint tokens with
the app's real private key read straight from PostgreSQL (to make expired or foreign tokens
that are otherwise perfectly valid)."""

import base64
import hashlib
import hmac
import json
import os
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

import db_tools


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_encode(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_uint(text):
    return int.from_bytes(b64url_decode(text), "big")


def split(token):
    """Returns (header, claims, signing_input bytes, signature bytes)."""
    head, body, sig = token.split(".")
    return (json.loads(b64url_decode(head)), json.loads(b64url_decode(body)),
            f"{head}.{body}".encode("ascii"), b64url_decode(sig))


def public_key_from_jwk(jwk):
    return RSAPublicNumbers(b64url_uint(jwk["e"]), b64url_uint(jwk["n"])).public_key()


def verify_rs256(token, jwks):
    """True when the token's RS256 signature checks out against the JWKS key named by its kid."""
    header, _, signing_input, signature = split(token)
    keys = [k for k in jwks["keys"] if k.get("kid") == header.get("kid")]
    if not keys:
        return False
    try:
        public_key_from_jwk(keys[0]).verify(signature, signing_input, padding.PKCS1v15(),
                                            hashes.SHA256())
        return True
    except InvalidSignature:
        return False


def encode(header, claims, sign):
    head = b64url_encode(json.dumps(header, separators=(",", ":")).encode())
    body = b64url_encode(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{head}.{body}".encode("ascii")
    return f"{head}.{body}.{b64url_encode(sign(signing_input))}"


def sign_rs256(header, claims, private_key):
    return encode(header, claims,
                  lambda data: private_key.sign(data, padding.PKCS1v15(), hashes.SHA256()))


def sign_hs256(header, claims, secret):
    return encode(header, claims, lambda data: hmac.new(secret, data, hashlib.sha256).digest())


def tamper_segment(token, index):
    """Changes one character in the middle of a segment. The middle, not the end: the last
    base64url character of a signature partly encodes padding bits, so changing it may leave
    the decoded bytes untouched."""
    parts = token.split(".")
    seg = parts[index]
    mid = len(seg) // 2
    parts[index] = seg[:mid] + ("A" if seg[mid] != "A" else "B") + seg[mid + 1:]
    return ".".join(parts)


def subkey(label, master_key_hex=None):
    """A sub-key of the master key as the service derives it (SubKey.swift): HKDF-SHA256 with
    salt "identity-service" and the label as info."""
    master = bytes.fromhex(master_key_hex or os.environ["IDENTITY_MASTER_KEY"])
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"identity-service",
                info=label.encode()).derive(master)


def load_signing_key(app_id):
    """(kid, private key) of the app's current signing key, decrypted as the workers do:
    private_key_enc = nonce(12) || AES-256-GCM ciphertext || tag(16),
    AAD = "signing_key:<app_id>:<kid>", plaintext = PKCS#8 PEM."""
    assert re.fullmatch(r"[A-Za-z0-9_]+", app_id), app_id  # it goes into SQL text below
    out = db_tools.rows("select kid, encode(private_key_enc,'hex') from signing_keys "
                        f"where app_id='{app_id}' and status='current'")
    assert len(out) == 1, f"expected one current signing key for {app_id}, got {out!r}"
    kid, blob_hex = out[0]
    blob = bytes.fromhex(blob_hex)
    aes = AESGCM(subkey("seal-signing-key-v1"))
    pem = aes.decrypt(blob[:12], blob[12:], f"signing_key:{app_id}:{kid}".encode())
    return kid, serialization.load_pem_private_key(pem, password=None)


def public_pem_from_jwk(jwk):
    return public_key_from_jwk(jwk).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
