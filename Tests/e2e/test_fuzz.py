"""Schemathesis against the running stack: every operation of the served OpenAPI document, with
an app key (every rate limit off) and a signed-in user's token, for a bounded number of examples
per operation and a fixed seed (the same requests on every run).

Besides schemathesis's own checks (no 5xx, documented statuses, content types, headers and
response schemas, invalid input refused, required headers and auth enforced), every 4xx must be
problem+json whose `code` is one the document lists for that status (`x-error-codes`), and
schema-valid input must never be refused for its shape. What the fuzzer found is kept below as
plain regression cases (the failing request, as sent)."""

import json
import os
import random
import string
import uuid

import jsonschema_rs  # comes with schemathesis
import pytest
import schemathesis
from schemathesis.specs.openapi.checks import is_unexpected_http_status_case, positive_data_acceptance

from identity_client import PASSWORD

# Fixed, so a run is repeatable and a failure's request can be replayed. To explore further:
# IDENTITY_FUZZ_SEED=<any integer> IDENTITY_FUZZ_EXAMPLES=<n> python3 -m pytest Tests/e2e/test_fuzz.py
SEED = int(os.environ.get("IDENTITY_FUZZ_SEED") or 20261201)
# Hypothesis examples per operation in the fuzzing phase (the coverage phase adds its own,
# bounded by the schema).
MAX_EXAMPLES = int(os.environ.get("IDENTITY_FUZZ_EXAMPLES") or 50)

# Operations that end the caller's session (or all of the user's): each call gets a fresh user,
# so the shared token stays live for everything else.
SESSION_ENDING = {("POST", "/v1/auth/sign-out"), ("POST", "/v1/auth/sign-out-all")}

# A 422 that schema-valid input may still get: what a JSON Schema cannot say (a very common
# password, an address the service cannot mail, a provider the app has not set up); see also
# _refusal_no_schema_can_express.
SEMANTIC_422 = {"auth/weak-password", "auth/invalid-email", "auth/provider-not-configured",
                "auth/passkey-not-configured",
                # A phone number's possible lengths per country (libphonenumber's table).
                "auth/invalid-phone-number"}


@pytest.fixture
def fuzz_app(stack, configured_app_factory):
    """An app with Apple, Google and Firebase set up against the stand-in and every rate limit
    off (the names are those `apps settings` prints), so the fuzzer meets the flows rather than
    429s."""
    app = configured_app_factory(rate_limits={"sign_in_per_ip": "off"})
    names = sorted(app["settings"]["rate_limits"])
    app["settings"] = stack.configure_app(app["app_id"], **stack.provider_settings(),
                                          webauthn_rp_id="fuzz.example.test",
                                          webauthn_origins=["https://fuzz.example.test"],
                                          rate_limits={name: "off" for name in names})
    assert set(app["settings"]["rate_limits"].values()) == {"off"}, app["settings"]["rate_limits"]
    return app


def _signed_up(client, app):
    email = f"fuzz-{uuid.uuid4().hex[:12]}@example.com"
    resp = client.sign_up(app, email=email, password=PASSWORD)
    assert resp.status == 201, resp
    return resp.data["access_token"]


@pytest.fixture
def fuzz_token(client, fuzz_app):
    return _signed_up(client, fuzz_app)


@pytest.fixture
def api_schema(stack, fuzz_app, fuzz_token):
    config = schemathesis.Config.from_dict({
        "seed": SEED,
        "base-url": stack.base_url,
        "headers": {"X-App-Key": fuzz_app["app_key"], "Authorization": f"Bearer {fuzz_token}"},
        # The admin API, introspection and revocation take the app's secret key instead; not the secret-key
        # rotation or the settings, which would retire the key or change the app (limits,
        # providers) under the operations after them.
        "operations": [{"include-path-regex": "^/v1/(admin/(users|audit)|token/(introspect|revoke))",
                        "headers": {"X-App-Key": fuzz_app["app_key"], "Authorization": f"Bearer {fuzz_app['secret_key']}"}}],
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none", "allow-x00": False},
        # Replaced by `schema_valid_input_accepted`, which knows the service's semantic 422s.
        "checks": {"positive_data_acceptance": {"enabled": False},
                   # A body over 64 KiB is refused before it is read.
                   "negative_data_rejection": {"expected-statuses": [
                       "400", "401", "403", "404", "405", "409", "413", "415", "422", "429"]}},
        # Test credentials only: show failing requests as sent, so they can be kept as cases.
        "output": {"sanitization": {"enabled": False}},
    })
    return schemathesis.openapi.from_url(stack.base_url + "/api/docs/openapi.json", config=config)


