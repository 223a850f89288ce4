"""Passkeys (WebAuthn, docs/api-contract.md, "Sign-in methods"): registration while signed in,
sign-in with an identifier or usernameless, the relying-party checks, enumeration safety, and the
list, rename and delete rules. The authenticator is software (webauthn_authenticator.py: real keys, real CBOR);
every credential it makes is also checked by an independent relying-party library (py_webauthn),
so the authenticator and our verifier cannot share a mistake."""

import json
import statistics
import time

import pytest

import db_tools
import jwt_tools
import webauthn_authenticator as wa
from event_tools import assert_event
from identity_client import assert_no_content, assert_problem, assert_token_response, unique_email

RP_ID = "passkeys.example.test"
ORIGIN = "https://passkeys.example.test"
ANDROID_ORIGIN = "android:apk-key-hash:" + wa.b64url(b"\x01" * 32)
PASSKEY_KEYS = ("id", "name", "credential_id", "transports", "aaguid", "backup_eligible", "backup_state",
                "created_at", "last_used_at")


@pytest.fixture
def rp_app(stack, app_factory):
    """A fresh app with a passkey relying party (user verification not required)."""
    app = app_factory()
    stack.configure_app(app["app_id"], webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN, ANDROID_ORIGIN])
    return app


def _user(client, app):
    email = unique_email("pk")
    data = client.new_user(app, email=email)
    return email, data


def _registration_options(client, app, token):
    resp = client.post("/v1/me/passkeys/options", app_key=app["app_key"], token=token)
    assert resp.status == 200, resp
    return resp.data


def _register(client, app, token, alg=wa.ES256, fmt="none", origin=ORIGIN, name=None, **create_kw):
    """Registration options → software authenticator → POST /v1/me/passkeys. Returns
    (credential, options, registration JSON, response)."""
    options = _registration_options(client, app, token)
    cred, registration = wa.create(options, origin, alg=alg, fmt=fmt, **create_kw)
    body = {"response": registration}
    if name is not None:
        body["name"] = name
    resp = client.post("/v1/me/passkeys", body, app_key=app["app_key"], token=token)
    return cred, options, registration, resp


def _registered(client, app, token, **kw):
    cred, options, registration, resp = _register(client, app, token, **kw)
    assert resp.status == 201, resp
    return cred, resp.data


def _sign_in_options(client, app, identifier=None, **kw):
    body = {} if identifier is None else {"identifier": identifier}
    resp = client.post("/v1/auth/passkey/options", body, app_key=app["app_key"], **kw)
    assert resp.status == 200, resp
    return resp.data


def _verify(client, app, flow_id, assertion):
    return client.post("/v1/auth/passkey/verify", {"flow_id": flow_id, "response": assertion},
                       app_key=app["app_key"])


def _claims(tokens):
    return jwt_tools.split(tokens["access_token"])[1]


# --- registration and sign-in -----------------------------------------------------------------

@pytest.mark.parametrize("alg_name,fmt", [("ES256", "none"), ("ES256", "packed"), ("EdDSA", "none"),
                                          ("EdDSA", "packed"), ("RS256", "none"), ("RS256", "packed")])
