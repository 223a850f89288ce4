"""A local stand-in for Apple, Google and Firebase: their JWKS, Apple's token and revoke
endpoints, and helpers that mint identity tokens signed with the stand-in's keys (or with keys
it does not publish, or no key at all).

It runs inside the pytest process (http.server in a background thread, on 127.0.0.1) and the
service is pointed at it through IDENTITY_*_URL variables (see `env()`). `stop()` closes the
listening socket, so a stopped stand-in is a refused connection, not a slow or failing one;
`start()` listens again on the same port.

Everything it is asked is recorded (JWKS fetches per path, every /apple/token and /apple/revoke
call) so tests can check what the service did behind their backs.

Like Apple, /apple/token exchanges an authorization code once: the same code again (or one a test
marked spent) is 400 `invalid_grant`.
"""

import hashlib
import json
import os
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (decode_dss_signature,
                                                            encode_dss_signature)

from jwt_tools import b64url_decode, b64url_encode, encode, sign_hs256, sign_rs256

# --- the fake providers' world (what the tests configure their apps with) --------------------

APPLE_ISSUER = "https://appleid.apple.com"
APPLE_AUDIENCE = "https://appleid.apple.com"  # the `aud` of an Apple client secret
APPLE_BUNDLE_ID = "com.example.app"
APPLE_SERVICES_ID = "com.example.web"
APPLE_TEAM_ID = "TEAM123456"
APPLE_KEY_ID = "KEY1234567"
GOOGLE_ISSUER = "https://accounts.google.com"
GOOGLE_CLIENT_IDS = ("web.apps.example", "ios.apps.example")
FIREBASE_PROJECT_ID = "demo-project"
FIREBASE_ISSUER_PREFIX = "https://securetoken.google.com/"

PROVIDERS = ("apple", "google", "firebase")
JWKS_PATHS = {"apple": "/apple/keys", "google": "/google/certs", "firebase": "/firebase/keys"}
APPLE_TOKEN_PATH = "/apple/token"
APPLE_REVOKE_PATH = "/apple/revoke"
JWKS_CACHE_CONTROL = "public, max-age=3600"
# Apple refuses a client secret that lives longer than 6 months.
APPLE_CLIENT_SECRET_MAX_LIFETIME = 15777000
CLOCK_SKEW = 5  # seconds of slack on "iat <= now" for the client secrets the service makes


def nonce_claim(raw_nonce):
    """What Apple puts in `nonce`: the hex SHA-256 of the raw nonce the app passed along."""
    return hashlib.sha256(raw_nonce.encode("utf-8")).hexdigest()


def unique_apple_sub():
    # The shape of a real one: 6 digits, 32 hex, 4 digits.
    return f"{secrets.randbelow(10**6):06d}.{uuid.uuid4().hex}.{secrets.randbelow(10**4):04d}"


def unique_google_sub():
    return str(10**20 + secrets.randbelow(9 * 10**20))


def unique_firebase_uid():
    return secrets.token_urlsafe(21)[:28]


def unique_phone():
    # +1 555 01xx numbers are reserved for fiction; the tail keeps them unique enough.
    return f"+1555{secrets.randbelow(10**7):07d}"


def _rsa_jwk(kid, public_key):
    numbers = public_key.public_numbers()
    n = numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")
    e = numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": b64url_encode(n), "e": b64url_encode(e)}


def _new_rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _public_pem(private_key):
    return private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _drop(claims, without):
    for key in without:
        claims.pop(key, None)
    return claims