def _problem(response):
    content_type = (response.headers.get("content-type") or [""])[0].split(";")[0].strip()
    assert content_type == "application/problem+json", (
        f"{response.status_code} answered with Content-Type {content_type!r}, not application/problem+json")
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"{response.status_code} problem body is not JSON: {response.content[:300]!r}")
    assert isinstance(body, dict) and isinstance(body.get("code"), str), f"problem without a code: {body!r}"
    assert body.get("status") == response.status_code, f"problem status {body.get('status')} on a {response.status_code}"
    return body


@schemathesis.check
def problem_with_documented_code(ctx, response, case):
    """Every 4xx is problem+json whose code the document lists for this operation and status (a
    method the path does not serve: 405 auth/method-not-allowed)."""
    if not 400 <= response.status_code < 500:
        return None
    answer = case.operation.definition.raw.get("responses", {}).get(str(response.status_code), {})
    if case.method.upper() == case.operation.method.upper() and "x-oauth-errors" in answer:
        # An OAuth client endpoint's refused client: RFC 6749's error object, not a problem.
        body = json.loads(response.content)
        assert body.get("error") in answer["x-oauth-errors"], f"{response.status_code} {body!r}"
        assert (response.headers.get("www-authenticate") or [""])[0].startswith("Basic "), response.headers
        return None
    body = _problem(response)
    if case.method.upper() != case.operation.method.upper():
        documented = ["auth/method-not-allowed"] if response.status_code == 405 else []
    else:
        answer = case.operation.definition.raw.get("responses", {}).get(str(response.status_code), {})
        documented = answer.get("x-error-codes", [])
    assert body["code"] in documented, (
        f"{response.status_code} {body['code']} is not among the codes documented for "
        f"{case.method.upper()} {case.path} {response.status_code}: {documented}")
    return None


def _refusal_no_schema_can_express(case, problem):
    """A 422 for schema-valid input that is still right: what a JSON Schema cannot say."""
    if problem["code"] in SEMANTIC_422:
        return True
    errors = problem.get("errors") or []
    operation = (case.method.upper(), case.operation.path)
    if operation == ("POST", "/v1/me/identities/{provider}"):
        # It takes that provider's sign-in body, which a schema cannot tie to the path: an Apple
        # body sent to /google (or the reverse) lacks a field.
        required = {"apple": {"body.identity_token", "body.nonce"}, "google": {"body.id_token"}}
        missing = {error["location"] for error in errors}
        return bool(missing) and missing <= required.get((case.path_parameters or {}).get("provider"), set())
    if operation in (("POST", "/v1/me/mfa/email"), ("POST", "/v1/me/mfa/sms"), ("POST", "/v1/me/mfa/totp")):
        # The account's state, not the input: the email factor needs a verified address, the
        # SMS factor a verified phone, and a guest cannot turn MFA on.
        return [e["location"] for e in errors] in (["email"], ["phone"], ["body"])
    if operation == ("POST", "/v1/auth/guest"):
        # A secret that does not look random (FieldRules.guestSecret), as its description says.
        return [e["location"] for e in errors] == ["body.secret"] and errors[0]["message"].startswith("must be random")
    return False


