"""Auth hooks (docs/hooks.md): an app's own backend asked before a sign-up and before every
access token, against receivers the tests start on loopback, every call's signature checked with
the `standardwebhooks` package. A refusal is 403 auth/hook-refused with the hook's message; a
hook that cannot be asked follows its failure policy (fail_closed: 503 auth/hook-failed;
fail_open: the work goes on), each with an audit row."""

import json
import os
import time

import pytest

from admin_tools import admin, audit_rows
from conftest import ServiceProcess, _free_port
from hook_receiver import HookReceiver
from identity_client import Client, PASSWORD, assert_problem, new_guest_secret, unique_email
from jwt_tools import split

ALLOWANCES = ("IDENTITY_ALLOW_PRIVATE_OUTBOUND", "IDENTITY_ALLOW_INSECURE_OUTBOUND")


@pytest.fixture
def receiver():
    made = []

    def make(**kw):
        hook = HookReceiver(**kw)
        made.append(hook)
        return hook
    yield make
    for hook in made:
        hook.stop()


def save_hook(client, app, kind, hook, **settings):
    resp = admin(client, app, "PUT", f"/v1/admin/hooks/{kind}", {"url": hook.url, **settings})
    assert resp.status == 200, resp
    hook.secret = resp.data["secret"] or hook.secret
    return resp.data


def claims_of(tokens):
    return split(tokens["access_token"])[1]


def test_admin_api_saves_lists_and_deletes_with_the_secret_shown_once(client, app, receiver):
    hook = receiver()
    saved = save_hook(client, app, "before_token", hook)
    assert saved["secret"].startswith("whsec_")
    assert (saved["kind"], saved["timeout_ms"], saved["failure_policy"]) == ("before_token", 2000, "fail_closed")
    again = save_hook(client, app, "before_token", hook, timeout_ms=1500, failure_policy="fail_open")
    assert again["secret"] is None and (again["timeout_ms"], again["failure_policy"]) == (1500, "fail_open")
    rotated = save_hook(client, app, "before_token", hook, rotate_secret=True)
    assert rotated["secret"] not in (None, saved["secret"])
    listed = admin(client, app, "GET", "/v1/admin/hooks")
    assert listed.status == 200 and [h["kind"] for h in listed.data["hooks"]] == ["before_token"]
    assert listed.data["hooks"][0]["secret"] is None
    assert_problem(admin(client, app, "PUT", "/v1/admin/hooks/after_lunch", {"url": hook.url}), 404, "auth/not-found")
    assert_problem(admin(client, app, "PUT", "/v1/admin/hooks/before_token", {"url": hook.url, "timeout_ms": 6000}),
                   422, "auth/validation-failed", locations=["body.timeout_ms"])
    assert_problem(admin(client, app, "PUT", "/v1/admin/hooks/before_token",
                         {"url": hook.url, "failure_policy": "maybe"}), 422, "auth/validation-failed")
    assert admin(client, app, "DELETE", "/v1/admin/hooks/before_token").status == 204
    assert_problem(admin(client, app, "DELETE", "/v1/admin/hooks/before_token"), 404, "auth/not-found")
    assert admin(client, app, "GET", "/v1/admin/hooks").data["hooks"] == []


def test_before_sign_up_refuses_with_its_message(client, app, receiver):
    hook = receiver(answer=lambda p: {"action": "refuse", "message": "Sign-ups from this domain are closed."}
                    if p and p["user"]["email"].endswith("@blocked.example") else {"action": "allow"})
    save_hook(client, app, "before_sign_up", hook)
    email = f"x-{os.urandom(4).hex()}@blocked.example"
    problem = assert_problem(client.sign_up(app, email=email), 403, "auth/hook-refused")
    assert problem["detail"] == "Sign-ups from this domain are closed."
    payload, verified, headers = hook.calls[-1]
    assert verified and headers["webhook-id"].startswith("msg_")
    assert payload["type"] == "before_sign_up" and payload["method"] == "password"
    assert payload["app_id"] == app["app_id"] and payload["user"]["email"] == email
    # Nothing was created: the address is free, and the refusal is audited.
    assert_problem(client.sign_in(app, email=email), 401, "auth/invalid-credential")
    rows = audit_rows(client, app, action="auth_hook.refused")
    assert rows and rows[0]["detail"]["kind"] == "before_sign_up"
    assert client.sign_up(app).status == 201


def test_before_sign_up_sets_app_metadata_on_every_path(client, app, receiver):
    hook = receiver(answer={"action": "allow", "app_metadata": {"plan": "trial", "seats": 3}})
    save_hook(client, app, "before_sign_up", hook)
    signed = client.sign_up(app)
    assert signed.status == 201, signed
    user = admin(client, app, "GET", f"/v1/admin/users/{signed.data['user']['uid']}")
    assert user.data["app_metadata"] == {"plan": "trial", "seats": 3}, user.data
    guest = client.guest(app, new_guest_secret())
    assert guest.status in (200, 201), guest
    assert hook.payloads()[-1]["method"] == "guest" and hook.payloads()[-1]["user"]["is_guest"] is True
    calls = len(hook.calls)
    assert client.sign_in(app, email=signed.data["user"]["email"]).status == 200
    assert len(hook.calls) == calls, "a sign-in creates no account: no before_sign_up"
    assert all(verified for _, verified, _ in hook.calls)


