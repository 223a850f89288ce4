"""POST/GET /graphql (docs/client-profiles.md, "GraphQL") against the real gateway
and workers. graphql-core is the oracle: the SDL we print parses and equals the schema built
from our introspection, the shipped clients' operations validate against it and run end to end, and
documents graphql-core finds invalid are refused by us too."""

import json
import time

import uuid

import pytest
from graphql import (build_client_schema, build_schema, get_introspection_query, lexicographic_sort_schema, parse,
                     print_schema, validate)

from identity_client import PASSWORD, unique_email, unique_push_token, unique_username

# Seed 003's operations, as its clients send them (the guide's text).
REGISTER = """mutation Register($input: UserRegistrationInput!) {
  register(input: $input) {
    user { id username email isEmailVerified }
    token
  }
}"""
LOGIN = """mutation Login($input: UserLoginInput!) {
  login(input: $input) {
    user { id username }
    token
  }
}"""
LOGIN_WITH_APPLE = """mutation LoginWithApple(
  $identityToken: String!
  $authorizationCode: String!
  $email: String
  $firstName: String
  $lastName: String
) {
  loginWithApple(
    identityToken: $identityToken
    authorizationCode: $authorizationCode
    email: $email
    firstName: $firstName
    lastName: $lastName
  ) {
    user { id username }
    token
  }
}"""
LOGIN_WITH_ID_TOKEN = """mutation LoginWithIdToken(
  $idToken: String!
  $email: String
  $displayName: String
  $photoURL: String
) {
  loginWithIdToken(idToken: $idToken, email: $email, displayName: $displayName, photoURL: $photoURL) {
    user { id username }
    token
  }
}"""
LOGIN_WITH_FIREBASE = LOGIN_WITH_ID_TOKEN.replace("LoginWithIdToken", "LoginWithFirebase").replace(
    "loginWithIdToken", "loginWithFirebase")
REQUEST_OTP = """mutation RequestOTP {
  requestPhoneOtp(phone: "5512345678", countryCode: "+52") {
    success sessionId expiresIn
  }
}"""
LOGIN_WITH_PHONE = """mutation LoginWithPhone($input: PhoneLoginInput!) {
  loginWithPhone(input: $input) {
    user { id username }
    token
  }
}"""
REQUEST_RESET = 'mutation RequestReset { requestPasswordReset(email: "[email protected]") { success } }'
RESET_PASSWORD = 'mutation ResetPassword { resetPassword(token: "...", newPassword: "...") { success } }'
CHANGE_PASSWORD = ('mutation ChangePassword { changePassword(input: { currentPassword: "...", newPassword: "..." })'
                   ' { success } }')
VERIFY_RESET_TOKEN = 'query VerifyResetToken { verifyResetToken(token: "...") { valid message } }'
PASSKEY_OPTIONS = """mutation GeneratePasskeyAuthOptions($identifier: String) {
  generatePasskeyAuthenticationOptions(identifier: $identifier) {
    flowId
    options
    hasPasskeys
  }
}"""
PASSKEY_VERIFY = """mutation VerifyPasskeyAuth($flowId: String!, $response: JSON!) {
  verifyPasskeyAuthentication(flowId: $flowId, response: $response) {
    token
    user { id username }
  }
}"""
TWO_FACTOR = [
    "query TwoFactorStatus { twoFactorStatus { isEnabled backupCodesCount lastUsed setupDate } }",
    "mutation SetupTwoFactor { setupTwoFactor { success message qrCode secret backupCodes } }",
    """mutation EnableTwoFactor($input: EnableTwoFactorInput!) {
  enableTwoFactor(input: $input) { success message method qrCode qrCodeSvg secret phoneNumber email codeLength expiresIn }
}""",
    """mutation VerifyTwoFactorSetup($input: TwoFactorSetupInput!) {
  verifyTwoFactorSetup(input: $input) { success message backupCodes }
}""",
    "mutation DisableTwoFactor($input: TwoFactorVerifyInput!) { disableTwoFactor(input: $input) { success message } }",
    """mutation VerifyLoginTwoFactor($twoFactorToken: String!, $code: String!) {
  verifyLoginTwoFactor(twoFactorToken: $twoFactorToken, code: $code) { token user { id username } requiresTwoFactor }
}""",
    "mutation RegenerateBackupCodes { regenerateBackupCodes { success message backupCodes } }",
]
EMAIL = [
    "mutation SendVerification   { sendEmailVerification { success } }",
    "mutation ResendVerification  { resendEmailVerification { success } }",
    'mutation VerifyEmail         { verifyEmail(token: "...") { success } }',
    "query IsEmailVerified        { isEmailVerified }",
]
REGISTER_TOKEN = """mutation RegisterToken($input: RegisterDeviceTokenInput!) {
  registerDeviceToken(input: $input) {
    id token platform isActive
  }
}"""
DEVICE_TOKENS = "query DeviceTokens { getUserDeviceTokens { id token platform deviceName isActive } }"
DELETE_TOKEN = "mutation DeleteToken($tokenId: ID!) { deleteDeviceToken(tokenId: $tokenId) }"
MY_PASSKEYS = "query MyPasskeys { myPasskeys { id name createdAt } }"
DELETE_PASSKEY = 'mutation DeletePasskey { deletePasskey(id: "pk_1") }'
ME = "query Me { me { id username email isEmailVerified } }"

SEED_OPERATIONS = ([REGISTER, LOGIN, LOGIN_WITH_APPLE, LOGIN_WITH_ID_TOKEN, LOGIN_WITH_FIREBASE, REQUEST_OTP,
                    LOGIN_WITH_PHONE, REQUEST_RESET, RESET_PASSWORD, CHANGE_PASSWORD, VERIFY_RESET_TOKEN,
                    PASSKEY_OPTIONS, PASSKEY_VERIFY, REGISTER_TOKEN, DEVICE_TOKENS, DELETE_TOKEN, MY_PASSKEYS,
                    DELETE_PASSKEY, ME] + TWO_FACTOR + EMAIL)