@schemathesis.check
def schema_valid_input_accepted(ctx, response, case):
    """Schema-valid input is never refused for its shape: no 400, 413 or 415, and a 422 only
    for what a schema cannot express (SEMANTIC_422)."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or is_unexpected_http_status_case(case) \
            or case.method.upper() != case.operation.method.upper():
        return None
    if response.status_code in (400, 413, 415):
        raise AssertionError(f"schema-valid request refused with {response.status_code}")
    if response.status_code == 422:
        problem = _problem(response)
        if not _refusal_no_schema_can_express(case, problem):
            raise AssertionError(f"schema-valid request refused with 422 {problem['code']}: {response.content[:500]!r}")
    return None


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
def test_fuzz(case, client, fuzz_app, fuzz_token):
    if (case.method.upper(), case.operation.path) in SESSION_ENDING \
            and case.headers and case.headers.get("Authorization") == f"Bearer {fuzz_token}":
        case.headers["Authorization"] = f"Bearer {_signed_up(client, fuzz_app)}"
    case.call_and_validate(additional_checks=[problem_with_documented_code, schema_valid_input_accepted],
                           excluded_checks=[positive_data_acceptance])


# --- Regression cases: what the fuzzer (seed 20261201 unless noted) found, replayed as the
# exact request it sent, through the same checks, with what the answer must now be. ---------

@pytest.fixture
def plain_schema(stack):
    """The served document without configured credentials: each case sends its own headers."""
    config = schemathesis.Config.from_dict({"base-url": stack.base_url,
                                            "output": {"sanitization": {"enabled": False}}})
    return schemathesis.openapi.from_url(stack.base_url + "/api/docs/openapi.json", config=config)


def _replay(schema, method, path, expect_status, expect_code=None, **case):
    """Sends one explicit case through every check the fuzz run applies and returns the answer,
    asserting its status (and problem code)."""
    operation = schema[path][method]
    response = operation.Case(**case).call_and_validate(
        additional_checks=[problem_with_documented_code], excluded_checks=[positive_data_acceptance])
    assert response.status_code == expect_status, (response.status_code, response.text[:500])
    if expect_code is not None:
        assert response.json()["code"] == expect_code, response.text[:500]
    return response


def _body_operations(schema):
    return [(op.method.upper(), op.path) for op in (r.ok() for r in schema.get_all_operations())
            if op.definition.raw.get("requestBody", {}).get("required")]


def _bearer_operations(schema):
    return [(op.method.upper(), op.path) for op in (r.ok() for r in schema.get_all_operations())
            if all("bearer" in requirement for requirement in op.definition.raw.get("security", [{}]))
            and op.definition.raw.get("security")]


def test_fuzz_regression_error_answers_are_documented(plain_schema, fuzz_app):
    """Found: 18 operations answered statuses their entry did not list, e.g. `POST
    /v1/auth/apple` with no body → 415 (documented: 200, 401, 409, 422, 429, 503) and `DELETE
    /v1/me` without a token → 401 (documented: 204, 403, 429). Every error answer is now
    generated from the route table; the first failing request of each kind, for every
    operation it applies to."""
    key = {"X-App-Key": fuzz_app["app_key"]}
    body_operations = _body_operations(plain_schema)
    assert len(body_operations) >= 17, body_operations
    for method, path in body_operations:
        params = {name: ("google" if name == "provider" else fuzz_app["app_id"] if name == "app_id"
                         else "before_token" if name == "kind" else "0")
                  for name in ("provider", "uid", "session_id", "id", "app_id", "webhook_id", "kind")
                  if "{" + name + "}" in path} or None
        # Introspection and revocation read their body (form or JSON) only once the secret key is known.
        headers = dict(key, Authorization=f"Bearer {fuzz_app['secret_key']}") \
            if path in ("/v1/token/introspect", "/v1/token/revoke") else dict(key)
        _replay(plain_schema, method, path, 415, "auth/unsupported-media-type", headers=headers,
                path_parameters=params)
    bearer_operations = _bearer_operations(plain_schema)
    assert len(bearer_operations) >= 14, bearer_operations
    for method, path in bearer_operations:
        params = {name: ("google" if name == "provider" else "0") for name in ("id", "provider") if "{" + name + "}" in path}
        body = {"current_password": PASSWORD, "new_password": PASSWORD} if path == "/v1/me/password" else (
            {"id_token": "x"} if path.startswith("/v1/me/identities") and method == "POST" else (
                {"token": "t", "platform": "ios", "kind": "apns"} if path == "/v1/me/devices" and method == "POST" else (
                    {"response": {}} if path == "/v1/me/passkeys" and method == "POST" else (
                        {"first_name": "x"} if method == "PATCH" else (
                            {"code": "x"} if path.startswith("/v1/me/mfa") and (method == "DELETE" or path.endswith("/confirm"))
                            else ({"phone": "+33612345678"} if path == "/v1/me/phone" else (
                                {"session_id": "x", "code": "x"} if path == "/v1/me/phone/verify" else (
                                    {"email": "new@example.test"} if path == "/v1/me/email/change" else (
                                        {"code": "x"} if path == "/v1/me/email/change/confirm" else None)))))))))
        kwargs = {"body": body, "media_type": "application/json"} if body is not None else {}
        _replay(plain_schema, method, path, 401, "auth/invalid-token", headers=dict(key),
                path_parameters=params or None, **kwargs)


def test_fuzz_regression_sign_in_schema_requires_email_or_identifier(plain_schema, fuzz_app):
    """Found: `{"password": …}` was valid for the document but answered 422 (no email or
    identifier). The schema now requires one of them; the service's answer is unchanged."""
    schema = plain_schema.raw_schema
    validator = jsonschema_rs.validator_for({**schema, "$ref": "#/components/schemas/SignInRequest"})
    assert not validator.is_valid({"password": PASSWORD})
    assert validator.is_valid({"identifier": "jane", "password": PASSWORD})
    resp = _replay(plain_schema, "POST", "/v1/auth/sign-in", 422, "auth/validation-failed",
                   headers={"X-App-Key": fuzz_app["app_key"]}, body={"password": PASSWORD},
                   media_type="application/json")
    assert [e["location"] for e in resp.json()["errors"]] == ["body.identifier"]