def sign_es256(header, claims, private_key):
    """A JWS ES256: the signature is raw r||s (32 + 32 bytes), not DER."""
    def sign(data):
        r, s = decode_dss_signature(private_key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return encode(header, claims, sign)


def verify_apple_client_secret(secret, client_id, public_key, team_id, key_id, now=None):
    """Checks a client secret as Apple does. Returns (ok, reason, header, claims)."""
    now = time.time() if now is None else now
    header = claims = None
    try:
        head, body, sig = secret.split(".")
        header = json.loads(b64url_decode(head))
        claims = json.loads(b64url_decode(body))
        signature = b64url_decode(sig)
    except (ValueError, AttributeError) as exc:
        return False, f"not a JWS: {exc}", header, claims
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return False, "header or claims not a JSON object", header, claims
    if header.get("alg") != "ES256":
        return False, f"alg {header.get('alg')!r}, expected ES256", header, claims
    if header.get("kid") != key_id:
        return False, f"kid {header.get('kid')!r}, expected {key_id!r}", header, claims
    if len(signature) != 64:
        return False, f"signature is {len(signature)} bytes, expected raw r||s (64)", header, claims
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"),
                               int.from_bytes(signature[32:], "big"))
    try:
        public_key.verify(der, f"{head}.{body}".encode("ascii"), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False, "bad signature (not the configured .p8 key?)", header, claims
    if claims.get("iss") != team_id:
        return False, f"iss {claims.get('iss')!r}, expected team id {team_id!r}", header, claims
    if claims.get("sub") != client_id:
        return False, f"sub {claims.get('sub')!r}, expected client_id {client_id!r}", header, claims
    if claims.get("aud") != APPLE_AUDIENCE:
        return False, f"aud {claims.get('aud')!r}, expected {APPLE_AUDIENCE!r}", header, claims
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, (int, float)) or isinstance(iat, bool) or iat > now + CLOCK_SKEW:
        return False, f"iat {iat!r} missing or in the future", header, claims
    if not isinstance(exp, (int, float)) or isinstance(exp, bool) or exp <= now:
        return False, f"exp {exp!r} missing or past", header, claims
    if exp - iat > APPLE_CLIENT_SECRET_MAX_LIFETIME:
        return False, f"lives {exp - iat} s, Apple allows {APPLE_CLIENT_SECRET_MAX_LIFETIME}", \
            header, claims
    return True, "ok", header, claims