def gql(client, app, query, variables=None, token=None, operation=None, headers=None):
    body = {"query": query}
    if variables is not None:
        body["variables"] = variables
    if operation is not None:
        body["operationName"] = operation
    return client.post("/graphql", body, app_key=app["app_key"], token=token, headers=headers)


def ok(resp):
    assert resp.status == 200, resp
    body = resp.json
    assert "errors" not in body, body
    return body["data"]


def error_codes(resp):
    assert resp.status == 200, resp
    body = resp.json
    assert body.get("errors"), body
    return [e["extensions"]["code"] for e in body["errors"]]


def served_schema(client):
    resp = client.get("/graphql?sdl")
    assert resp.status == 200, resp
    return build_schema(resp.body.decode())


def register(client, app, email=None, username=None, password=PASSWORD):
    variables = {"input": {"username": username or unique_username(), "email": email or unique_email(),
                           "password": password, "bio": "hi", "accountType": "personal"}}
    return ok(gql(client, app, REGISTER, variables))["register"]


def test_printed_schema_equals_the_introspected_one(client, app):
    printed = served_schema(client)
    data = ok(gql(client, app, get_introspection_query(descriptions=True, specified_by_url=True,
                                                       directive_is_repeatable=True, schema_description=True,
                                                       input_value_deprecation=True)))
    introspected = build_client_schema(data)
    assert print_schema(lexicographic_sort_schema(printed)) == print_schema(lexicographic_sort_schema(introspected))
    # The guide's names, with the deprecated alias kept for the shipped iOS client.
    mutation = introspected.mutation_type.fields
    assert mutation["loginWithFirebase"].deprecation_reason
    assert set(introspected.get_type("UserRegistrationInput").fields) >= {
        "username", "email", "password", "bio", "dateOfBirth", "gender", "accountType"}
    assert set(mutation["loginWithApple"].args) >= {"identityToken", "authorizationCode", "email", "firstName", "lastName"}
    assert set(mutation["loginWithIdToken"].args) == {"idToken", "email", "displayName", "photoURL"}


def test_every_seed_operation_validates(client):
    schema = served_schema(client)
    for operation in SEED_OPERATIONS:
        assert validate(schema, parse(operation)) == [], operation


def test_register_login_me_and_change_password(client, app):
    email = unique_email()
    username = unique_username()
    registered = register(client, app, email=email, username=username)
    assert registered["user"]["email"] == email and registered["user"]["username"] == username
    assert registered["user"]["isEmailVerified"] is False and registered["token"]
    # The standard profile's token is an access token, used as the bearer.
    me = ok(gql(client, app, ME, token=registered["token"]))["me"]
    assert me["id"] == registered["user"]["id"]
    # The identifier is an email address or a username.
    for identifier in (email, username):
        logged = ok(gql(client, app, LOGIN, {"input": {"identifier": identifier, "password": PASSWORD}}))["login"]
        assert logged["user"]["id"] == registered["user"]["id"] and logged["token"]
    wrong = gql(client, app, LOGIN, {"input": {"identifier": email, "password": "Not-The-Password-1"}})
    assert error_codes(wrong) == ["auth/invalid-credential"]
    assert wrong.json["data"] is None
    new_password = "Persimmon-Otter-77?"
    changed = gql(client, app, 'mutation { changePassword(input: {currentPassword: "%s", newPassword: "%s"}) '
                               '{ success } }' % (PASSWORD, new_password), token=registered["token"])
    assert ok(changed)["changePassword"]["success"] is True
    assert ok(gql(client, app, LOGIN, {"input": {"identifier": email, "password": new_password}}))["login"]["token"]
    # Signed out: `me` is the core's 401 as a GraphQL error.
    assert error_codes(gql(client, app, ME)) == ["auth/invalid-token"]


def test_duplicate_registration_and_weak_password_are_errors(client, app):
    email = unique_email()
    register(client, app, email=email)
    again = gql(client, app, REGISTER, {"input": {"username": unique_username(), "email": email, "password": PASSWORD}})
    assert error_codes(again) == ["auth/email-already-in-use"]
    weak = gql(client, app, REGISTER, {"input": {"username": unique_username(), "email": unique_email(),
                                                 "password": "password123"}})
    assert error_codes(weak) == ["auth/weak-password"]


def test_single_token_app_gets_the_long_lived_session_token(client, configured_app_factory):
    app = configured_app_factory(profile="single-token")
    registered = register(client, app)
    token = registered["token"]
    assert token.count(".") != 2, "a single-token app gets the opaque session token, not a JWT"
    assert ok(gql(client, app, ME, token=token))["me"]["id"] == registered["user"]["id"]
    logged = ok(gql(client, app, 'mutation { login(input: {identifier: "%s", password: "%s"}) '
                                 '{ token refreshToken requiresTwoFactor } }' % (registered["user"]["email"], PASSWORD)))
    assert logged["login"]["refreshToken"] is None and logged["login"]["requiresTwoFactor"] is False
    assert logged["login"]["token"] != token and ok(gql(client, app, ME, token=logged["login"]["token"]))["me"]


def test_standard_app_gets_access_and_refresh_tokens(client, app):
    email = unique_email()
    register(client, app, email=email)
    logged = ok(gql(client, app, 'mutation { login(input: {identifier: "%s", password: "%s"}) '
                                 '{ token refreshToken } }' % (email, PASSWORD)))["login"]
    assert logged["token"].count(".") == 2 and logged["refreshToken"]
    refreshed = client.refresh(app, logged["refreshToken"])
    assert refreshed.status == 200, refreshed


