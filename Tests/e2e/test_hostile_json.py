"""Hostile JSON: bodies just under the 64 KiB cap built to make a parser
work hard (nesting as deep as the bytes allow, long runs of escapes, thousands of keys or
numbers, a defect only at the very end) are answered at once by the gateway: 400
`auth/invalid-json` when the strict parser refuses them (depth past 32, a repeated key, bad
JSON), 422 when they are JSON but not the body the route wants. `/healthz`, polled meanwhile,
stays fast. The provider worker reads id-token headers and payloads with the same parser.

Every request carries its own `X-Forwarded-For` (198.51.100.0/24, TEST-NET-2), so per-IP rate
limits, where a trusted proxy's header is honoured, never see two of these from one address.
"""

import itertools
import json
import threading
import time

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from identity_client import PASSWORD, assert_problem, unique_email
from jwt_tools import b64url_encode

CAP = 64 * 1024
SIZE = CAP - 32  # each body stays just under the cap
ANSWER_WITHIN = 0.100
HEALTHZ_WITHIN = 0.200
ROUTES = ("/v1/auth/sign-in", "/v1/auth/sign-up")

_addresses = itertools.count()


def _forwarded_for():
    return {"X-Forwarded-For": f"198.51.100.{next(_addresses) % 254 + 1}"}


def _nested(depth, open_, close, inner=b""):
    return open_ * depth + inner + close * depth


def _members(count=None, size=SIZE, value=lambda i: str(i).encode()):
    """`"k0":0,"k1":1,…`: `count` members, or as many as fit in `size` bytes."""
    members, length = [], 0
    for i in itertools.count():
        if count is not None and i == count:
            break
        member = b'"k%d":%s' % (i, value(i))
        if count is None and length + len(member) + 1 > size:
            break
        members.append(member)
        length += len(member) + 1
    return members


def _numbers(size=SIZE, text=lambda i: str(i % 1000).encode()):
    out, length = [], 2
    for i in itertools.count():
        item = text(i)
        if length + len(item) + 1 > size:
            return out
        out.append(item)
        length += len(item) + 1


