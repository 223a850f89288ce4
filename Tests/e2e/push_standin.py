"""Stand-ins for APNs and FCM that check what the real services check.

APNs (`APNsStandin`): HTTP/2 only, over TLS (ALPN `h2`; a connection that does not negotiate h2
is closed), with a certificate from a CA of its own that the mailer trusts through
IDENTITY_PUSH_CA_FILE. Each `POST /3/device/<token>` must carry a provider token (`authorization:
bearer <ES256 JWT>`) whose signature verifies with the public half of the `.p8` the test
configured, whose header `kid` is that key's id and whose `iss` is the team id, with an `iat` at
most an hour old and not in the future; `apns-topic` must be the app's bundle id and
`apns-push-type` one of Apple's words. Answers as Apple does: 200 with `apns-id`, 403
`InvalidProviderToken`/`ExpiredProviderToken`, 400 `TopicDisallowed`/`MissingTopic`, 410
`Unregistered` for tokens given to `unregister()`, 503 for tokens given to `fail()`.

FCM (`FCMStandin`, plain HTTP on loopback: the transport is not what is under test here):
`POST /token` is the OAuth2 JWT-bearer grant (RFC 7523): `grant_type` must be
`urn:ietf:params:oauth:grant-type:jwt-bearer` and the `assertion` an RS256 JWT that verifies with
the service account's public key, `iss` the account's email, `aud` this token URL, `scope` FCM's,
`exp` after `iat` by at most an hour; it answers an access token valid `expires_in` seconds.
`POST /v1/projects/<project>/messages:send` wants `Authorization: Bearer <a live token it issued>`
and `{"message": {"token", "notification"}}`; a token given to `unregister()` is answered 404
with `errorCode: UNREGISTERED`, one given to `fail()` 503.

Every accepted notification is recorded (`received(token)`); every request, accepted or not, in
`attempts(token)`.
"""

import base64
import datetime
import json
import os
import secrets
import socket
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import h2.config
import h2.connection
import h2.events
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import NameOID

HOST = "127.0.0.1"
PUSH_TYPES = {"alert", "background", "voip", "complication", "fileprovider", "mdm", "location",
              "liveactivity", "pushtotalk"}
FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def _b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _split_jwt(token):
    parts = token.split(".")
    if len(parts) != 3:
        raise ValueError("not a compact JWS")
    header = json.loads(_b64url_decode(parts[0]))
    claims = json.loads(_b64url_decode(parts[1]))
    return header, claims, (parts[0] + "." + parts[1]).encode(), _b64url_decode(parts[2])