def test_phone_sign_in_as_the_guide_writes_it(stack, client, configured_app_factory):
    """requestPhoneOtp(phone, countryCode) with a national number and "+52", then
    loginWithPhone({sessionId, code}) with the texted code (the dev transport's .sms file)."""
    from test_phone import code_of, wait_sms_file
    app = configured_app_factory(sms_allowed_calling_codes="52")
    national = "55" + "".join(str((int(c) + 3) % 10) for c in uuid.uuid4().int.__str__()[:8])
    otp = ok(gql(client, app, REQUEST_OTP.replace("5512345678", national)))["requestPhoneOtp"]
    assert otp["success"] is True and otp["sessionId"].startswith("phs_") and otp["expiresIn"] == 600, otp
    code = code_of(wait_sms_file(stack, "+52" + national))
    wrong = gql(client, app, LOGIN_WITH_PHONE, {"input": {"sessionId": otp["sessionId"],
                                                         "code": "000000" if code != "000000" else "111111"}})
    assert error_codes(wrong) == ["auth/invalid-code"]
    signed = ok(gql(client, app, LOGIN_WITH_PHONE, {"input": {"sessionId": otp["sessionId"], "code": code}}))
    assert signed["loginWithPhone"]["token"] and signed["loginWithPhone"]["user"]["id"]
    # A number the app does not allow answers like a sent code (no oracle), and texts nothing.
    refused = ok(gql(client, app, 'mutation { requestPhoneOtp(phone: "+33612345678") { success sessionId } }'))
    assert refused["requestPhoneOtp"]["success"] is True and refused["requestPhoneOtp"]["sessionId"]


def test_device_tokens(client, app):
    registered = register(client, app)
    token = registered["token"]
    push = unique_push_token()
    device = ok(gql(client, app, REGISTER_TOKEN, {"input": {"token": push, "platform": "ios", "deviceName": "iPhone"}},
                    token=token))["registerDeviceToken"]
    assert device["token"] == push and device["platform"] == "ios" and device["isActive"] is True
    listed = ok(gql(client, app, DEVICE_TOKENS, token=token))["getUserDeviceTokens"]
    assert [d["id"] for d in listed] == [device["id"]] and listed[0]["deviceName"] == "iPhone"
    assert ok(gql(client, app, DELETE_TOKEN, {"tokenId": device["id"]}, token=token))["deleteDeviceToken"] is True
    assert ok(gql(client, app, DEVICE_TOKENS, token=token))["getUserDeviceTokens"] == []
    # Another user's token cannot list or delete this user's devices.
    assert error_codes(gql(client, app, DEVICE_TOKENS)) == ["auth/invalid-token"]


def test_two_factor_status_and_setup(client, app):
    token = register(client, app)["token"]
    status = ok(gql(client, app, TWO_FACTOR[0], token=token))["twoFactorStatus"]
    assert status == {"isEnabled": False, "backupCodesCount": 0, "lastUsed": None, "setupDate": None}
    setup = ok(gql(client, app, TWO_FACTOR[1], token=token))["setupTwoFactor"]
    assert setup["success"] is True and setup["secret"] and setup["qrCode"].startswith("data:image/svg+xml;base64,")
    wrong = gql(client, app, TWO_FACTOR[3], {"input": {"code": "000000"}}, token=token)
    assert error_codes(wrong)[0].startswith("auth/")


def test_passkey_list_and_delete_signed_in(client, app):
    token = register(client, app)["token"]
    assert ok(gql(client, app, MY_PASSKEYS, token=token)) == {"myPasskeys": []}
    assert error_codes(gql(client, app, DELETE_PASSKEY, token=token)) == ["auth/not-found"]
    # An id that is not one path segment never reaches another route.
    assert error_codes(gql(client, app, 'mutation { deletePasskey(id: "../../me") }', token=token)) == ["auth/not-found"]


def test_passkey_options_and_password_reset_request(client, app):
    # An app without a relying party: the core's refusal, as a GraphQL error.
    resp = gql(client, app, PASSKEY_OPTIONS, {"identifier": unique_email()})
    assert error_codes(resp) == ["auth/passkey-not-configured"] and resp.json["data"] is None
    assert ok(gql(client, app, 'mutation { requestPasswordReset(email: "%s") { success } }' % unique_email())) == {
        "requestPasswordReset": {"success": True}}


def test_one_sign_in_per_request(client, app):
    doc = ('mutation { a: login(input: {identifier: "a@example.com", password: "x"}) { token } '
           'b: login(input: {identifier: "b@example.com", password: "y"}) { token } }')
    resp = gql(client, app, doc)
    assert error_codes(resp) == ["GRAPHQL_VALIDATION_FAILED"] and "data" not in resp.json


def test_get_serves_queries_a_page_and_never_mutations(client, app):
    page = client.get("/graphql")
    assert page.status == 200 and page.header("Content-Type").startswith("text/html")
    csp = page.header("Content-Security-Policy")
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "http" not in csp
    assert b"<script src" not in page.body
    from urllib.parse import quote
    resp = client.get("/graphql?query=" + quote("{ __typename }"), app_key=app["app_key"])
    assert resp.status == 200 and resp.json == {"data": {"__typename": "Query"}}
    resp = client.get("/graphql?query=" + quote(REQUEST_RESET), app_key=app["app_key"])
    assert error_codes(resp) == ["auth/method-not-allowed"]
    assert error_codes(client.get("/graphql?query=" + quote("{ __typename }"))) == ["auth/invalid-app-key"]