def test_before_token_adds_claims_at_sign_in_and_refresh(client, app, receiver):
    hook = receiver(answer=lambda p: {"action": "allow",
                                      "claims": {"tier": "gold", "trigger": p["trigger"] if p else "?"}})
    save_hook(client, app, "before_token", hook)
    signed = client.sign_up(app)
    assert signed.status == 201, signed
    assert claims_of(signed.data)["tier"] == "gold" and claims_of(signed.data)["trigger"] == "sign_in"
    refreshed = client.refresh(app, signed.data["refresh_token"])
    assert refreshed.status == 200, refreshed
    assert claims_of(refreshed.data)["tier"] == "gold" and claims_of(refreshed.data)["trigger"] == "refresh"
    payload = hook.payloads()[-1]
    assert payload["type"] == "before_token" and payload["user"]["uid"] == signed.data["user"]["uid"]
    assert payload["session"]["id"] == signed.data["session_id"]
    assert all(verified for _, verified, _ in hook.calls)


@pytest.mark.parametrize("policy", ["fail_closed", "fail_open"])
def test_before_token_reserved_claim_follows_the_policy(client, app, receiver, policy):
    hook = receiver(answer={"action": "allow", "claims": {"sub": "someone-else"}})
    save_hook(client, app, "before_token", hook, failure_policy=policy)
    resp = client.sign_up(app)
    if policy == "fail_closed":
        assert_problem(resp, 503, "auth/hook-failed")
    else:
        assert resp.status == 201, resp
        assert claims_of(resp.data)["sub"] == resp.data["user"]["uid"]
    rows = audit_rows(client, app, action="auth_hook.failed")
    assert rows and "sub" in rows[0]["detail"]["reason"], rows
    assert rows[0]["detail"]["outcome"] == ("refused" if policy == "fail_closed" else "proceeded")


def test_before_token_refusal_ends_the_new_session(client, app, receiver):
    signed = client.sign_up(app)
    hook = receiver(answer={"action": "refuse", "message": "Account on hold."})
    save_hook(client, app, "before_token", hook)
    problem = assert_problem(client.sign_in(app, email=signed.data["user"]["email"]), 403, "auth/hook-refused")
    assert problem["detail"] == "Account on hold."
    assert_problem(client.refresh(app, signed.data["refresh_token"]), 403, "auth/hook-refused")


@pytest.mark.parametrize("policy", ["fail_closed", "fail_open"])
def test_hook_that_times_out_follows_its_policy(client, app, receiver, policy):
    hook = receiver(delay=2.0, answer={"action": "refuse", "message": "too late to count"})
    save_hook(client, app, "before_sign_up", hook, timeout_ms=300, failure_policy=policy)
    started = time.monotonic()
    resp = client.sign_up(app)
    if policy == "fail_closed":
        assert_problem(resp, 503, "auth/hook-failed")
    else:
        assert resp.status == 201, resp
    assert time.monotonic() - started < 1.9, "the service waited past the hook's timeout"
    rows = audit_rows(client, app, action="auth_hook.failed")
    assert rows and "timed out" in rows[0]["detail"]["reason"] and rows[0]["detail"]["failure_policy"] == policy


@pytest.mark.parametrize("answer,status", [
    (b"not json", 200), ({"action": "allow", "extra": 1}, 200), ({"action": "allow"}, 500),
    (b'{"action": "allow", "pad": "' + b"x" * 17000 + b'"}', 200),
])
def test_bad_answers_follow_the_policy(client, app, receiver, answer, status):
    hook = receiver(answer=answer, status=status)
    save_hook(client, app, "before_sign_up", hook, failure_policy="fail_closed")
    assert_problem(client.sign_up(app), 503, "auth/hook-failed")
    assert audit_rows(client, app, action="auth_hook.failed")


def test_another_apps_hook_is_never_called(client, app, other_app, receiver):
    hook = receiver(answer={"action": "refuse"})
    save_hook(client, app, "before_sign_up", hook)
    save_hook(client, app, "before_token", hook)
    assert client.sign_up(other_app).status == 201
    assert client.guest(other_app, new_guest_secret()).status in (200, 201)
    assert hook.calls == []
    assert_problem(client.sign_up(app), 403, "auth/hook-refused")
    assert len(hook.calls) == 1