def test_register_and_sign_in_with_each_algorithm(client, rp_app, events, alg_name, fmt):
    alg = wa.ALGORITHMS[alg_name]
    email, user = _user(client, rp_app)
    token = user["access_token"]
    options = _registration_options(client, rp_app, token)
    # What registration must offer.
    assert len(wa.b64url_decode(options["challenge"])) == 32, options
    assert options["rp"]["id"] == RP_ID, options
    assert [p["alg"] for p in options["pubKeyCredParams"]] == [wa.ES256, wa.EDDSA, wa.RS256], options
    assert options["authenticatorSelection"]["residentKey"] == "preferred", options
    assert options["excludeCredentials"] == [], options
    handle = wa.b64url_decode(options["user"]["id"])
    assert email.encode() not in handle and user["user"]["uid"].encode() not in handle, "user handle must be opaque"

    cred, registration = wa.create(options, ORIGIN, alg=alg, fmt=fmt)
    wa.independent_check_registration(registration, options, ORIGIN)  # py_webauthn accepts it too
    resp = client.post("/v1/me/passkeys", {"response": registration, "name": "My key"},
                       app_key=rp_app["app_key"], token=token)
    assert resp.status == 201, resp
    passkey = resp.data
    assert all(key in passkey for key in PASSKEY_KEYS), passkey
    assert passkey["name"] == "My key" and passkey["credential_id"] == wa.b64url(cred.id), passkey
    assert passkey["backup_eligible"] is True and passkey["backup_state"] is True, passkey
    assert passkey["last_used_at"] is None, passkey
    uid = user["user"]["uid"]
    assert_event(events.wait_for("passkey.added", lambda b: b.get("uid") == uid), "passkey.added", "PasskeyAdded",
                 rp_app, uid)

    # The next registration options exclude it.
    again = _registration_options(client, rp_app, token)
    assert [c["id"] for c in again["excludeCredentials"]] == [wa.b64url(cred.id)], again

    started = _sign_in_options(client, rp_app, email)
    assert started["has_passkeys"] is True, started
    request = started["options"]
    assert [c["id"] for c in request["allowCredentials"]] == [wa.b64url(cred.id)], request
    assertion = wa.get(cred, request, ORIGIN)
    wa.independent_check_assertion(assertion, request, ORIGIN, cred, 0)
    resp = _verify(client, rp_app, started["flow_id"], assertion)
    assert resp.status == 200, resp
    assert_token_response(resp.data, is_new_user=False, expires_in=resp.data["expires_in"])
    assert resp.data["user"]["uid"] == uid
    claims = _claims(resp.data)
    assert "hwk" in claims["amr"] and claims["aal"] == 2, claims  # user verified: two factors in one
    listed = client.get("/v1/me/passkeys", app_key=rp_app["app_key"], token=resp.data["access_token"])
    assert listed.status == 200 and [p["id"] for p in listed.data] == [passkey["id"]], listed
    assert listed.data[0]["last_used_at"] is not None, listed.data


def test_usernameless_sign_in_finds_the_user_by_handle(client, rp_app):
    _, user = _user(client, rp_app)
    cred, _ = _registered(client, rp_app, user["access_token"], alg=wa.EDDSA)
    started = _sign_in_options(client, rp_app)
    assert started["options"]["allowCredentials"] == [] and started["has_passkeys"] is False, started
    resp = _verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN))
    assert resp.status == 200, resp
    assert resp.data["user"]["uid"] == user["user"]["uid"]
    # Usernameless without a user handle: nothing names the user.
    started = _sign_in_options(client, rp_app)
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN, user_handle=False)),
                   401, "auth/invalid-passkey")


def test_android_app_origin_is_accepted(client, rp_app):
    _, user = _user(client, rp_app)
    cred, _ = _registered(client, rp_app, user["access_token"], origin=ANDROID_ORIGIN)
    started = _sign_in_options(client, rp_app)
    assert _verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ANDROID_ORIGIN)).status == 200


# --- what a relying party must refuse -----------------------------------------------------------

def _signed_up_with_passkey(client, app, **kw):
    email, user = _user(client, app)
    cred, passkey = _registered(client, app, user["access_token"], **kw)
    return email, user, cred, passkey


def test_wrong_origin_is_refused(client, rp_app):
    _, user = _user(client, rp_app)
    _, options, registration, resp = _register(client, rp_app, user["access_token"], origin="https://evil.example")
    assert_problem(resp, 401, "auth/invalid-passkey")
    with pytest.raises(Exception):
        wa.independent_check_registration(registration, options, ORIGIN)
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app)
    started = _sign_in_options(client, rp_app, email)
    assertion = wa.get(cred, started["options"], "https://evil.example")
    with pytest.raises(Exception):
        wa.independent_check_assertion(assertion, started["options"], ORIGIN, cred, 0)
    assert_problem(_verify(client, rp_app, started["flow_id"], assertion), 401, "auth/invalid-passkey")


def test_wrong_rp_id_is_refused(client, rp_app):
    _, user = _user(client, rp_app)
    _, _, _, resp = _register(client, rp_app, user["access_token"], rp_id="evil.example")
    assert_problem(resp, 401, "auth/invalid-passkey")
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app)
    started = _sign_in_options(client, rp_app, email)
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN, rp_id="evil.example")),
                   401, "auth/invalid-passkey")