def test_unparsable_requests_are_4xx(client, app):
    assert client.post("/graphql", [1], app_key=app["app_key"]).status == 422
    assert client.post("/graphql", {"variables": {}}, app_key=app["app_key"]).status == 422
    assert client.post("/graphql", {"query": "{ __typename }"}).status == 401
    assert client.post("/graphql", data="{ __typename }", content_type="application/graphql",
                       app_key=app["app_key"]).status == 415


HOSTILE = {
    "deep": "{ " + "__schema { types { fields { type { " * 4 + "name" + " } } } }" * 4 + " }",
    "aliases": "{ " + " ".join(f"a{i}: __typename" for i in range(60)) + " }",
    "cycle": "query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
    "nesting": "{ " + "a { " * 200 + "b" + " }" * 200 + " }",
    "list_nesting": "{ __type(name: " + "[" * 300 + '"x"' + "]" * 300 + ") { name } }",
    "garbage": "}{" * 30_000,
    "introspection_depth": '{ __type(name: "User") { ' + "ofType { " * 25 + "name" + " }" * 25 + " } }",
    # Fragments spreading the next one four times at one level (once exponential in the depth
    # walk), with a field-merging conflict at the bottom.
    "fragment_fanout": "{ ...F0 } "
    + "".join(f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} ...F{i + 1} ...F{i + 1} }} " for i in range(30))
    + "fragment F30 on Query { f: __typename f: me { id } }",
    # Nested spreads of the same key, several times per level: merged sets checked once each.
    "merge_fanout": '{ __type(name: "User") { ...T0 } } '
    + "".join(f"fragment T{i} on __Type {{ ofType {{ ...T{i + 1} }} ofType {{ ...T{i + 1} name }} o: ofType {{ ...T{i + 1} }} ...T{i + 1} }} "
              for i in range(40))
    + "fragment T40 on __Type { name }",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_documents_answer_errors_quickly(client, app, name):
    started = time.monotonic()
    resp = gql(client, app, HOSTILE[name])
    elapsed = time.monotonic() - started
    assert resp.status in (200, 413), resp
    if resp.status == 200:
        assert resp.json["errors"] and "data" not in resp.json
    assert elapsed < 1.0, f"{name}: {elapsed:.3f}s"


INVALID_FOR_GRAPHQL_CORE = [
    "{ me { nope } }",
    "{ me }",
    "{ isEmailVerified { x } }",
    "query Q($x: String) { me { id } }",
    "{ verifyResetToken { valid } }",
    "{ verifyResetToken(token: 1) { valid } }",
    "query Q { me { id } } query Q { me { id } }",
    "{ me { id } } { me { id } }",
    "{ me { ...F } }",
    "{ me { id } } fragment F on User { id }",
    "{ me { ...F } } fragment F on Query { me { id } }",
    "query Q($t: Int) { verifyResetToken(token: $t) { valid } }",
    "query Q($t: String) { verifyResetToken(token: $t) { valid } }",
    "{ me @unknown { id } }",
    "{ me { id @skip } }",
    "{ me { id: email id } }",
    # Field merging below the first level (spec 5.3.2: sub-selections merge in turn).
    "{ me { id } me { id: email } }",
    "{ __schema { types { n: name } } __schema { types { n: kind } } }",
    "{ __schema { ...A } __schema { ...B } } fragment A on __Schema { queryType { x: name } } "
    "fragment B on __Schema { queryType { x: kind } }",
    "{ __schema { types { ... on __Type { f: fields { name } } } } __schema { types { f: inputFields { name } } } }",
    'mutation { login(input: {identifier: "a"}) { token } }',
    'mutation { login(input: {identifier: "a", password: "b", extra: 1}) { token } }',
    "query ($i: UserLoginInput) { me { id } }",
    "type Query { a: String }",
]


@pytest.mark.parametrize("document", INVALID_FOR_GRAPHQL_CORE)
def test_documents_graphql_core_refuses_are_refused(client, app, document):
    schema = served_schema(client)
    try:
        oracle = validate(schema, parse(document))
    except Exception:  # noqa: BLE001 - a syntax error is a refusal too
        oracle = ["syntax"]
    assert oracle, f"graphql-core accepts {document!r}: the test is wrong"
    resp = gql(client, app, document)
    assert resp.status == 200 and resp.json.get("errors") and "data" not in resp.json, (document, resp.json)


