"""A refresh racing the sign-out of its own session (issue: account takeover, "refresh/sign-out
race"). Whichever commits first, once both are done nothing from that session may work: the
refresh either failed, or its pair is refused like every other token of the ended session. And
the refresh must never have acted on the session after the sign-out ended it: a refresh that
decided on a stale view of the session (the session row not locked) extended an ended session
and answered with a token pair signed after the sign-out, which a backend checking only the JWT
would accept until `exp`."""

import threading
from concurrent.futures import ThreadPoolExecutor

import db_tools
from identity_client import assert_problem

ROUNDS = 100


def _race(client, app, tokens):
    """Refresh and sign-out of one session at the same moment; returns both answers."""
    barrier = threading.Barrier(2)

    def refresh():
        barrier.wait(timeout=30)
        return client.refresh(app, tokens["refresh_token"])

    def sign_out():
        barrier.wait(timeout=30)
        return client.sign_out(app, tokens["access_token"])

    with ThreadPoolExecutor(max_workers=2) as pool:
        refreshed, signed_out = pool.submit(refresh), pool.submit(sign_out)
        return refreshed.result(), signed_out.result()


def _last_change_was_a_refresh(session_id):
    """True when the session row's current version was written by the transaction that also
    stored one of its refresh tokens (a rotation's successor, or the sign-up's first token):
    i.e. the sign-out was not the session's last change."""
    sid = db_tools.literal(session_id)
    return db_tools.value(
        "select exists (select 1 from sessions s join refresh_tokens rt "
        "on rt.app_id = s.app_id and rt.session_id = s.id "
        f"where s.id = {sid} and rt.xmin = s.xmin)") == "t"


def test_refresh_racing_sign_out_never_leaves_a_working_token(client, app):
    refreshes_won = 0
    for _ in range(ROUNDS):
        tokens = client.new_user(app)
        refreshed, signed_out = _race(client, app, tokens)
        # The sign-out's access token was valid when both started: it always ends the session.
        assert signed_out.status == 204, signed_out
        sid = tokens["session_id"]
        assert db_tools.value(f"select ended_at is not null from sessions where id = {db_tools.literal(sid)}") == "t"
        assert not _last_change_was_a_refresh(sid), (
            f"a refresh of {sid} committed after its sign-out and extended the ended session "
            f"(refresh answered {refreshed.status})")
        if refreshed.status == 200:
            refreshes_won += 1
            pair = refreshed.data
            assert pair["session_id"] == sid
            assert_problem(client.refresh(app, pair["refresh_token"]), 401, "auth/refresh-token-revoked")
            assert_problem(client.me(app, pair["access_token"]), 401, "auth/invalid-token")
        else:
            assert_problem(refreshed, 401, "auth/refresh-token-revoked")
        # Neither the presented token (spent or not) nor the session's access token works.
        assert_problem(client.refresh(app, tokens["refresh_token"]), 401, "auth/refresh-token-revoked")
        assert_problem(client.me(app, tokens["access_token"]), 401, "auth/invalid-token")
    # Both orders happen over a hundred rounds; a run where one never does shows nothing raced.
    assert 0 < refreshes_won < ROUNDS, f"the refresh won {refreshes_won} of {ROUNDS} rounds"
