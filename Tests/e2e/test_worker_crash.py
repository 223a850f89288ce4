"""The token worker killed (SIGKILL, no clean-up) in the middle of a burst of sign-ups: each
sign-up either succeeded (201) or answered 503 `auth/unavailable`, and a 503 left either nothing
or a whole account (user, session and refresh token: sign-up writes them in one transaction),
never half of one. The worker comes back either at once (it gets the commands the dead one left
unacked) or only once every caller has had its answer (those commands have expired by then). The
test kills a process every other test shares, so conftest runs it last (marker `disruptive`) and
it starts the worker again even when it fails."""

import http.client
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import db_tools
from identity_client import assert_problem, unique_email

pytestmark = pytest.mark.disruptive

SIGN_UPS = 20
FIRST_ANSWER_WITHIN = 10.0  # seconds: the burst has reached the worker by then
WORKER_BACK_WITHIN = 20.0   # seconds for a fresh worker to take commands


def _accounts(app):
    """{lower(email): (uid, sessions, refresh tokens)} for every user of the app, counted
    straight in the store."""
    found = db_tools.rows(
        "select lower(u.email), u.uid, "
        "(select count(*) from sessions s where s.app_id = u.app_id and s.uid = u.uid), "
        "(select count(*) from refresh_tokens r join sessions s "
        " on s.app_id = r.app_id and s.id = r.session_id "
        " where s.app_id = u.app_id and s.uid = u.uid) "
        f"from users u where u.app_id = {db_tools.literal(app['app_id'])}")
    return {email: (uid, int(sessions), int(tokens)) for email, uid, sessions, tokens in found}


def _half_written(app):
    """The app's users without a session and sessions without a refresh token (none of either
    can come out of sign-up)."""
    app_id = db_tools.literal(app["app_id"])
    lonely_users = db_tools.rows(
        f"select u.uid from users u where u.app_id = {app_id} and not exists "
        "(select 1 from sessions s where s.app_id = u.app_id and s.uid = u.uid)")
    bare_sessions = db_tools.rows(
        f"select s.id from sessions s where s.app_id = {app_id} and not exists "
        "(select 1 from refresh_tokens r where r.app_id = s.app_id and r.session_id = s.id)")
    return [row[0] for row in lonely_users], [row[0] for row in bare_sessions]


@pytest.mark.parametrize("restart", ["at-once", "after-the-answers"])
def test_sign_ups_survive_a_killed_token_worker_whole_or_not_at_all(stack, client, app, restart):
    emails = [unique_email(f"crash{i}") for i in range(SIGN_UPS)]
    gateway_pid = stack.gateway.pid
    worker_pid = stack.worker.pid
    answer_limit = stack.request_timeout_ms / 1000 + 10  # a hang, not a slow 503
    first_answer = threading.Event()

    def sign_up(email):
        try:
            return client.sign_up(app, email=email, timeout=answer_limit)
        except (OSError, http.client.HTTPException) as exc:  # socket timeouts included
            return exc
        finally:
            first_answer.set()

    try:
        with ThreadPoolExecutor(max_workers=SIGN_UPS) as pool:
            futures = [pool.submit(sign_up, email) for email in emails]
            # Kill as soon as the worker has answered one: the others are queued or running.
            assert first_answer.wait(FIRST_ANSWER_WITHIN), \
                f"no sign-up answered within {FIRST_ANSWER_WITHIN:.0f} s"
            stack.kill_token_worker()
            if restart == "at-once":
                stack.start_worker()
            answers = dict(zip(emails, (f.result() for f in futures)))
    finally:
        if not stack.worker.alive():
            stack.start_worker()
    assert stack.worker.pid != worker_pid

    # The new worker takes commands (a sign-in of an unknown address writes nothing). By then
    # every command of the burst has run or expired: each carries its caller's deadline.
    probe = unique_email("probe")
    back = client.wait_for(lambda: client.sign_in(app, email=probe).status != 503,
                           timeout=WORKER_BACK_WITHIN)
    assert back, f"the restarted token worker took no command within {WORKER_BACK_WITHIN:.0f} s"

    tally = {status: sum(1 for r in answers.values() if getattr(r, "status", None) == status)
             for status in (201, 503)}
    summary = f"{tally[201]} × 201, {tally[503]} × 503 of {SIGN_UPS}"
    accounts = _accounts(app)
    for email, resp in answers.items():
        assert not isinstance(resp, Exception), \
            f"sign-up of {email} got no answer within {answer_limit:.0f} s ({resp!r}); {summary}"
        account = accounts.get(email.lower())
        # A 409 here would be the caller's own account: the killed worker committed it, the
        # broker handed the unacked command to the new worker, and that one ran it again.
        assert resp.status in (201, 503), \
            f"sign-up of {email}: {resp!r}; in the store: " \
            f"{'user %s, %d session(s), %d refresh token(s)' % account if account else 'nothing'}" \
            f" ({summary})"
        if resp.status == 201:
            assert account is not None, f"{email} answered 201 but has no user row"
            assert account[0] == resp.data["user"]["uid"], (email, account, resp.data["user"])
        else:
            assert_problem(resp, 503, "auth/unavailable")
        if account is not None:
            uid, sessions, tokens = account
            assert sessions >= 1 and tokens >= 1, \
                f"half-written sign-up of {email} (answered {resp.status}): user {uid} with " \
                f"{sessions} session(s) and {tokens} refresh token(s); {summary}"
    if restart == "after-the-answers":
        # Nothing took the dead worker's commands: the kill did catch the burst in flight.
        assert tally[503] >= 1, f"the kill came after the whole burst ({summary})"
    lonely_users, bare_sessions = _half_written(app)
    assert not lonely_users, f"users without a session: {lonely_users} ({summary})"
    assert not bare_sessions, f"sessions without a refresh token: {bare_sessions} ({summary})"

    # A 503 was safe to retry: with nothing written the address is free; with the whole account
    # written it is taken.
    for email, resp in answers.items():
        if resp.status != 503:
            continue
        again = client.sign_up(app, email=email)
        if email.lower() in accounts:
            assert_problem(again, 409, "auth/email-already-in-use")
        else:
            assert again.status == 201, \
                f"retry of {email} after a 503 with nothing written: {again!r}"

    # And the system as a whole works: a fresh account signs up and in.
    fresh = client.new_user(app)
    signed_in = client.sign_in(app, email=fresh["user"]["email"])
    assert signed_in.status == 200, signed_in
    assert signed_in.data["user"]["uid"] == fresh["user"]["uid"], signed_in.data
    me = client.me(app, signed_in.data["access_token"])
    assert me.status == 200 and me.data["uid"] == fresh["user"]["uid"], me
    lonely_users, bare_sessions = _half_written(app)
    assert not lonely_users and not bare_sessions, (lonely_users, bare_sessions)

    assert stack.gateway.pid == gateway_pid and stack.gateway.alive()
    assert stack.worker.alive()