def test_fuzzed_documents_never_crash_the_endpoint(client, app):
    """Queries generated by hypothesis-graphql from our schema, for a bounded time: no 5xx, and
    every answer is a GraphQL response."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis_graphql import queries
    sdl = client.get("/graphql?sdl").body.decode()
    deadline = time.monotonic() + 20
    seen = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(queries(sdl))
    def run(query):
        if time.monotonic() > deadline:
            return
        resp = gql(client, app, query)
        assert resp.status == 200, (query, resp)
        body = resp.json
        assert "data" in body or "errors" in body
        seen.append(query)

    run()
    assert len(seen) > 10


def test_id_token_and_its_deprecated_alias_sign_in_the_same_firebase_user(client, providers, provider_app):
    from provider_flows import firebase_body
    sub = "fb_" + unique_username()
    first, _ = firebase_body(providers, sub=sub, email=unique_email(), sign_in_provider="google.com")
    signed = ok(gql(client, provider_app, LOGIN_WITH_ID_TOKEN,
                    {"idToken": first["id_token"], "displayName": "Ada Lovelace"}))["loginWithIdToken"]
    # The shipped iOS client's field name still works (deprecated in the schema).
    again, _ = firebase_body(providers, sub=sub)
    alias = ok(gql(client, provider_app, LOGIN_WITH_FIREBASE, {"idToken": again["id_token"]}))["loginWithFirebase"]
    assert alias["user"]["id"] == signed["user"]["id"] and alias["token"]
    me = ok(gql(client, provider_app, "{ me { id displayName } }", token=signed["token"]))["me"]
    assert me == {"id": signed["user"]["id"], "displayName": "Ada Lovelace"}
    forged, _ = firebase_body(providers, sub=sub, signer="unpublished")
    assert error_codes(gql(client, provider_app, LOGIN_WITH_ID_TOKEN, {"idToken": forged["id_token"]})) == [
        "auth/invalid-id-token"]


def test_apple_sign_in_with_the_services_nonce(client, providers, provider_app):
    from provider_flows import apple_body, new_authorization_code
    body, _ = apple_body(client, providers, provider_app, sub="ap_" + unique_username())
    variables = {"identityToken": body["identity_token"], "authorizationCode": new_authorization_code(),
                 "firstName": "Grace", "lastName": "Hopper"}
    # The guide's operation plus the optional nonce this service checks the token against.
    query = LOGIN_WITH_APPLE.replace("$lastName: String\n)", "$lastName: String\n  $nonce: String\n)").replace(
        "lastName: $lastName\n  )", "lastName: $lastName\n    nonce: $nonce\n  )")
    # Without a nonce an app that issues them refuses the token (apple_nonce=none is opt-in).
    missing = gql(client, provider_app, LOGIN_WITH_APPLE, variables)
    assert error_codes(missing) == ["auth/invalid-apple-token"]
    signed = ok(gql(client, provider_app, query, dict(variables, nonce=body["nonce"])))["loginWithApple"]
    assert signed["token"] and signed["user"]["id"]


def test_two_factor_enrolment_then_login_needs_the_second_factor(client, app):
    import pyotp
    from test_mfa import wait_away_from_step_edge
    email = unique_email()
    token = register(client, app, email=email)["token"]
    secret = ok(gql(client, app, TWO_FACTOR[1], token=token))["setupTwoFactor"]["secret"]
    wait_away_from_step_edge()
    confirmed = ok(gql(client, app, TWO_FACTOR[3], {"input": {"code": pyotp.TOTP(secret).now()}}, token=token))
    backup_codes = confirmed["verifyTwoFactorSetup"]["backupCodes"]
    assert confirmed["verifyTwoFactorSetup"]["success"] is True and len(backup_codes) == 10
    status = ok(gql(client, app, TWO_FACTOR[0], token=token))["twoFactorStatus"]
    assert status["isEnabled"] is True and status["backupCodesCount"] == 10
    challenge = ok(gql(client, app, 'mutation { login(input: {identifier: "%s", password: "%s"}) '
                                    '{ token user { id } requiresTwoFactor twoFactorToken twoFactorMethod } }'
                        % (email, PASSWORD)))["login"]
    assert challenge["requiresTwoFactor"] is True and challenge["token"] is None and challenge["user"] is None
    assert challenge["twoFactorToken"] and challenge["twoFactorMethod"] == "authenticator"
    wrong = gql(client, app, TWO_FACTOR[5], {"twoFactorToken": challenge["twoFactorToken"], "code": "000000"})
    assert error_codes(wrong)[0].startswith("auth/")
    # A backup code completes the sign-in, as the guide's web client allows.
    done = ok(gql(client, app, TWO_FACTOR[5], {"twoFactorToken": challenge["twoFactorToken"],
                                               "code": backup_codes[0]}))["verifyLoginTwoFactor"]
    assert done["token"] and done["requiresTwoFactor"] is False and done["user"]["id"]
    assert ok(gql(client, app, ME, token=done["token"]))["me"]["id"] == done["user"]["id"]
    fresh = ok(gql(client, app, TWO_FACTOR[6], token=done["token"]))["regenerateBackupCodes"]
    assert len(fresh["backupCodes"]) == 10 and not set(fresh["backupCodes"]) & set(backup_codes)


def test_password_reset_with_the_mailed_code(client, smtp_sink, app):
    from mail_flows import MAIL_TIMEOUT, other_code
    from smtp_sink import code_from
    email = unique_email()
    register(client, app, email=email)
    mark = smtp_sink.mark()
    assert ok(gql(client, app, 'mutation { requestPasswordReset(email: "%s") { success } }' % email)) == {
        "requestPasswordReset": {"success": True}}
    code = code_from(smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT))
    check = 'query { verifyResetToken(token: "%s", email: "%s") { valid } }'
    assert ok(gql(client, app, check % (code, email)))["verifyResetToken"]["valid"] is True
    assert ok(gql(client, app, check % (other_code(code), email)))["verifyResetToken"]["valid"] is False
    # The guide's call without the address: the code alone names no account.
    assert error_codes(gql(client, app, RESET_PASSWORD)) == ["auth/validation-failed"]
    new_password = "Persimmon-Otter-77?"
    reset = ('mutation { resetPassword(token: "%s", email: "%s", newPassword: "%s") { success } }'
             % (code, email, new_password))
    assert ok(gql(client, app, reset))["resetPassword"]["success"] is True
    assert ok(gql(client, app, LOGIN, {"input": {"identifier": email, "password": new_password}}))["login"]["token"]
    assert error_codes(gql(client, app, reset)) == ["auth/invalid-code"], "the code is single use"


def test_email_verification_signed_in(client, smtp_sink, app):
    from mail_flows import MAIL_TIMEOUT
    from smtp_sink import code_from
    email = unique_email()
    token = register(client, app, email=email)["token"]
    assert ok(gql(client, app, EMAIL[3], token=token)) == {"isEmailVerified": False}
    mark = smtp_sink.mark()
    assert ok(gql(client, app, EMAIL[0], token=token)) == {"sendEmailVerification": {"success": True}}
    code = code_from(smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT))
    # The guide's verifyEmail(token) while signed in: the address is the user's own.
    verified = gql(client, app, 'mutation { verifyEmail(token: "%s") { success } }' % code, token=token)
    assert ok(verified) == {"verifyEmail": {"success": True}}
    assert ok(gql(client, app, EMAIL[3], token=token)) == {"isEmailVerified": True}


def _link_token(message):
    import re
    found = re.search(r"[?&]token=([A-Za-z0-9_-]+)", message.text)
    assert found, message.text
    return found.group(1)


def test_the_guides_reset_and_verification_take_the_mailed_links_token_alone(client, smtp_sink,
                                                                             configured_app_factory):
    """Seed 003's clients pass one `token` from the mailed link (resetPassword(token,
    newPassword), verifyResetToken(token), verifyEmail(token)): with a deep link set, the reset
    and verification mails carry a link whose token names the address and the code."""
    from mail_flows import MAIL_TIMEOUT
    app = configured_app_factory(deep_link_url="https://app.example.test/auth/action")
    email = unique_email()
    token = register(client, app, email=email)["token"]
    mark = smtp_sink.mark()
    assert ok(gql(client, app, 'mutation { requestPasswordReset(email: "%s") { success } }' % email))
    message = smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT)
    assert "https://app.example.test/auth/action?mode=reset_password&" in message.text, message.text
    link_token = _link_token(message)
    check = 'query { verifyResetToken(token: "%s") { valid } }'
    assert ok(gql(client, app, check % link_token))["verifyResetToken"]["valid"] is True
    new_password = "Kumquat-Heron-51&"
    reset = 'mutation { resetPassword(token: "%s", newPassword: "%s") { success } }'
    assert ok(gql(client, app, reset % (link_token, new_password)))["resetPassword"]["success"] is True
    assert ok(gql(client, app, LOGIN, {"input": {"identifier": email, "password": new_password}}))["login"]["token"]
    assert error_codes(gql(client, app, reset % (link_token, new_password))) == ["auth/invalid-code"]
    signed_in = ok(gql(client, app, LOGIN, {"input": {"identifier": email, "password": new_password}}))["login"]["token"]
    mark = smtp_sink.mark()
    assert ok(gql(client, app, EMAIL[0], token=signed_in)) == {"sendEmailVerification": {"success": True}}
    message = smtp_sink.wait_for(email, after=mark, timeout=MAIL_TIMEOUT)
    assert "mode=verify_email&" in message.text, message.text
    # Signed in, as the client is when it opens the link: the account keeps its password.
    verified = gql(client, app, 'mutation { verifyEmail(token: "%s") { success } }' % _link_token(message),
                   token=signed_in)
    assert ok(verified) == {"verifyEmail": {"success": True}}
    assert ok(gql(client, app, EMAIL[3], token=signed_in)) == {"isEmailVerified": True}


def test_apple_sign_in_as_the_guide_writes_it_for_an_app_without_nonces(client, providers, provider_app_factory):
    """Seed 003's clients send Apple's identity token without a nonce. An app set to
    apple_nonce=none accepts it, and the token itself is single use."""
    from provider_flows import new_authorization_code
    app = provider_app_factory(apple_nonce="none")
    assert app["settings"]["apple_nonce"] == "none"
    token, _ = providers.apple_token(sub="ap_" + unique_username(), without=("nonce",))
    variables = {"identityToken": token, "authorizationCode": new_authorization_code(),
                 "firstName": "Ada", "lastName": "Lovelace"}
    signed = ok(gql(client, app, LOGIN_WITH_APPLE, variables))["loginWithApple"]
    assert signed["token"] and signed["user"]["id"]
    replayed = gql(client, app, LOGIN_WITH_APPLE, dict(variables, authorizationCode=new_authorization_code()))
    assert error_codes(replayed) == ["auth/invalid-apple-token"], "the token is single use"
    # A new token of the same Apple ID signs in to the same user.
    again, _ = providers.apple_token(sub=_claims_sub(token), without=("nonce",))
    second = ok(gql(client, app, LOGIN_WITH_APPLE, dict(variables, identityToken=again,
                                                          authorizationCode=new_authorization_code())))
    assert second["loginWithApple"]["user"]["id"] == signed["user"]["id"]


def _claims_sub(token):
    import base64
    import json
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["sub"]


def test_register_keeps_the_guides_profile_fields_in_user_metadata(client, app):
    """bio, dateOfBirth, gender and accountType have no column in the core: register stores
    them in the new user's user_metadata, where me reads them (and REST shows them)."""
    email = unique_email()
    variables = {"input": {"username": unique_username(), "email": email, "password": PASSWORD, "bio": "Sailor",
                           "dateOfBirth": "1990-04-01", "gender": "female", "accountType": "creator"}}
    query = REGISTER.replace("isEmailVerified }", "isEmailVerified bio dateOfBirth gender accountType }")
    registered = ok(gql(client, app, query, variables))["register"]
    assert registered["user"]["bio"] == "Sailor" and registered["user"]["accountType"] == "creator", registered
    me = ok(gql(client, app, "query { me { bio dateOfBirth gender accountType } }", token=registered["token"]))["me"]
    assert me == {"bio": "Sailor", "dateOfBirth": "1990-04-01", "gender": "female", "accountType": "creator"}
    rest = client.get("/v1/me", app_key=app["app_key"], token=registered["token"])
    assert rest.status == 200 and rest.data["user_metadata"]["gender"] == "female", rest


