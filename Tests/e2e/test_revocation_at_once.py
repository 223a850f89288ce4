"""A revoked session's access tokens are refused at once by every gateway replica (docs/api-contract.md,
"Tokens and sessions"): the gateway that did not carry the sign-out, and that has just served
the token many times (so anything it might cache about it is warm), refuses it on the very next
request after the sign-out's answer, with /v1/me under load from other clients meanwhile."""

import os
import threading
import time

import pytest

from conftest import ServiceProcess, _free_port
from identity_client import Client, assert_no_content, assert_problem, unique_email
from jwt_tools import split


@pytest.fixture(scope="module")
def replica(stack):
    """A second gateway on the same store and broker, as a load balancer would spread them."""
    port = _free_port()
    process = ServiceProcess("identity-gateway-2", [stack.binary("identity-gateway")],
                             stack.env_for("identity-gateway", IDENTITY_HTTP_PORT=str(port),
                                           IDENTITY_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}"),
                             os.path.join(stack.log_dir, "gateway-2.log"))
    process.start()
    client = Client(f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if client.get("/readyz", timeout=2).status == 200:
                break
        except OSError:
            pass
        time.sleep(0.2)
    else:
        process.stop()
        pytest.fail(f"second gateway not ready:\n{process.tail()}")
    yield client
    process.stop()


def _warm(client, app, token, times=20):
    for _ in range(times):
        resp = client.me(app, token)
        assert resp.status == 200, resp


class _Load:
    """Other users' GET /v1/me on the replica while the test runs."""

    def __init__(self, client, app, token):
        self.stop = threading.Event()
        self.failures = []
        self.count = 0
        self.threads = [threading.Thread(target=self._run, args=(client, app, token)) for _ in range(4)]

    def _run(self, client, app, token):
        while not self.stop.is_set():
            resp = client.me(app, token)
            self.count += 1
            if resp.status != 200:
                self.failures.append(resp.status)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join()


@pytest.mark.parametrize("how", ["sign_out", "sign_out_all", "delete_session"])
def test_signed_out_token_is_refused_at_once_by_the_other_replica(client, replica, app, how):
    bystander = client.new_user(app)
    email = unique_email()
    tokens = client.new_user(app, email=email)
    other = client.sign_in(app, email=email, headers={"X-Forwarded-For": "203.0.113.51"}).data
    _warm(replica, app, tokens["access_token"])
    _warm(replica, app, other["access_token"])
    with _Load(replica, app, bystander["access_token"]) as load:
        if how == "sign_out":
            assert_no_content(client.sign_out(app, tokens["access_token"]))
        elif how == "sign_out_all":
            assert_no_content(client.sign_out_all(app, other["access_token"]))
        else:
            sid = split(tokens["access_token"])[1]["sid"]
            assert_no_content(client.delete(f"/v1/me/sessions/{sid}", app_key=app["app_key"],
                                            token=other["access_token"]))
        # The very next request to the replica that never saw the sign-out.
        assert_problem(replica.me(app, tokens["access_token"]), 401, "auth/invalid-token")
        assert_problem(replica.get("/v1/me/sessions", app_key=app["app_key"], token=tokens["access_token"]),
                       401, "auth/invalid-token")
    assert load.count > 0 and not load.failures, (load.count, load.failures[:5])
    # The user's other session: ended too by sign-out-all, untouched otherwise.
    assert replica.me(app, other["access_token"]).status == (401 if how == "sign_out_all" else 200)


def test_refresh_rotation_keeps_the_session_live_on_the_replica(client, replica, app):
    """The one-round-trip rotation must not end or hide the session: the new access token works
    on the replica at once, the spent refresh token's retry within the grace gives the same pair."""
    tokens = client.new_user(app)
    rotated = client.refresh(app, tokens["refresh_token"])
    assert rotated.status == 200, rotated
    _warm(replica, app, rotated.data["access_token"], times=2)
    _warm(replica, app, tokens["access_token"], times=2)
    again = client.refresh(app, tokens["refresh_token"])
    assert again.status == 200 and again.data["refresh_token"] == rotated.data["refresh_token"], again
