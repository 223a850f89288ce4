"""GET /v1/auth/nonce: a single-use, 5-minute nonce for Sign in with Apple, stored as a hash.
(How sign-in spends it is in test_apple.py.)"""

import datetime

import db_tools
from identity_client import TIMESTAMP_RE, assert_problem


def _parse(timestamp):
    return datetime.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc)


def test_nonce_is_issued_for_five_minutes(client, app):
    before = datetime.datetime.now(datetime.timezone.utc)
    resp = client.auth_nonce(app)
    after = datetime.datetime.now(datetime.timezone.utc)
    assert resp.status == 200, resp
    assert resp.header("Content-Type").split(";")[0].strip() == "application/json"
    data = resp.data
    assert isinstance(data.get("nonce"), str), data
    # At least 128 bits of randomness in any sane encoding, and nothing a client would have to
    # escape before hashing it into an Apple request.
    assert len(data["nonce"]) >= 16, data
    assert data["nonce"].isascii() and data["nonce"].isprintable() and " " not in data["nonce"], data
    assert TIMESTAMP_RE.match(data["expires_at"]), data
    expires = _parse(data["expires_at"])
    ahead = datetime.timedelta(minutes=5)
    slack = datetime.timedelta(seconds=30)
    assert before + ahead - slack <= expires <= after + ahead + slack, (before, data["expires_at"])


def test_every_nonce_is_different(client, app, other_app):
    nonces = [client.new_nonce(app) for _ in range(15)] + [client.new_nonce(other_app)
                                                           for _ in range(5)]
    assert len(set(nonces)) == len(nonces), nonces


def test_nonce_is_stored_as_its_sha256_only(client, app):
    nonce = client.new_nonce(app)
    sha = f"sha256(convert_to({db_tools.literal(nonce)}, 'UTF8'))"
    assert db_tools.value(f"select count(*) from auth_nonces where nonce_hash = {sha}") == "1"
    # The raw nonce is in no column of its row (the row is found through its hash).
    row = db_tools.value(f"select row_to_json(n)::text from auth_nonces n where nonce_hash = {sha}")
    assert nonce not in row, row


def test_nonce_needs_an_app_key(client, app):
    assert_problem(client.get("/v1/auth/nonce"), 401, "auth/invalid-app-key")
    assert_problem(client.get("/v1/auth/nonce", app_key="ak_doesnotexist"), 401,
                   "auth/invalid-app-key")