def test_graphql_requests_are_limited_per_ip(client, configured_app_factory):
    app = configured_app_factory(rate_limits={"graphql_per_ip": "2/1m"})
    ip = {"X-Forwarded-For": "10.77.%d.%d" % (uuid.uuid4().int % 250, uuid.uuid4().int % 250 + 1)}
    for _ in range(2):
        assert gql(client, app, "query { __typename }", headers=ip).status == 200
    limited = gql(client, app, "query { __typename }", headers=ip)
    assert limited.status == 429 and limited.json["code"] == "auth/rate-limited", limited
    # Another client is not affected.
    assert gql(client, app, "query { __typename }").status == 200


def _one_client():
    return {"X-Forwarded-For": "10.78.%d.%d" % (uuid.uuid4().int % 250, uuid.uuid4().int % 250 + 1)}


def test_get_queries_take_the_same_per_ip_limit_as_post(client, configured_app_factory):
    from urllib.parse import quote
    from identity_client import assert_problem
    app = configured_app_factory(rate_limits={"graphql_per_ip": "2/1m"})
    ip = _one_client()
    url = "/graphql?query=" + quote("{ __typename }")
    for _ in range(2):
        resp = client.get(url, app_key=app["app_key"], headers=ip)
        assert resp.status == 200 and resp.json == {"data": {"__typename": "Query"}}, resp
        assert '"graphql_per_ip";q=2;w=60' in (resp.header("RateLimit-Policy") or ""), resp.headers
        assert resp.headers.get_all("X-Content-Type-Options") == ["nosniff"], resp.headers
    limited = client.get(url, app_key=app["app_key"], headers=ip)
    assert_problem(limited, 429, "auth/rate-limited")
    assert (limited.header("Retry-After") or "").isdigit(), limited.headers
    # The pipeline's headers once, though the query went through it twice (as GET, then POST).
    assert limited.headers.get_all("X-Content-Type-Options") == ["nosniff"], limited.headers
    # One budget for both methods: the same client's POST is refused too.
    assert gql(client, app, "{ __typename }", headers=ip).status == 429
    # Another client is not affected.
    assert client.get(url, app_key=app["app_key"], headers=_one_client()).status == 200


