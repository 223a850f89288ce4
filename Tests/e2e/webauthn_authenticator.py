"""A software WebAuthn authenticator for the e2e tests: real keys (`cryptography`), real CBOR
(`cbor2`), attestation objects (`none`, `packed` self-attestation) and assertions for ES256,
EdDSA (Ed25519) and RS256, in the JSON shape browsers' `PublicKeyCredential.toJSON()` sends.

It shares no code with the service's verifier (Sources/WebAuthn); `independent_check_*` run
what it makes through `webauthn` from PyPI (py_webauthn, an independent relying-party
library), so a mistake in this authenticator and the same mistake in our verifier cannot hide
each other."""

import base64
import hashlib
import json
import secrets
import struct

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

import webauthn

ES256, EDDSA, RS256 = -7, -8, -257
ALGORITHMS = {"ES256": ES256, "EdDSA": EDDSA, "RS256": RS256}

FLAG_UP, FLAG_UV, FLAG_BE, FLAG_BS, FLAG_AT, FLAG_ED = 0x01, 0x04, 0x08, 0x10, 0x40, 0x80


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _int_bytes(value):
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


class Credential:
    """One credential: its key pair, id, user handle and signature counter."""

    def __init__(self, alg, rp_id, user_handle, counting=True):
        self.alg = alg
        self.rp_id = rp_id
        self.user_handle = user_handle
        self.id = secrets.token_bytes(32)
        self.sign_count = 0
        # Synced passkeys report 0 always; security keys count.
        self.counting = counting
        if alg == ES256:
            self.key = ec.generate_private_key(ec.SECP256R1())
        elif alg == EDDSA:
            self.key = ed25519.Ed25519PrivateKey.generate()
        elif alg == RS256:
            self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            raise ValueError(alg)

    def cose_key(self):
        if self.alg == ES256:
            numbers = self.key.public_key().public_numbers()
            return cbor2.dumps({1: 2, 3: ES256, -1: 1, -2: numbers.x.to_bytes(32, "big"),
                                -3: numbers.y.to_bytes(32, "big")})
        if self.alg == EDDSA:
            from cryptography.hazmat.primitives import serialization
            raw = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            return cbor2.dumps({1: 1, 3: EDDSA, -1: 6, -2: raw})
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 3, 3: RS256, -1: _int_bytes(numbers.n), -2: _int_bytes(numbers.e)})

    def sign(self, message):
        """ES256: ASN.1 DER (as WebAuthn has it), EdDSA: pure Ed25519, RS256: PKCS#1 v1.5."""
        if self.alg == ES256:
            return self.key.sign(message, ec.ECDSA(hashes.SHA256()))
        if self.alg == EDDSA:
            return self.key.sign(message)
        return self.key.sign(message, padding.PKCS1v15(), hashes.SHA256())

    def next_count(self):
        if self.counting:
            self.sign_count += 1
        return self.sign_count


def client_data(kind, challenge_b64, origin, **extra):
    return json.dumps({"type": kind, "challenge": challenge_b64, "origin": origin,
                       "crossOrigin": False, **extra}, separators=(",", ":")).encode("utf-8")


def auth_data(rp_id, flags, count, attested=b""):
    return hashlib.sha256(rp_id.encode("utf-8")).digest() + bytes([flags]) + struct.pack(">I", count) + attested


def default_flags(uv=True, be=True, bs=True):
    return FLAG_UP | (FLAG_UV if uv else 0) | (FLAG_BE if be else 0) | (FLAG_BS if bs else 0)


def create(options, origin, alg=ES256, fmt="none", counting=True, uv=True, rp_id=None, flags=None,
           client_type="webauthn.create", challenge=None):
    """navigator.credentials.create: returns (credential, PublicKeyCredential JSON)."""
    rp_id = rp_id or options["rp"]["id"]
    cred = Credential(alg, options["rp"]["id"], b64url_decode(options["user"]["id"]), counting=counting)
    cdj = client_data(client_type, challenge or options["challenge"], origin)
    attested = bytes(16) + struct.pack(">H", len(cred.id)) + cred.id + cred.cose_key()
    data = auth_data(rp_id, (default_flags(uv=uv) if flags is None else flags) | FLAG_AT, cred.sign_count, attested)
    if fmt == "none":
        statement = {}
    elif fmt == "packed":
        statement = {"alg": alg, "sig": cred.sign(data + hashlib.sha256(cdj).digest())}
    else:
        raise ValueError(fmt)
    attestation = cbor2.dumps({"fmt": fmt, "attStmt": statement, "authData": data})
    return cred, {"id": b64url(cred.id), "rawId": b64url(cred.id), "type": "public-key",
                  "response": {"clientDataJSON": b64url(cdj), "attestationObject": b64url(attestation),
                               "transports": ["hybrid", "internal"]},
                  "clientExtensionResults": {}, "authenticatorAttachment": "platform"}


def get(cred, options, origin, uv=True, rp_id=None, count=None, user_handle=True, client_type="webauthn.get",
        challenge=None):
    """navigator.credentials.get: the PublicKeyCredential JSON of an assertion by `cred`."""
    cdj = client_data(client_type, challenge or options["challenge"], origin)
    data = auth_data(rp_id or cred.rp_id, default_flags(uv=uv), cred.next_count() if count is None else count)
    signature = cred.sign(data + hashlib.sha256(cdj).digest())
    response = {"clientDataJSON": b64url(cdj), "authenticatorData": b64url(data), "signature": b64url(signature)}
    if user_handle:
        response["userHandle"] = b64url(cred.user_handle)
    return {"id": b64url(cred.id), "rawId": b64url(cred.id), "type": "public-key", "response": response,
            "clientExtensionResults": {}, "authenticatorAttachment": "platform"}


def tamper(credential, field, mutate):
    """A copy of `credential` with response[field] (base64url) passed through mutate(bytes)."""
    copy = json.loads(json.dumps(credential))
    copy["response"][field] = b64url(mutate(b64url_decode(copy["response"][field])))
    return copy


def independent_check_registration(credential, options, origin, require_uv=False):
    """py_webauthn's verdict on a registration: its VerifiedRegistration, or raises."""
    return webauthn.verify_registration_response(
        credential=credential, expected_challenge=b64url_decode(options["challenge"]),
        expected_rp_id=options["rp"]["id"], expected_origin=origin, require_user_verification=require_uv)


def independent_check_assertion(credential, options, origin, cred, previous_count, require_uv=False):
    """py_webauthn's verdict on an assertion against `cred`'s public key: raises when it refuses."""
    return webauthn.verify_authentication_response(
        credential=credential, expected_challenge=b64url_decode(options["challenge"]),
        expected_rp_id=options["rpId"], expected_origin=origin,
        credential_public_key=cred.cose_key(), credential_current_sign_count=previous_count,
        require_user_verification=require_uv)