class ProviderStandin:
    """See the module doc. Thread-safe: the HTTP threads and the tests share it."""

    def __init__(self, work_dir, port=0, apple_team_id=APPLE_TEAM_ID, apple_key_id=APPLE_KEY_ID):
        self._lock = threading.Lock()
        self._server = None
        self._thread = None
        self.port = port
        self.apple_team_id = apple_team_id
        self.apple_key_id = apple_key_id
        # provider -> [(kid, private key)], oldest first; the last one signs by default.
        self._keys = {p: [] for p in PROVIDERS}
        for provider in PROVIDERS:
            self._add_key(provider)
        self._unpublished = None  # lazily: an RSA key no JWKS lists
        self._fetches = {}
        self._token_calls = []
        self._revoke_calls = []
        self._revoke_failures_left = 0
        # Codes exchanged (or refused as spent) already: Apple's codes are single-use.
        self._spent_codes = set()
        # code -> {"arrived": Event, "release": Event, "timeout": seconds} (hold_apple_token)
        self._held_codes = {}
        self._unknown_requests = []
        # Apple's .p8: an EC P-256 key as PKCS#8 PEM, as Apple hands it out.
        self.apple_private_key = ec.generate_private_key(ec.SECP256R1())
        self.apple_public_key = self.apple_private_key.public_key()
        self.apple_p8_pem = self.apple_private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption())
        self.apple_p8_path = os.path.join(work_dir, f"AuthKey_{apple_key_id}.p8")
        with open(self.apple_p8_path, "wb") as f:
            f.write(self.apple_p8_pem)
        os.chmod(self.apple_p8_path, 0o600)

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def running(self):
        return self._server is not None

    @property
    def base_url(self):
        assert self.port, "the stand-in has never been started: no port yet"
        return f"http://127.0.0.1:{self.port}"

    def url(self, path):
        return self.base_url + path

    def start(self):
        """Listens (again) on 127.0.0.1:port; the first start picks a free port."""
        if self._server is not None:
            return
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        server.daemon_threads = True
        server.standin = self
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"provider-standin:{self.port}", daemon=True)
        self._thread.start()

    def stop(self):
        """Closes the listening socket: from now on a connection is refused."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        self._thread.join(timeout=5)
        self._thread = None

    def env(self):
        """The service's variables that point it at this stand-in."""
        return {
            "IDENTITY_APPLE_JWKS_URL": self.url(JWKS_PATHS["apple"]),
            "IDENTITY_APPLE_TOKEN_URL": self.url(APPLE_TOKEN_PATH),
            "IDENTITY_APPLE_REVOKE_URL": self.url(APPLE_REVOKE_PATH),
            "IDENTITY_GOOGLE_JWKS_URL": self.url(JWKS_PATHS["google"]),
            "IDENTITY_FIREBASE_JWKS_URL": self.url(JWKS_PATHS["firebase"]),
        }

    # --- keys ----------------------------------------------------------------------------------

    def _add_key(self, provider):
        kid = f"{provider}-{uuid.uuid4().hex[:12]}"
        key = _new_rsa_key()
        with self._lock:
            self._keys[provider].append((kid, key))
        return kid

    def rotate(self, provider):
        """Publishes a new key (which now signs by default) and keeps the old ones; returns the
        new kid."""
        return self._add_key(provider)

    def kids(self, provider):
        with self._lock:
            return [kid for kid, _ in self._keys[provider]]

    def current_kid(self, provider):
        return self.kids(provider)[-1]

    def private_key(self, provider, kid=None):
        with self._lock:
            keys = dict(self._keys[provider])
            kid = kid or self._keys[provider][-1][0]
        assert kid in keys, f"{provider} has no key {kid!r}"
        return keys[kid]

    def public_pem(self, provider, kid=None):
        return _public_pem(self.private_key(provider, kid))

    def jwks(self, provider):
        with self._lock:
            return {"keys": [_rsa_jwk(kid, key.public_key()) for kid, key in self._keys[provider]]}

    def unpublished_key(self):
        with self._lock:
            if self._unpublished is None:
                self._unpublished = _new_rsa_key()
            return self._unpublished

    # --- what the service asked ----------------------------------------------------------------

    def _count_fetch(self, path):
        with self._lock:
            self._fetches[path] = self._fetches.get(path, 0) + 1

    def fetch_count(self, provider_or_path):
        path = JWKS_PATHS.get(provider_or_path, provider_or_path)
        with self._lock:
            return self._fetches.get(path, 0)

    def apple_token_calls(self):
        """Every POST /apple/token so far, oldest first: dicts with form, code, client_id,
        grant_type, content_type, client_secret_ok, reason, header, claims (of the client
        secret), status and refresh_token (the one issued, or None)."""
        with self._lock:
            return [dict(c) for c in self._token_calls]

    def apple_revoke_calls(self):
        """Every POST /apple/revoke so far: form, client_id, token, token_type_hint,
        content_type, client_secret_ok, reason, status."""
        with self._lock:
            return [dict(c) for c in self._revoke_calls]

    def unknown_requests(self):
        with self._lock:
            return list(self._unknown_requests)

    def spend_apple_code(self, code):
        """Marks `code` as used already: exchanging it is 400 invalid_grant, as Apple answers a
        code that was exchanged before (or has expired)."""
        with self._lock:
            self._spent_codes.add(code)

    def hold_apple_token(self, code, timeout=4.0):
        """The exchange of `code` waits, once it has arrived and before it is answered, until
        release_apple_token(code) or `timeout` seconds (keep it under the service's outbound
        timeout, 5 s): a test acts while the service's exchange is in flight."""
        with self._lock:
            self._held_codes[code] = {"arrived": threading.Event(), "release": threading.Event(),
                                      "timeout": timeout}

    def apple_token_arrived(self, code, timeout=10.0):
        """True once the held exchange of `code` has reached the stand-in (waiting up to timeout)."""
        with self._lock:
            hold = self._held_codes.get(code)
        assert hold is not None, f"code {code} is not held"
        return hold["arrived"].wait(timeout)

    def release_apple_token(self, code):
        with self._lock:
            hold = self._held_codes.get(code)
        if hold is not None:
            hold["release"].set()

    def _wait_if_held(self, code):
        with self._lock:
            hold = self._held_codes.get(code)
        if hold is not None:
            hold["arrived"].set()
            hold["release"].wait(hold["timeout"])

    def fail_revoke(self, times):
        """The next `times` revoke calls answer 500 (and are recorded with status 500)."""
        with self._lock:
            self._revoke_failures_left = times

    def wait_for_apple_token_call(self, predicate, timeout=10.0, interval=0.1):
        """The first recorded /apple/token call satisfying predicate(call), waiting up to
        timeout seconds; None when none came."""
        deadline = time.monotonic() + timeout
        while True:
            for call in self.apple_token_calls():
                if predicate(call):
                    return call
            if time.monotonic() >= deadline:
                return None
            time.sleep(interval)

    def summary(self):
        """A few lines for failure reports."""
        with self._lock:
            calls = [{k: c.get(k) for k in ("code", "client_id", "status", "reason")}
                     for c in self._token_calls[-5:]]
            return (f"running={self.running} port={self.port} fetches={self._fetches} "
                    f"kids={ {p: [k for k, _ in v] for p, v in self._keys.items()} }\n"
                    f"last /apple/token calls: {calls}\n"
                    f"revoke calls: {len(self._revoke_calls)}; "
                    f"unknown requests: {self._unknown_requests[-5:]}")

    # --- minting tokens ------------------------------------------------------------------------

    def mint(self, provider, claims, *, kid=None, alg="RS256", signer="published", header=None):
        """A JWT with these claims.
        alg "RS256" and signer "published": signed with the provider's key `kid` (default the
        newest); signer "unpublished": signed with a key no JWKS lists, its header naming kid
        (default a kid nobody knows), so with a published kid the signature is simply wrong;
        alg "none": no signature at all; alg "HS256": HMAC keyed with the PEM of the provider's
        public key `kid` (the classic key-confusion attack)."""
        hdr = {"alg": alg, "typ": "JWT"}
        if alg == "RS256" and signer == "unpublished":
            hdr["kid"] = kid or f"unknown-{uuid.uuid4().hex[:12]}"
        else:
            hdr["kid"] = kid or self.current_kid(provider)
        hdr.update(header or {})
        if alg == "RS256":
            key = self.unpublished_key() if signer == "unpublished" else \
                self.private_key(provider, hdr["kid"])
            return sign_rs256(hdr, claims, key)
        if alg == "none":
            return encode(hdr, claims, lambda data: b"")
        if alg == "HS256":
            return sign_hs256(hdr, claims, self.public_pem(provider, hdr["kid"]))
        raise ValueError(f"unsupported alg {alg!r}")

    @staticmethod
    def apple_claims(*, sub=None, aud=APPLE_BUNDLE_ID, email=None, email_verified="true",
                     nonce=None, nonce_hash=None, iss=APPLE_ISSUER, iat=None, exp=None,
                     without=(), **extra):
        """An Apple identity token's claims. nonce is the raw nonce (hashed here);
        nonce_hash puts a `nonce` claim verbatim; neither: no nonce claim."""
        now = int(time.time())
        iat = now if iat is None else iat
        claims = {"iss": iss, "aud": aud, "exp": iat + 600 if exp is None else exp, "iat": iat,
                  "sub": sub or unique_apple_sub(),
                  "c_hash": b64url_encode(secrets.token_bytes(16)),
                  "email": email or f"apple-{uuid.uuid4().hex[:12]}@example.com",
                  "email_verified": email_verified, "auth_time": iat, "nonce_supported": True,
                  "real_user_status": 2}
        if nonce_hash is not None:
            claims["nonce"] = nonce_hash
        elif nonce is not None:
            claims["nonce"] = nonce_claim(nonce)
        claims.update(extra)
        return _drop(claims, without)

    @staticmethod
    def google_claims(*, sub=None, aud=GOOGLE_CLIENT_IDS[0], email=None, email_verified=True,
                      name=None, given_name="Jane", family_name="Doe",
                      picture="https://lh3.example.com/a/photo.png", nonce=None,
                      iss=GOOGLE_ISSUER, iat=None, exp=None, without=(), **extra):
        now = int(time.time())
        iat = now if iat is None else iat
        claims = {"iss": iss, "azp": aud, "aud": aud, "sub": sub or unique_google_sub(),
                  "email": email or f"google-{uuid.uuid4().hex[:12]}@example.com",
                  "email_verified": email_verified,
                  "name": name or f"{given_name} {family_name}", "given_name": given_name,
                  "family_name": family_name, "picture": picture, "iat": iat,
                  "exp": iat + 3600 if exp is None else exp}
        if nonce is not None:
            claims["nonce"] = nonce
        claims.update(extra)
        return _drop(claims, without)

    @staticmethod
    def firebase_claims(*, uid=None, project=FIREBASE_PROJECT_ID, email=None,
                        email_verified=True, phone_number=None, sign_in_provider="google.com",
                        iss=None, aud=None, iat=None, exp=None, auth_time=None, without=(),
                        **extra):
        now = int(time.time())
        iat = now if iat is None else iat
        uid = uid or unique_firebase_uid()
        identities = {}
        claims = {"iss": iss or f"{FIREBASE_ISSUER_PREFIX}{project}", "aud": aud or project,
                  "auth_time": iat if auth_time is None else auth_time, "user_id": uid,
                  "sub": uid, "iat": iat, "exp": iat + 3600 if exp is None else exp}
        if email is not None:
            claims["email"] = email
            claims["email_verified"] = email_verified
            identities["email"] = [email]
        if phone_number is not None:
            claims["phone_number"] = phone_number
            identities["phone"] = [phone_number]
        claims["firebase"] = {"identities": identities, "sign_in_provider": sign_in_provider}
        claims.update(extra)
        return _drop(claims, without)

    def _token(self, provider, make_claims, kid, alg, signer, claims):
        claims = make_claims(**claims)
        return self.mint(provider, claims, kid=kid, alg=alg, signer=signer), claims

    def apple_token(self, *, kid=None, alg="RS256", signer="published", **claims):
        """(token, claims): apple_claims(**claims), minted as mint() says."""
        return self._token("apple", self.apple_claims, kid, alg, signer, claims)

    def google_token(self, *, kid=None, alg="RS256", signer="published", **claims):
        return self._token("google", self.google_claims, kid, alg, signer, claims)

    def firebase_token(self, *, kid=None, alg="RS256", signer="published", **claims):
        return self._token("firebase", self.firebase_claims, kid, alg, signer, claims)

    def token(self, provider, **kw):
        return {"apple": self.apple_token, "google": self.google_token,
                "firebase": self.firebase_token}[provider](**kw)

    def apple_client_secret(self, client_id, *, iat=None, exp=None, kid=None, team_id=None,
                            key=None):
        """A client secret as the service should make it (for checking the stand-in itself)."""
        iat = int(time.time()) if iat is None else iat
        return sign_es256({"alg": "ES256", "kid": kid or self.apple_key_id},
                          {"iss": team_id or self.apple_team_id, "iat": iat,
                           "exp": iat + 300 if exp is None else exp, "aud": APPLE_AUDIENCE,
                           "sub": client_id},
                          key or self.apple_private_key)

    # --- Apple's endpoints (called from the HTTP threads) --------------------------------------

    def _check_secret(self, form, content_type):
        if not content_type.lower().startswith("application/x-www-form-urlencoded"):
            return False, f"Content-Type {content_type!r}, expected a form", None, None
        if not form.get("client_id") or not form.get("client_secret"):
            return False, "client_id or client_secret missing", None, None
        return verify_apple_client_secret(form["client_secret"], form["client_id"],
                                          self.apple_public_key, self.apple_team_id,
                                          self.apple_key_id)

    def _apple_token(self, form, content_type):
        ok, reason, header, claims = self._check_secret(form, content_type)
        call = {"form": form, "code": form.get("code"), "client_id": form.get("client_id"),
                "grant_type": form.get("grant_type"), "content_type": content_type,
                "client_secret_ok": ok, "reason": reason, "header": header, "claims": claims,
                "refresh_token": None, "at": time.time()}
        if not ok:
            status, body = 400, {"error": "invalid_client"}
        elif form.get("grant_type") != "authorization_code":
            status, body = 400, {"error": "unsupported_grant_type"}
            call["reason"] = f"grant_type {form.get('grant_type')!r}"
        elif not form.get("code"):
            status, body = 400, {"error": "invalid_request"}
            call["reason"] = "code missing"
        elif not self._spend(form["code"]):
            status, body = 400, {"error": "invalid_grant"}
            call["reason"] = "code already used"
        else:
            refresh = f"r_apple_{secrets.token_hex(24)}"
            status, body = 200, {"access_token": f"a_{secrets.token_hex(24)}",
                                 "token_type": "Bearer", "expires_in": 3600,
                                 "refresh_token": refresh, "id_token": "x"}
            call["refresh_token"] = refresh
        call["status"] = status
        with self._lock:
            self._token_calls.append(call)
        return status, body

    def _spend(self, code):
        """False when the code was exchanged before; marks it used."""
        with self._lock:
            if code in self._spent_codes:
                return False
            self._spent_codes.add(code)
            return True

    def _apple_revoke(self, form, content_type):
        ok, reason, _, _ = self._check_secret(form, content_type)
        call = {"form": form, "client_id": form.get("client_id"), "token": form.get("token"),
                "token_type_hint": form.get("token_type_hint"), "content_type": content_type,
                "client_secret_ok": ok, "reason": reason, "at": time.time()}
        with self._lock:
            failing = self._revoke_failures_left > 0
            if failing:
                self._revoke_failures_left -= 1
            call["status"] = 500 if failing else 200
            self._revoke_calls.append(call)
        if failing:
            return 500, {"error": "server_error"}
        return 200, None


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 answers, but every connection closes after its answer: a stopped stand-in then
    # has no kept-alive connection left that could still reach it.
    protocol_version = "HTTP/1.1"
    server_version = "ProviderStandin/1"

    def log_message(self, format, *args):
        pass  # the recorded calls say what happened; stderr would only clutter pytest's output

    @property
    def standin(self):
        return self.server.standin

    def _send(self, status, body=None, headers=None):
        raw = b"" if body is None else json.dumps(body).encode("utf-8")
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        self.end_headers()
        if raw and self.command != "HEAD":
            self.wfile.write(raw)
        self.close_connection = True

    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        path = urlsplit(self.path).path
        for provider, jwks_path in JWKS_PATHS.items():
            if path == jwks_path:
                self.standin._count_fetch(path)
                self._send(200, self.standin.jwks(provider),
                           {"Cache-Control": JWKS_CACHE_CONTROL})
                return
        self._unknown()

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        path = urlsplit(self.path).path
        body = self._read_body()
        content_type = self.headers.get("Content-Type") or ""
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"),
                                             keep_blank_values=True).items()}
        if path == APPLE_TOKEN_PATH:
            self.standin._wait_if_held(form.get("code"))
            self._send(*self.standin._apple_token(form, content_type))
        elif path == APPLE_REVOKE_PATH:
            self._send(*self.standin._apple_revoke(form, content_type))
        else:
            self._unknown()

    def _unknown(self):
        with self.standin._lock:
            self.standin._unknown_requests.append(f"{self.command} {self.path}")
        self._send(404, {"error": "not_found"})