def _introspection_answers(stack):
    from ops_metrics import scrape, value
    families = scrape(stack.metrics_url(stack.gateway))
    return {source: value(families, "identity_graphql_introspection_answers_total", source=source)
            for source in ("executed", "cached")}


def test_introspection_answers_are_cached_byte_for_byte(stack, client, app):
    # A text no earlier test sent (a comment changes the request, not its answer).
    query = get_introspection_query() + f"\n# {uuid.uuid4().hex}\n"
    before = _introspection_answers(stack)
    first = gql(client, app, query)
    after_first = _introspection_answers(stack)
    second = gql(client, app, query)
    after_second = _introspection_answers(stack)
    assert first.status == second.status == 200
    assert after_first["executed"] - before["executed"] == 1 and after_first["cached"] == before["cached"]
    assert after_second["cached"] - after_first["cached"] == 1 and after_second["executed"] == after_first["executed"]
    assert second.body == first.body
    # Another text, executed afresh: the same bytes; and a GET of the first text is answered
    # from the same cache.
    uncached = gql(client, app, query + "# again\n")
    assert _introspection_answers(stack)["executed"] - after_second["executed"] == 1
    assert uncached.body == first.body
    from urllib.parse import quote
    assert client.get("/graphql?query=" + quote(query), app_key=app["app_key"]).body == first.body
    # What is kept is the schema as graphql-core reads it.
    assert print_schema(lexicographic_sort_schema(build_client_schema(json.loads(second.body)["data"]))) == \
        print_schema(lexicographic_sort_schema(served_schema(client)))


def _nested_type_fields(levels):
    """`__type` asking `fields { type { … } }` `levels` times: graphql-core's recommended
    MaxIntrospectionDepthRule refuses three."""
    inner = "name"
    for _ in range(levels):
        inner = f"name fields {{ type {{ {inner} ofType {{ {inner} }} }} }}"
    return '{ __type(name: "Mutation") { ' + inner + " } }"


def test_nested_introspection_lists_are_refused_as_graphql_core_refuses_them(client, app):
    from graphql.validation import MaxIntrospectionDepthRule
    schema = served_schema(client)
    for levels in (1, 2, 3, 4):
        document = _nested_type_fields(levels)
        oracle = validate(schema, parse(document), rules=[MaxIntrospectionDepthRule])
        resp = gql(client, app, document)
        assert resp.status == 200
        assert bool(oracle) == (levels >= 3), (levels, oracle)
        if oracle:
            assert error_codes(resp) == ["GRAPHQL_VALIDATION_FAILED"] and "data" not in resp.json, resp.json
        else:
            assert ok(resp)["__type"]["fields"], resp.json


def test_introspection_asked_many_times_over_stops_at_its_budget(client, app):
    """Within the depth, alias and list limits, 50 aliases of every type's fields with their
    types' fields (about 11 MB and a second of CPU before the budget): one error, no data."""
    rich = ("fragment R0 on __Type { kind name description enumValues { name description } } "
            + " ".join(f"fragment R{n} on __Type {{ ...R0 fields {{ name description args {{ name type {{ ...R{n - 1} "
                       f"ofType {{ ...R{n - 1} ofType {{ ...R{n - 1} }} }} }} }} type {{ ...R{n - 1} ofType {{ ...R{n - 1} "
                       f"ofType {{ ...R{n - 1} }} }} }} }} }}" for n in (1, 2)))
    document = "{ " + " ".join(f"a{i}: __schema {{ types {{ ...R2 }} }}" for i in range(50)) + " } " + rich
    from graphql.validation import MaxIntrospectionDepthRule
    assert not validate(served_schema(client), parse(document), rules=[MaxIntrospectionDepthRule])
    started = time.monotonic()
    resp = gql(client, app, document)
    elapsed = time.monotonic() - started
    assert resp.status == 200 and resp.json["data"] is None, resp.json.get("errors")
    assert error_codes(resp) == ["GRAPHQL_VALIDATION_FAILED"]
    assert "more than 10000 fields" in resp.json["errors"][0]["message"]
    assert elapsed < 1.0, f"{elapsed:.3f}s"