@pytest.fixture(scope="module")
def strict_gateway(stack):
    """A second gateway without the loopback and http allowances, on the shared store and broker."""
    port = _free_port()
    env = {k: v for k, v in stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                          IDENTITY_METRICS_PORT=str(_free_port()),
                                          IDENTITY_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}").items()
           if k not in ALLOWANCES}
    process = ServiceProcess("identity-gateway-strict-hooks", [stack.binary("identity-gateway")], env,
                             os.path.join(stack.log_dir, "gateway-strict-hooks.log"))
    process.start()
    strict = Client(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if strict.get("/readyz", timeout=2).status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        yield strict
    finally:
        process.stop()


@pytest.mark.parametrize("url,fragment", [
    ("http://api.example.com/hook", "https"),
    ("https://127.0.0.1:8443/hook", "loopback"),
    ("https://169.254.169.254/latest/meta-data/", "cloud metadata"),
    ("https://10.1.2.3/hook", "private"),
])
def test_ssrf_url_refused_at_save(strict_gateway, app, url, fragment):
    resp = admin(strict_gateway, app, "PUT", "/v1/admin/hooks/before_token", {"url": url})
    problem = assert_problem(resp, 422, "auth/validation-failed", locations=["body.url"])
    assert fragment in problem["errors"][0]["message"], problem


def wait_until(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_send_email_hook_delivers_instead_of_our_smtp(client, app, receiver, smtp_sink):
    hook = receiver(answer={})
    save_hook(client, app, "send_email", hook)
    email = unique_email("hooked")
    assert client.email_code_send(app, email).status == 202
    assert wait_until(lambda: hook.calls), "the send_email hook was not called"
    payload, verified, _ = hook.calls[0]
    assert verified and payload["type"] == "send_email" and payload["to"] == email
    assert payload["code"] and payload["code"] in payload["text"] and payload["subject"] and payload["language"] == "en"
    # The code the app delivered signs in; our SMTP server never saw the message.
    signed = client.email_code_verify(app, email=email, code=payload["code"])
    assert signed.status in (200, 201), signed
    assert smtp_sink.messages_to(email) == []


def test_send_email_hook_failing_open_falls_back_to_our_smtp(client, app, receiver, smtp_sink):
    hook = receiver(answer={"action": "allow"}, status=500)
    save_hook(client, app, "send_email", hook, failure_policy="fail_open")
    email = unique_email("fallback")
    assert client.email_code_send(app, email).status == 202
    assert smtp_sink.wait_for(email, timeout=15), "fail_open: our own mail should have been sent"
    assert hook.calls and hook.calls[0][1]
    rows = audit_rows(client, app, action="auth_hook.failed")
    assert rows and rows[0]["detail"]["kind"] == "send_email" and rows[0]["detail"]["outcome"] == "proceeded"


def test_identityctl_sets_lists_and_deletes_a_hook(stack, client, app, receiver):
    def ctl(*args):
        done = stack.ctl(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout
    hook = receiver(answer={"action": "allow", "claims": {"via": "identityctl"}})
    saved = json.loads(ctl("hooks", "set", app["app_id"], "before_token", "--url", hook.url,
                           "--timeout-ms", "1500", "--failure-policy", "fail_open"))
    assert saved["secret"].startswith("whsec_") and saved["timeout_ms"] == 1500 and saved["failure_policy"] == "fail_open"
    hook.secret = saved["secret"]
    listed = json.loads(ctl("hooks", "list", app["app_id"]))
    assert [h["kind"] for h in listed["hooks"]] == ["before_token"] and listed["hooks"][0]["secret"] is None
    signed = client.sign_up(app)
    assert claims_of(signed.data)["via"] == "identityctl" and hook.calls[-1][1]
    ctl("hooks", "delete", app["app_id"], "before_token")
    assert admin(client, app, "GET", "/v1/admin/hooks").data["hooks"] == []
    # Strict flags: a mistyped one is refused, not ignored.
    refused = stack.ctl("hooks", "set", app["app_id"], "before_token", "--url", hook.url, "--timeout", "1500")
    assert refused.returncode == 2 and "unknown flag --timeout" in refused.stderr


def test_send_sms_hook_delivers_instead_of_our_account(stack, client, configured_app_factory, receiver):
    from test_phone import french_mobile, sms_files
    app = configured_app_factory(sms_allowed_calling_codes="33")
    hook = receiver(answer={"action": "sent"})
    save_hook(client, app, "send_sms", hook)
    sign_up = receiver(answer={"action": "allow", "app_metadata": {"via": "phone"}})
    save_hook(client, app, "before_sign_up", sign_up)
    phone = french_mobile()
    resp = client.post("/v1/auth/phone/send", {"phone": phone}, app_key=app["app_key"])
    assert resp.status == 202, resp
    assert wait_until(lambda: hook.calls), "the send_sms hook was not called"
    payload, verified, _ = hook.calls[0]
    assert verified and payload["type"] == "send_sms" and payload["to"] == phone and payload["language"] == "en"
    code = next(word for word in payload["text"].replace(".", " ").split() if word.isdigit() and len(word) >= 6)
    signed = client.post("/v1/auth/phone/verify", {"session_id": resp.data["session_id"], "code": code},
                         app_key=app["app_key"])
    assert signed.status in (200, 201), signed
    assert sign_up.payloads()[-1]["method"] == "phone" and sign_up.payloads()[-1]["user"]["phone"] == phone
    user = admin(client, app, "GET", f"/v1/admin/users/{signed.data['user']['uid']}")
    assert user.data["app_metadata"] == {"via": "phone"} and user.data["phone"] == phone
    assert sms_files(stack, phone) == [], "our own SMS transport should not have been used"