def test_replayed_challenge_is_refused(client, rp_app):
    email, user, cred, _ = _signed_up_with_passkey(client, rp_app)
    started = _sign_in_options(client, rp_app, email)
    assert _verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN)).status == 200
    # The same flow again, with a fresh and otherwise valid assertion: the flow is spent.
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN)),
                   401, "auth/invalid-passkey")
    # A registration answer sent twice: the second finds no open flow.
    _, options, registration, resp = _register(client, rp_app, user["access_token"])
    assert resp.status == 201, resp
    again = client.post("/v1/me/passkeys", {"response": registration}, app_key=rp_app["app_key"],
                        token=user["access_token"])
    assert_problem(again, 401, "auth/invalid-passkey")


def test_a_failed_attempt_spends_the_flow(client, rp_app):
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app)
    started = _sign_in_options(client, rp_app, email)
    bad = wa.tamper(wa.get(cred, started["options"], ORIGIN), "signature", lambda s: s[:-1] + bytes([s[-1] ^ 1]))
    assert_problem(_verify(client, rp_app, started["flow_id"], bad), 401, "auth/invalid-passkey")
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN)),
                   401, "auth/invalid-passkey")


def test_expired_flow_is_refused(client, rp_app):
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app)
    started = _sign_in_options(client, rp_app, email)
    db_tools.value(f"update passkey_flows set expires_at = now() - interval '1 second' "
                   f"where app_id = {db_tools.literal(rp_app['app_id'])} and id = {db_tools.literal(started['flow_id'])} "
                   f"returning 1")
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN)),
                   401, "auth/invalid-passkey")


def test_tampered_client_data_is_refused(client, rp_app):
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app)
    started = _sign_in_options(client, rp_app, email)
    assertion = wa.get(cred, started["options"], ORIGIN)
    # Same challenge and origin, one more field: the signed hash no longer matches.
    tampered = wa.tamper(assertion, "clientDataJSON", lambda raw: raw[:-1] + b',"x":1}')
    with pytest.raises(Exception):
        wa.independent_check_assertion(tampered, started["options"], ORIGIN, cred, 0)
    assert_problem(_verify(client, rp_app, started["flow_id"], tampered), 401, "auth/invalid-passkey")


@pytest.mark.parametrize("alg_name", ["ES256", "EdDSA", "RS256"])
def test_flipped_signature_bit_is_refused(client, rp_app, alg_name):
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app, alg=wa.ALGORITHMS[alg_name])
    started = _sign_in_options(client, rp_app, email)
    assertion = wa.get(cred, started["options"], ORIGIN)
    # A bit in the middle: inside r or s for a DER ECDSA signature, not its framing.
    flipped = wa.tamper(assertion, "signature", lambda s: s[:len(s) // 2] + bytes([s[len(s) // 2] ^ 0x01]) + s[len(s) // 2 + 1:])
    with pytest.raises(Exception):
        wa.independent_check_assertion(flipped, started["options"], ORIGIN, cred, 0)
    assert_problem(_verify(client, rp_app, started["flow_id"], flipped), 401, "auth/invalid-passkey")


def test_user_verification_when_the_app_requires_it(stack, client, rp_app):
    # Not required: a sign-in without UV works, at aal 1 with amr [hwk] only.
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app, uv=False)
    started = _sign_in_options(client, rp_app, email)
    resp = _verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN, uv=False))
    assert resp.status == 200, resp
    claims = _claims(resp.data)
    assert claims["amr"] == ["hwk"] and claims.get("aal", 1) == 1, claims
    # Required: neither registration nor sign-in without UV.
    stack.configure_app(rp_app["app_id"], webauthn_require_uv="true")
    _, user = _user(client, rp_app)
    options = _registration_options(client, rp_app, user["access_token"])
    assert options["authenticatorSelection"]["userVerification"] == "required", options
    _, registration = wa.create(options, ORIGIN, uv=False)
    with pytest.raises(Exception):
        wa.independent_check_registration(registration, options, ORIGIN, require_uv=True)
    assert_problem(client.post("/v1/me/passkeys", {"response": registration}, app_key=rp_app["app_key"],
                               token=user["access_token"]), 401, "auth/invalid-passkey")
    started = _sign_in_options(client, rp_app, email)
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN, uv=False)),
                   401, "auth/invalid-passkey")
    started = _sign_in_options(client, rp_app, email)
    assert _verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN, uv=True)).status == 200