def _string_of(escape, field=b"first_name", size=SIZE, tail=b""):
    room = size - len(field) - len(tail) - 8
    return b'{"' + field + b'":"' + escape * (room // len(escape)) + tail + b'"}'


_DEEP_SIBLING = _nested(31, b"[", b"]")           # depth 32 inside the outer array: legal
_DEEPER_SIBLING = _nested(510, b"[", b"]")        # 64 of these cost the old parser ~94 s of CPU

# Refused by the strict parser: 400 auth/invalid-json.
INVALID_JSON = {
    "deep-arrays": _nested(SIZE // 2, b"[", b"]"),
    "deep-objects": _nested(SIZE // 6, b'{"a":', b"}", b"1"),
    "deep-mixed": _nested(SIZE // 8, b'[{"a":', b"}]", b"1"),
    "deep-invalid-at-end": b"[" * (SIZE // 2) + b"]" * (SIZE // 2 - 1) + b"}",
    "many-511-deep-arrays": b"[" + b",".join([_DEEPER_SIBLING] * (SIZE // 1021)) + b"]",
    "depth-33-arrays": _nested(33, b"[", b"]"),
    "depth-33-objects": _nested(33, b'{"a":', b"}", b"1"),
    "32-deep-siblings-invalid-at-end":
        b"[" + b",".join([_DEEP_SIBLING] * (SIZE // 63)) + b"}",
    "duplicate-email":
        b'{"email":"a@example.com","email":"b@example.com","password":"%s"}' % PASSWORD.encode(),
    "many-keys-duplicate-at-end": b"{" + b",".join(_members(size=SIZE - 16) + [b'"k0":0']) + b"}",
    "escapes-then-raw-control": _string_of(b"\\u0000", tail=b"\x01"),
    "huge-number": b'{"a":' + b"7" * (SIZE - 8) + b"}",
    "many-numbers-trailing-comma": b"[" + b",".join(_numbers(SIZE - 4)) + b",]",
    "many-numbers-leading-zero-at-end": b"[" + b",".join(_numbers(SIZE - 4)) + b",01]",
}

# JSON, but not a body these routes take: 422 auth/validation-failed.
VALID_BUT_WRONG = {
    "depth-32-objects": _nested(32, b'{"a":', b"}", b"1"),
    "32-deep-siblings": b'{"a":[' + b",".join([_nested(30, b"[", b"]")] * (SIZE // 61)) + b"]}",
    "nul-escapes": _string_of(b"\\u0000"),
    "quote-escapes": _string_of(b'\\"'),
    "surrogate-pair-escapes": _string_of(b"\\ud83d\\ude00"),
    # Well-formed JSON, but a string that is not text: refused as a field is.
    "escapes-lone-surrogate-at-end": _string_of(b"\\ud83d\\ude00", tail=b"\\ud83d"),
    "invalid-utf8-after-escapes": _string_of(b'\\"', tail=b"\xed\xa0\x80"),
    "many-distinct-keys": b"{" + b",".join(_members()) + b"}",
    "many-small-numbers": b"[" + b",".join(_numbers()) + b"]",
    "many-floats": b"[" + b",".join(_numbers(text=lambda i: b"1.5e%d" % (i % 300))) + b"]",
    "many-small-objects": b"[" + b",".join(_numbers(text=lambda i: b'{"a":1}')) + b"]",
}


def test_bodies_are_what_they_claim():
    for name, body in {**INVALID_JSON, **VALID_BUT_WRONG}.items():
        assert len(body) < CAP, (name, len(body))
    assert len(INVALID_JSON["deep-arrays"]) > CAP - 64
    assert len(_members()) > 5000
    assert len(_numbers()) > 10_000


def _post(client, app, path, body):
    return client.post(path, data=body, app_key=app["app_key"], content_type="application/json",
                       headers=_forwarded_for())


@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize("name", list(INVALID_JSON))
def test_hostile_body_is_400_invalid_json_at_once(client, app, path, name):
    resp = _post(client, app, path, INVALID_JSON[name])
    assert_problem(resp, 400, "auth/invalid-json")
    assert resp.elapsed < ANSWER_WITHIN, f"{name}: {resp.elapsed * 1000:.1f} ms"


@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize("name", list(VALID_BUT_WRONG))
def test_hostile_but_valid_body_is_422_at_once(client, app, path, name):
    resp = _post(client, app, path, VALID_BUT_WRONG[name])
    assert_problem(resp, 422, "auth/validation-failed")
    assert resp.elapsed < ANSWER_WITHIN, f"{name}: {resp.elapsed * 1000:.1f} ms"


def test_duplicate_key_cannot_smuggle_a_second_value(client, app):
    # Whichever of two emails a layer would keep, none is kept: the body is refused whole,
    # and the account behind the first spelling is not made.
    email = unique_email("dup")
    body = ('{"email":"%s","password":"%s","email":"%s"}'
            % (email, PASSWORD, unique_email("other"))).encode()
    assert_problem(_post(client, app, "/v1/auth/sign-up", body), 400, "auth/invalid-json")
    created = client.sign_up(app, email=email, headers=_forwarded_for())
    assert created.status == 201, created


def test_healthz_stays_fast_while_hostile_bodies_arrive(client, app):
    timings, errors, done = [], [], threading.Event()

    def poll():
        while not done.is_set():
            try:
                resp = client.get("/healthz", timeout=5)
                timings.append((resp.status, resp.elapsed))
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(repr(exc))
            time.sleep(0.005)

    bodies = list(INVALID_JSON.values()) + list(VALID_BUT_WRONG.values())
    answers = []

    def send(share):
        for body in share:
            for path in ROUTES:
                answers.append(_post(client, app, path, body).status)

    poller = threading.Thread(target=poll, daemon=True)
    senders = [threading.Thread(target=send, args=(bodies[i::2],), daemon=True) for i in range(2)]
    poller.start()
    started = time.monotonic()
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(timeout=60)
    elapsed = time.monotonic() - started
    done.set()
    poller.join(timeout=10)

    assert not errors, errors[:5]
    assert sorted(set(answers)) == [400, 422], answers
    assert len(answers) == 2 * len(bodies)
    assert len(timings) >= 5, (timings, elapsed)
    assert all(status == 200 for status, _ in timings), timings
    slowest = max(seconds for _, seconds in timings)
    assert slowest < HEALTHZ_WITHIN, f"slowest /healthz {slowest * 1000:.1f} ms of {len(timings)}"


# --- the provider worker: id-token headers and payloads -----------------------------------


def _google_token(providers, header, payload):
    """A token from raw header and payload bytes (json.dumps cannot repeat a key), signed with
    the stand-in's current Google key."""
    head, body = b64url_encode(header), b64url_encode(payload)
    signing_input = f"{head}.{body}".encode("ascii")
    key = providers.private_key("google")
    return f"{head}.{body}.{b64url_encode(key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256()))}"


def _google_payload(providers, *, sub, extra=b""):
    claims = providers.google_claims(sub=sub)
    members = b",".join(b'"%s":%s' % (k.encode(), json.dumps(v, separators=(",", ":")).encode())
                        for k, v in claims.items())
    return b"{" + members + extra + b"}"


def test_hostile_id_token_headers_and_payloads_are_refused(client, providers, provider_app):
    kid = providers.current_kid("google").encode()
    good_header = b'{"alg":"RS256","typ":"JWT","kid":"%s"}' % kid
    sub = f"g-hostile-{int(time.time() * 1000)}"
    hostile = {
        # Read before the signature is checked: anyone can send these.
        "header-repeats-alg": (b'{"alg":"none","alg":"RS256","kid":"%s"}' % kid,
                               _google_payload(providers, sub=sub)),
        "header-deep": (b'{"alg":"RS256","kid":"%s","x":%s}' % (kid, _nested(4000, b"[", b"]")),
                        _google_payload(providers, sub=sub)),
        "header-depth-33": (b'{"alg":"RS256","kid":"%s","x":%s}' % (kid, _nested(32, b"[", b"]")),
                            _google_payload(providers, sub=sub)),
        # Signed by the provider's key, and still refused: two `sub`s (which user?) or too deep.
        "payload-repeats-sub": (good_header,
                                _google_payload(providers, sub=sub, extra=b',"sub":"someone-else"')),
        "payload-deep": (good_header,
                         _google_payload(providers, sub=sub, extra=b',"x":' + _nested(40, b"[", b"]"))),
    }
    for name, (header, payload) in hostile.items():
        token = _google_token(providers, header, payload)
        assert len(token) < 16_384, (name, len(token))
        resp = client.google_sign_in(provider_app, id_token=token, headers=_forwarded_for())
        assert_problem(resp, 401, "auth/invalid-google-token")
        assert resp.elapsed < 1.0, f"{name}: {resp.elapsed * 1000:.1f} ms"
    # The same hand-made token without the defect signs in, as the first sign-in of `sub`:
    # the refusals above were the defects', and made no account.
    token = _google_token(providers, good_header, _google_payload(providers, sub=sub))
    resp = client.google_sign_in(provider_app, id_token=token, headers=_forwarded_for())
    assert resp.status == 200, resp
    assert resp.data["is_new_user"] is True, resp.data