START_EMAIL_CHANGE = """mutation StartEmailChange($email: String!) {
  startEmailChange(email: $email) { success message }
}"""
CONFIRM_EMAIL_CHANGE = """mutation ConfirmEmailChange($code: String!) {
  confirmEmailChange(code: $code) { id email isEmailVerified }
}"""


def test_the_email_change_mutations_are_in_the_schema_beside_the_guides(client):
    """An addition: the guide's operations still validate (test_every_seed_operation_validates)."""
    schema = served_schema(client)
    mutation = schema.mutation_type.fields
    assert str(mutation["startEmailChange"].type) == "SuccessResponse!"
    assert {name: str(arg.type) for name, arg in mutation["startEmailChange"].args.items()} == {"email": "String!"}
    assert str(mutation["confirmEmailChange"].type) == "User!"
    assert {name: str(arg.type) for name, arg in mutation["confirmEmailChange"].args.items()} == {"code": "String!"}
    for operation in (START_EMAIL_CHANGE, CONFIRM_EMAIL_CHANGE):
        assert validate(schema, parse(operation)) == [], operation


@pytest.mark.parametrize("profile", ["standard", "single-token"])
def test_email_change_through_graphql(client, smtp_sink, configured_app_factory, profile):
    """startEmailChange mails a code to the new address; confirmEmailChange with it moves the
    account there, verified: the same user, signing in with the new address only, its other
    sessions ended and this one kept."""
    from mail_flows import MAIL_TIMEOUT, other_code
    from smtp_sink import code_from
    app = configured_app_factory(profile=profile)
    old, new = unique_email("gql-old"), unique_email("gql-new")
    registered = register(client, app, email=old)
    token, uid = registered["token"], registered["user"]["id"]
    other = ok(gql(client, app, LOGIN, {"input": {"identifier": old, "password": PASSWORD}}))["login"]["token"]
    mark = smtp_sink.mark()
    started = ok(gql(client, app, START_EMAIL_CHANGE, {"email": new}, token=token))["startEmailChange"]
    assert started["success"] is True and started["message"], started
    code = code_from(smtp_sink.wait_for(new, after=mark, timeout=MAIL_TIMEOUT))
    # Nothing changed yet.
    assert ok(gql(client, app, ME, token=token))["me"]["email"] == old
    wrong = gql(client, app, CONFIRM_EMAIL_CHANGE, {"code": other_code(code)}, token=token)
    assert error_codes(wrong) == ["auth/invalid-code"] and wrong.json["data"] is None
    assert ok(gql(client, app, ME, token=token))["me"]["email"] == old
    confirmed = ok(gql(client, app, CONFIRM_EMAIL_CHANGE, {"code": code}, token=token))
    assert confirmed["confirmEmailChange"] == {"id": uid, "email": new, "isEmailVerified": True}, confirmed
    me = ok(gql(client, app, ME, token=token))["me"]
    assert me["id"] == uid and me["email"] == new and me["isEmailVerified"] is True, me
    assert error_codes(gql(client, app, ME, token=other)) == ["auth/invalid-token"], "other sessions end"
    logged = ok(gql(client, app, LOGIN, {"input": {"identifier": new, "password": PASSWORD}}))["login"]
    assert logged["user"]["id"] == uid
    assert error_codes(gql(client, app, LOGIN, {"input": {"identifier": old, "password": PASSWORD}})) == [
        "auth/invalid-credential"]
    assert error_codes(gql(client, app, CONFIRM_EMAIL_CHANGE, {"code": code}, token=token)) == [
        "auth/invalid-code"], "the code is single use"


def test_email_change_through_graphql_needs_a_fresh_sign_in_and_a_free_address(client, smtp_sink, app):
    from mail_flows import MAIL_TIMEOUT
    from smtp_sink import code_from
    from test_fresh_proof import age_session
    stale = client.new_user(app, email=unique_email("gql-stale"))
    age_session(app, stale["session_id"])
    refused = gql(client, app, START_EMAIL_CHANGE, {"email": unique_email("gql-wanted")}, token=stale["access_token"])
    assert error_codes(refused) == ["auth/reauth-required"]
    assert refused.json["errors"][0]["extensions"]["status"] == 403
    # Signed out: no caller.
    assert error_codes(gql(client, app, START_EMAIL_CHANGE, {"email": unique_email("gql-anon")})) == [
        "auth/invalid-token"]
    # An address of another account: the same answer at the start, refused at confirm.
    taken = unique_email("gql-taken")
    holder = client.new_user(app, email=taken)
    mover = client.new_user(app, email=unique_email("gql-mover"))
    mark = smtp_sink.mark()
    assert ok(gql(client, app, START_EMAIL_CHANGE, {"email": taken}, token=mover["access_token"]))[
        "startEmailChange"]["success"] is True
    code = code_from(smtp_sink.wait_for(taken, after=mark, timeout=MAIL_TIMEOUT))
    in_use = gql(client, app, CONFIRM_EMAIL_CHANGE, {"code": code}, token=mover["access_token"])
    assert error_codes(in_use) == ["auth/email-already-in-use"]
    assert ok(gql(client, app, ME, token=holder["access_token"]))["me"]["email"] == taken
    assert ok(gql(client, app, ME, token=mover["access_token"]))["me"]["email"] != taken
    invalid = gql(client, app, START_EMAIL_CHANGE, {"email": "not-an-address"}, token=mover["access_token"])
    assert error_codes(invalid) == ["auth/invalid-email"]