def test_counter_regression_is_refused_with_a_security_event(client, rp_app, events):
    email, user, cred, passkey = _signed_up_with_passkey(client, rp_app)
    for _ in range(2):  # counts 1, 2
        started = _sign_in_options(client, rp_app, email)
        assert _verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN)).status == 200
    started = _sign_in_options(client, rp_app, email)
    cloned = wa.get(cred, started["options"], ORIGIN, count=1)
    with pytest.raises(Exception):
        wa.independent_check_assertion(cloned, started["options"], ORIGIN, cred, 2)
    assert_problem(_verify(client, rp_app, started["flow_id"], cloned), 401, "auth/invalid-passkey")
    uid = user["user"]["uid"]
    body = assert_event(events.wait_for("passkey.sign_count_regressed", lambda b: b.get("uid") == uid),
                        "passkey.sign_count_regressed", "PasskeySignCountRegressed", rp_app, uid)
    assert body["passkey_id"] == passkey["id"] and int(body["stored_count"]) == 2 and int(body["received_count"]) == 1, body


def test_synced_passkeys_count_zero_every_time(client, rp_app):
    email, _, cred, _ = _signed_up_with_passkey(client, rp_app, counting=False)
    for _ in range(2):
        started = _sign_in_options(client, rp_app, email)
        assert _verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN)).status == 200


def test_credential_of_another_app_is_refused(stack, client, rp_app, app_factory):
    _, _, cred, _ = _signed_up_with_passkey(client, rp_app)
    other = app_factory()
    stack.configure_app(other["app_id"], webauthn_rp_id=RP_ID, webauthn_origins=[ORIGIN])
    started = _sign_in_options(client, other)
    assert_problem(_verify(client, other, started["flow_id"], wa.get(cred, started["options"], ORIGIN)),
                   401, "auth/invalid-passkey")


def test_another_users_credential_is_refused_for_an_identifier(client, rp_app):
    email, _, _, _ = _signed_up_with_passkey(client, rp_app)
    _, _, other_cred, _ = _signed_up_with_passkey(client, rp_app)
    started = _sign_in_options(client, rp_app, email)
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(other_cred, started["options"], ORIGIN)),
                   401, "auth/invalid-passkey")


def test_not_configured_app_answers_422(client, app):
    assert_problem(client.post("/v1/auth/passkey/options", {}, app_key=app["app_key"]), 422,
                   "auth/passkey-not-configured")
    _, user = _user(client, app)
    assert_problem(client.post("/v1/me/passkeys/options", app_key=app["app_key"], token=user["access_token"]),
                   422, "auth/passkey-not-configured")


def test_signed_in_routes_need_a_token(client, rp_app):
    for method, path in (("POST", "/v1/me/passkeys/options"), ("GET", "/v1/me/passkeys"),
                         ("DELETE", "/v1/me/passkeys/pk_x")):
        assert_problem(client.request(method, path, app_key=rp_app["app_key"]), 401, "auth/invalid-token")


def test_bodies_are_validated(client, rp_app):
    assert_problem(client.post("/v1/auth/passkey/verify", {"flow_id": "x"}, app_key=rp_app["app_key"]),
                   422, "auth/validation-failed", locations=["body.response"])
    assert_problem(client.post("/v1/auth/passkey/verify", {"flow_id": "x", "response": "nope"},
                               app_key=rp_app["app_key"]), 422, "auth/validation-failed", locations=["body.response"])
    started = _sign_in_options(client, rp_app)
    assert_problem(_verify(client, rp_app, started["flow_id"], {"type": "public-key", "id": "!!"}), 401,
                   "auth/invalid-passkey")


# --- enumeration -------------------------------------------------------------------------------

def _shape(value):
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in sorted(value.items()) if key != "allowCredentials"}
    if isinstance(value, list):
        return [_shape(item) for item in value[:1]]
    return type(value).__name__


def test_options_do_not_reveal_whether_an_account_exists(client, rp_app):
    known, _, _, _ = _signed_up_with_passkey(client, rp_app)
    without_passkey, _ = _user(client, rp_app)
    unknown = unique_email("nobody")
    answers = {who: _sign_in_options(client, rp_app, who) for who in (known, without_passkey, unknown)}
    assert answers[known]["has_passkeys"] is True
    assert answers[without_passkey]["has_passkeys"] is False and answers[unknown]["has_passkeys"] is False
    shapes = {who: _shape(answer) for who, answer in answers.items()}
    assert shapes[known] == shapes[unknown] == shapes[without_passkey], shapes
    for answer in answers.values():
        listed = answer["options"]["allowCredentials"]
        assert len(listed) == 1 and set(listed[0]) == {"type", "id", "transports"}, listed
    # The decoy is deterministic: asking twice does not tell it from a real list.
    again = _sign_in_options(client, rp_app, unknown)
    assert again["options"]["allowCredentials"] == answers[unknown]["options"]["allowCredentials"]
    assert again["options"]["challenge"] != answers[unknown]["options"]["challenge"]