def test_fuzz_regression_semantic_refusals_of_schema_valid_input(plain_schema, fuzz_app, fuzz_token):
    """Found: schema-valid input refused with 422 for what no schema says: a very common
    password (`{"email": "0@0.com", "password": "00000000", …}`), a NUL character (the service
    refuses NUL in any string, as the document's description says; the fuzz run generates none),
    and a link body of the other provider. Each answer is documented; only these are accepted
    for schema-valid input."""
    key = {"X-App-Key": fuzz_app["app_key"]}
    _replay(plain_schema, "POST", "/v1/auth/sign-up", 422, "auth/weak-password", headers=dict(key),
            body={"email": "0@0.com", "first_name": "", "last_name": "", "password": "00000000", "username": None},
            media_type="application/json")
    resp = _replay(plain_schema, "POST", "/v1/auth/google", 422, "auth/validation-failed", headers=dict(key),
                   body={"id_token": "x", "nonce": "\u0000"}, media_type="application/json")
    assert resp.json()["errors"] == [{"location": "body.nonce", "message": "must not contain NUL characters"}]
    resp = _replay(plain_schema, "POST", "/v1/me/identities/{provider}", 422, "auth/validation-failed",
                   headers={**key, "Authorization": f"Bearer {fuzz_token}"}, path_parameters={"provider": "apple"},
                   body={"first_name": "", "id_token": "", "last_name": "", "nonce": ""}, media_type="application/json")
    assert [e["location"] for e in resp.json()["errors"]] == ["body.identity_token"]


def test_fuzz_regression_oversized_body_is_refused_with_413(plain_schema, fuzz_app, fuzz_token):
    """Found: `DELETE /v1/me` with a body over 64 KiB (an `id_token` past its maxLength) is
    refused with 413 before it is read; 413 counts as refusing invalid input."""
    _replay(plain_schema, "DELETE", "/v1/me", 413, "auth/payload-too-large",
            headers={"X-App-Key": fuzz_app["app_key"], "Authorization": f"Bearer {fuzz_token}"},
            body={"id_token": "x" * (70 * 1024)}, media_type="application/json")


def test_fuzz_regression_long_push_token(plain_schema, fuzz_app, fuzz_token):
    """Found probing the document's limits: a device token of 2,800 random characters
    (documented maximum 4096) answered 500: the unique index on (app_id, token) holds about
    2,650 bytes. Tokens are now at most 512 characters (2,048 bytes)."""
    headers = {"X-App-Key": fuzz_app["app_key"], "Authorization": f"Bearer {fuzz_token}"}
    rng = random.Random(SEED)
    alphabet = string.ascii_letters + string.digits + "-_:"
    for length, status in ((2800, 422), (513, 422), (512, 201)):
        token = "".join(rng.choice(alphabet) for _ in range(length))
        _replay(plain_schema, "POST", "/v1/me/devices", status, None if status == 201 else "auth/validation-failed",
                headers=dict(headers), body={"token": token, "platform": "web", "kind": "fcm"},
                media_type="application/json")
    # Four-byte characters at the limit still fit the index.
    _replay(plain_schema, "POST", "/v1/me/devices", 201, headers=dict(headers),
            body={"token": "\U0001F600" * 512, "platform": "ios", "kind": "apns"}, media_type="application/json")


def test_fuzz_regression_lengths_count_characters_as_the_document_does(plain_schema, fuzz_app, fuzz_token):
    """Found probing the document's limits: lengths were counted in grapheme clusters, the
    document's in characters (JSON Schema: Unicode scalars), so 120 characters ("e" + U+0301,
    60 times) passed as a first name of at most 100, and a password of 8 characters (4 accented
    letters) was refused as under 8."""
    headers = {"X-App-Key": fuzz_app["app_key"], "Authorization": f"Bearer {fuzz_token}"}
    accent = "e\u0301"
    _replay(plain_schema, "PATCH", "/v1/me", 422, "auth/validation-failed", headers=dict(headers),
            body={"first_name": accent * 51}, media_type="application/json")
    resp = _replay(plain_schema, "PATCH", "/v1/me", 200, headers=dict(headers),
                   body={"first_name": accent * 50}, media_type="application/json")
    assert resp.json()["data"]["first_name"] == accent * 50
    _replay(plain_schema, "POST", "/v1/auth/sign-up", 201, headers={"X-App-Key": fuzz_app["app_key"]},
            body={"email": f"accent-{uuid.uuid4().hex[:8]}@example.com", "password": accent * 4},
            media_type="application/json")
    _replay(plain_schema, "POST", "/v1/me/devices", 422, "auth/validation-failed", headers=dict(headers),
            body={"token": "t", "platform": "ios", "kind": "apns", "device_name": accent * 51},
            media_type="application/json")