class _Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.accepted = []          # (device token, headers, payload)
        self.tried = []             # (device token, status)
        self.gone = set()
        self.failing = set()
        self.holds = {}             # device token -> seconds to wait before answering

    def received(self, token):
        with self.lock:
            return [payload for (t, _, payload) in self.accepted if t == token]

    def attempts(self, token):
        with self.lock:
            return [status for (t, status) in self.tried if t == token]

    def unregister(self, *tokens):
        with self.lock:
            self.gone.update(tokens)

    def fail(self, *tokens):
        with self.lock:
            self.failing.update(tokens)

    def hold(self, token, seconds):
        with self.lock:
            self.holds[token] = seconds

    def wait_for(self, token, count=1, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.received(token)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        return self.received(token)

    def wait_attempts(self, token, count, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.attempts(token)) >= count:
                break
            time.sleep(0.05)
        return self.attempts(token)


# --- APNs ---------------------------------------------------------------------------------------


def _make_ca_and_leaf(directory):
    """A CA of the stand-in's own and a certificate for 127.0.0.1 it signed; returns the paths
    of the CA certificate (what the mailer trusts), the leaf certificate and the leaf key."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "APNs stand-in test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    import ipaddress
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(leaf_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(HOST)),
                                                        x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {name: os.path.join(directory, f"apns-standin-{name}.pem") for name in ("ca", "cert", "key")}
    with open(paths["ca"], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["cert"], "wb") as f:
        f.write(leaf.public_bytes(serialization.Encoding.PEM))
    with open(paths["key"], "wb") as f:
        f.write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return paths


class APNsStandin(_Recorder):
    def __init__(self, directory):
        super().__init__()
        self.directory = directory
        self.paths = _make_ca_and_leaf(directory)
        self.ca_file = self.paths["ca"]
        # The app's credentials, as Apple would know them: key id -> (team id, public key); topics.
        self.keys = {}
        self.topics = set()
        self.refusals = []          # why requests were refused (auth, topic), for assertions
        self.sock = None
        self.port = None

    def add_key(self, team_id, key_id, topic):
        """A fresh .p8 for (team, key id); returns its PEM text (what the app uploads)."""
        key = ec.generate_private_key(ec.SECP256R1())
        with self.lock:
            self.keys[key_id] = (team_id, key.public_key())
            self.topics.add(topic)
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption()).decode()

    def start(self):
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.paths["cert"], self.paths["key"])
        context.set_alpn_protocols(["h2"])
        self.context = context
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((HOST, 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self):
        return f"https://{HOST}:{self.port}"

    def _accept(self):
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw):
        try:
            conn = self.context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        try:
            if conn.selected_alpn_protocol() != "h2":
                with self.lock:
                    self.refusals.append("not h2")
                return
            h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
            h2conn.initiate_connection()
            conn.sendall(h2conn.data_to_send())
            streams = {}
            send_lock = threading.Lock()
            while True:
                data = conn.recv(65535)
                if not data:
                    return
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        streams[event.stream_id] = {"headers": dict(event.headers), "body": b""}
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id]["body"] += event.data
                        h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        request = streams.pop(event.stream_id)
                        threading.Thread(target=self._answer, daemon=True,
                                         args=(conn, h2conn, send_lock, event.stream_id, request)).start()
                with send_lock:
                    out = h2conn.data_to_send()
                    if out:
                        conn.sendall(out)
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _answer(self, conn, h2conn, send_lock, stream_id, request):
        status, body = self._decide(request["headers"], request["body"])
        headers = [(":status", str(status)), ("apns-id", secrets.token_hex(16))]
        payload = json.dumps(body).encode() if body else b""
        if payload:
            headers.append(("content-type", "application/json"))
        try:
            with send_lock:
                h2conn.send_headers(stream_id, headers, end_stream=not payload)
                if payload:
                    h2conn.send_data(stream_id, payload, end_stream=True)
                conn.sendall(h2conn.data_to_send())
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            pass

    def _refuse(self, why, status, reason, token):
        with self.lock:
            self.refusals.append(why)
            self.tried.append((token, status))
        return status, {"reason": reason}

    def _decide(self, headers, body):
        path = headers.get(":path", "")
        token = path.rsplit("/", 1)[-1] if path.startswith("/3/device/") else ""
        if headers.get(":method") != "POST" or not token:
            return self._refuse(f"bad request line {headers.get(':method')} {path}", 405, "MethodNotAllowed", token)
        auth = headers.get("authorization", "")
        if not auth.startswith("bearer "):
            return self._refuse("no bearer provider token", 403, "MissingProviderToken", token)
        try:
            jwt_header, claims, signing_input, signature = _split_jwt(auth[len("bearer "):])
        except (ValueError, json.JSONDecodeError):
            return self._refuse("provider token unreadable", 403, "InvalidProviderToken", token)
        with self.lock:
            known = self.keys.get(jwt_header.get("kid"))
        if jwt_header.get("alg") != "ES256" or known is None:
            return self._refuse(f"alg/kid {jwt_header}", 403, "InvalidProviderToken", token)
        team_id, public_key = known
        if len(signature) != 64:
            return self._refuse("signature not r||s", 403, "InvalidProviderToken", token)
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        try:
            public_key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return self._refuse("bad signature", 403, "InvalidProviderToken", token)
        if claims.get("iss") != team_id:
            return self._refuse(f"iss {claims.get('iss')} is not the team", 403, "InvalidProviderToken", token)
        iat = claims.get("iat")
        now = time.time()
        if not isinstance(iat, (int, float)) or iat > now + 60:
            return self._refuse(f"iat {iat}", 403, "InvalidProviderToken", token)
        if now - iat > 3600:
            return self._refuse(f"iat {iat} older than an hour", 403, "ExpiredProviderToken", token)
        topic = headers.get("apns-topic")
        if not topic:
            return self._refuse("no apns-topic", 400, "MissingTopic", token)
        with self.lock:
            topic_ok = topic in self.topics
        if not topic_ok:
            return self._refuse(f"topic {topic}", 400, "TopicDisallowed", token)
        if headers.get("apns-push-type") not in PUSH_TYPES:
            return self._refuse(f"apns-push-type {headers.get('apns-push-type')}", 400, "InvalidPushType", token)
        try:
            payload = json.loads(body)
            assert isinstance(payload.get("aps"), dict)
        except (ValueError, AssertionError, AttributeError):
            return self._refuse("payload", 400, "PayloadEmpty", token)
        with self.lock:
            hold = self.holds.get(token, 0)
            gone = token in self.gone
            failing = token in self.failing
            if not gone and not failing:
                # Recorded when received, as a phone would show it even if the answer is lost.
                self.accepted.append((token, headers, payload))
        if hold:
            time.sleep(hold)
        status = 410 if gone else 503 if failing else 200
        with self.lock:
            self.tried.append((token, status))
        if gone:
            return 410, {"reason": "Unregistered", "timestamp": int(time.time() * 1000)}
        if failing:
            return 503, {"reason": "ServiceUnavailable"}
        return 200, None

    def stop(self):
        if self.sock:
            self.sock.close()


# --- FCM ----------------------------------------------------------------------------------------


class FCMStandin(_Recorder):
    def __init__(self, access_token_seconds=3600):
        super().__init__()
        self.accounts = {}          # client email -> (public key, project id)
        self.tokens = {}            # access token -> (expires at, project id)
        self.token_grants = 0
        self.refusals = []
        self.access_token_seconds = access_token_seconds
        self.server = None

    def service_account(self, project_id):
        """A fresh service-account key file's JSON (what the app uploads)."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        email = f"push-{secrets.token_hex(4)}@{project_id}.iam.gserviceaccount.com"
        with self.lock:
            self.accounts[email] = (key.public_key(), project_id)
        return json.dumps({
            "type": "service_account", "project_id": project_id, "private_key_id": secrets.token_hex(20),
            "private_key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()).decode(),
            "client_email": email, "client_id": str(secrets.randbelow(10**20)),
            # Deliberately not this stand-in: the worker must use its configured token URL.
            "token_uri": "https://oauth2.googleapis.com/token",
        })

    def start(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, body):
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path == "/token":
                    self._send(*standin._grant(self.headers, body))
                elif self.path.startswith("/v1/projects/") and self.path.endswith("/messages:send"):
                    project = self.path[len("/v1/projects/"):-len("/messages:send")]
                    self._send(*standin._message(project, self.headers, body))
                else:
                    self._send(404, {"error": {"code": 404, "status": "NOT_FOUND"}})

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://{HOST}:{self.server.server_address[1]}"

    @property
    def token_url(self):
        return self.url + "/token"

    def _oauth_error(self, why):
        with self.lock:
            self.refusals.append(why)
        return 400, {"error": "invalid_grant", "error_description": why}

    def _grant(self, headers, body):
        if not headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            return self._oauth_error("not a form")
        form = urllib.parse.parse_qs(body.decode(), strict_parsing=True)
        if form.get("grant_type") != [JWT_BEARER]:
            return self._oauth_error(f"grant_type {form.get('grant_type')}")
        try:
            jwt_header, claims, signing_input, signature = _split_jwt(form["assertion"][0])
        except (KeyError, ValueError, json.JSONDecodeError):
            return self._oauth_error("assertion unreadable")
        with self.lock:
            account = self.accounts.get(claims.get("iss"))
        if jwt_header.get("alg") != "RS256" or account is None:
            return self._oauth_error(f"alg {jwt_header.get('alg')} / iss {claims.get('iss')}")
        try:
            account[0].verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            return self._oauth_error("bad signature")
        now = time.time()
        if claims.get("aud") != self.token_url:
            return self._oauth_error(f"aud {claims.get('aud')}")
        if FCM_SCOPE not in str(claims.get("scope", "")).split():
            return self._oauth_error(f"scope {claims.get('scope')}")
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, (int, float)) or not isinstance(exp, (int, float)) \
                or iat > now + 60 or exp <= now or exp - iat > 3600:
            return self._oauth_error(f"iat {iat} exp {exp}")
        token = "ya29." + secrets.token_urlsafe(24)
        with self.lock:
            self.tokens[token] = (now + self.access_token_seconds, account[1])
            self.token_grants += 1
        return 200, {"access_token": token, "expires_in": self.access_token_seconds, "token_type": "Bearer"}

    def _message(self, project, headers, body):
        auth = headers.get("Authorization", "")
        with self.lock:
            grant = self.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
        if grant is None or grant[0] <= time.time() or grant[1] != project:
            with self.lock:
                self.refusals.append("access token")
            return 401, {"error": {"code": 401, "status": "UNAUTHENTICATED"}}
        try:
            message = json.loads(body)["message"]
            token = message["token"]
            assert isinstance(message.get("notification"), dict)
        except (ValueError, KeyError, TypeError, AssertionError):
            return 400, {"error": {"code": 400, "status": "INVALID_ARGUMENT"}}
        with self.lock:
            gone, failing = token in self.gone, token in self.failing
            status = 404 if gone else 503 if failing else 200
            self.tried.append((token, status))
            if status == 200:
                self.accepted.append((token, dict(headers), message))
        if gone:
            return 404, {"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND",
                                   "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                                                "errorCode": "UNREGISTERED"}]}}
        if failing:
            return 503, {"error": {"code": 503, "status": "UNAVAILABLE"}}
        return 200, {"name": f"projects/{project}/messages/{secrets.token_hex(8)}"}

    def stop(self):
        if self.server:
            self.server.shutdown()