def test_options_timing_is_the_same_for_known_and_unknown_identifiers(client, rp_app):
    known, _, _, _ = _signed_up_with_passkey(client, rp_app)
    unknown = unique_email("nobody")
    timings = {known: [], unknown: []}
    for who in (known, unknown):  # warm both paths
        _sign_in_options(client, rp_app, who)
    for _ in range(50):
        for who in (known, unknown):
            started = time.perf_counter()
            resp = client.post("/v1/auth/passkey/options", {"identifier": who}, app_key=rp_app["app_key"])
            timings[who].append(time.perf_counter() - started)
            assert resp.status == 200, resp
    medians = {who: statistics.median(values) * 1000 for who, values in timings.items()}
    print(f"passkey options median: known {medians[known]:.2f} ms, unknown {medians[unknown]:.2f} ms")
    assert abs(medians[known] - medians[unknown]) < 5.0, medians


# --- list, rename, delete -----------------------------------------------------------------------

def test_rename_and_delete_rules(client, rp_app, events):
    email, user, cred, first = _signed_up_with_passkey(client, rp_app)
    token = user["access_token"]
    uid = user["user"]["uid"]
    resp = client.patch(f"/v1/me/passkeys/{first['id']}", {"name": "Laptop"}, app_key=rp_app["app_key"], token=token)
    assert resp.status == 200 and resp.data["name"] == "Laptop", resp
    assert_problem(client.patch(f"/v1/me/passkeys/{first['id']}", {"name": ""}, app_key=rp_app["app_key"], token=token),
                   422, "auth/validation-failed", locations=["body.name"])
    # Another user's passkey: not found, for rename and delete alike.
    _, other, _, theirs = _signed_up_with_passkey(client, rp_app)
    assert_problem(client.patch(f"/v1/me/passkeys/{theirs['id']}", {"name": "mine"}, app_key=rp_app["app_key"],
                                token=token), 404, "auth/not-found")
    assert_problem(client.delete(f"/v1/me/passkeys/{theirs['id']}", app_key=rp_app["app_key"], token=token),
                   404, "auth/not-found")
    # With a password, the only passkey can go.
    assert_no_content(client.delete(f"/v1/me/passkeys/{first['id']}", app_key=rp_app["app_key"], token=token))
    assert_event(events.wait_for("passkey.removed", lambda b: b.get("uid") == uid), "passkey.removed",
                 "PasskeyRemoved", rp_app, uid)
    started = _sign_in_options(client, rp_app)
    assert_problem(_verify(client, rp_app, started["flow_id"], wa.get(cred, started["options"], ORIGIN)),
                   401, "auth/invalid-passkey")
    # Without a password: two passkeys, one can go, the last cannot.
    a_cred, a = _registered(client, rp_app, token)
    _, b = _registered(client, rp_app, token)
    db_tools.value(f"update users set password_hash = null where app_id = {db_tools.literal(rp_app['app_id'])} "
                   f"and uid = {db_tools.literal(uid)} returning 1")
    assert_no_content(client.delete(f"/v1/me/passkeys/{b['id']}", app_key=rp_app["app_key"], token=token))
    assert_problem(client.delete(f"/v1/me/passkeys/{a['id']}", app_key=rp_app["app_key"], token=token),
                   409, "auth/last-sign-in-method")
    listed = client.get("/v1/me/passkeys", app_key=rp_app["app_key"], token=token)
    assert [p["id"] for p in listed.data] == [a["id"]], listed
    started = _sign_in_options(client, rp_app, email)
    assert _verify(client, rp_app, started["flow_id"], wa.get(a_cred, started["options"], ORIGIN)).status == 200


def test_gateway_role_reads_no_passkey_table(stack):
    for table in ("passkey_credentials", "passkey_flows", "app_webauthn_settings"):
        granted = db_tools.value(f"select has_any_column_privilege('identity_gateway', '{table}', 'SELECT')")
        assert granted == "f", table
