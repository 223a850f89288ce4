"""The retention purge (docs/api-contract.md, "Operating the service"): spent or expired nonces, codes and
refresh tokens and ended sessions go once the retention period (30 days by default) has passed,
guests unused for a year go with `user.deleted`, in batches that never stall sign-ins. The suite
runs the purge every second; tests age rows in the database instead of waiting a month."""

import time
from concurrent.futures import ThreadPoolExecutor

import db_tools
from identity_client import assert_problem, new_guest_secret, unique_email
from mail_flows import email_code

MONTH = 31 * 86400
YEAR = 366 * 86400
PURGE_WAIT = 20


def _count(sql):
    return int(db_tools.value(sql))


def _gone(client, sql, timeout=PURGE_WAIT):
    return client.wait_for(lambda: _count(sql) == 0, timeout=timeout, interval=0.5)


def test_spent_and_ended_rows_are_purged_after_the_retention_period(client, smtp_sink, app):
    app_id = db_tools.literal(app["app_id"])
    email = unique_email()
    first = client.new_user(app, email=email)
    refreshed = client.refresh(app, first["refresh_token"])
    assert refreshed.status == 200
    second = client.sign_in(app, email=email).data
    assert client.sign_out(app, second["access_token"]).status == 204
    nonce = client.new_nonce(app)
    email_code(client, smtp_sink, app, unique_email())

    spent = db_tools.token_hash(first["refresh_token"])
    db_tools.rows(f"update refresh_tokens set spent_at = spent_at - interval '{MONTH} seconds' "
                  f"where token_hash = {spent}")
    db_tools.rows(f"update sessions set ended_at = ended_at - interval '{MONTH} seconds' "
                  f"where app_id = {app_id} and id = {db_tools.literal(second['session_id'])}")
    db_tools.rows(f"update auth_nonces set expires_at = expires_at - interval '{MONTH} seconds' "
                  f"where app_id = {app_id}")
    db_tools.rows(f"update verification_codes set expires_at = expires_at - interval '{MONTH} seconds' "
                  f"where app_id = {app_id}")

    assert _gone(client, f"select count(*) from refresh_tokens where token_hash = {spent}")
    assert _gone(client, f"select count(*) from sessions where app_id = {app_id} "
                         f"and id = {db_tools.literal(second['session_id'])}")
    assert _gone(client, f"select count(*) from auth_nonces where app_id = {app_id}")
    assert _gone(client, f"select count(*) from verification_codes where app_id = {app_id}")
    # What is still in use stays: the live session and its current refresh token.
    assert client.me(app, refreshed.data["access_token"]).status == 200
    assert client.refresh(app, refreshed.data["refresh_token"]).status == 200
    # The nonce is gone with its row: a sign-in could not spend it any more anyway (expired).
    assert nonce


def test_a_recent_spent_token_is_kept_so_its_reuse_is_still_theft(client, app):
    signed_up = client.new_user(app)
    assert client.refresh(app, signed_up["refresh_token"]).status == 200
    time.sleep(3)  # several purges
    assert _count("select count(*) from refresh_tokens where token_hash = "
                  f"{db_tools.token_hash(signed_up['refresh_token'])}") == 1


def test_guests_unused_for_a_year_are_deleted_with_user_deleted(client, app, events):
    stale, _ = client.new_guest(app)
    fresh, _ = client.new_guest(app)
    uid = db_tools.literal(stale["user"]["uid"])
    db_tools.rows(f"update users set created_at = created_at - interval '{YEAR} seconds' where uid = {uid}")
    db_tools.rows(f"update sessions set last_seen_at = last_seen_at - interval '{YEAR} seconds' where uid = {uid}")
    assert _gone(client, f"select count(*) from users where uid = {uid}")
    events.wait_for("user.deleted", lambda b: b.get("uid") == stale["user"]["uid"])
    assert_problem(client.me(app, stale["access_token"]), 401, "auth/invalid-token")
    assert client.me(app, fresh["access_token"]).status == 200


def test_known_devices_unseen_for_the_retention_period_are_forgotten(client, app):
    """Security alerts' known devices: a sign-in from a known device moves its last_seen_at
    (once a day at most); one unseen for IDENTITY_KNOWN_DEVICE_RETENTION_SECONDS (a year) goes."""
    email = unique_email("devices")
    assert client.sign_up(app, email=email, headers={"User-Agent": "Old phone/1.0"}).status == 201
    uid = db_tools.literal(client.sign_in(app, email=email, headers={"User-Agent": "Laptop/2.0"}).data["user"]["uid"])
    devices = f"select count(*) from user_known_devices where uid = {uid}"
    assert _count(devices) == 2
    db_tools.rows(f"update user_known_devices set first_seen_at = first_seen_at - interval '{YEAR + 86400} seconds', "
                  f"last_seen_at = last_seen_at - interval '{YEAR} seconds' where uid = {uid} "
                  f"and fingerprint = sha256('Old phone/1.0'::bytea)")
    db_tools.rows(f"update user_known_devices set first_seen_at = first_seen_at - interval '3 days', "
                  f"last_seen_at = last_seen_at - interval '2 days' where uid = {uid} "
                  f"and fingerprint = sha256('Laptop/2.0'::bytea)")
    assert client.wait_for(lambda: _count(devices) == 1, timeout=PURGE_WAIT, interval=0.5)
    # The laptop, seen two days ago, stays; signing in from it again moves its last_seen_at only.
    assert client.sign_in(app, email=email, headers={"User-Agent": "Laptop/2.0"}).status == 200
    row = db_tools.rows(f"select last_seen_at > now() - interval '1 minute', "
                        f"first_seen_at < now() - interval '2 days' from user_known_devices where uid = {uid}")
    assert row == [["t", "t"]], row


def test_purging_100k_rows_does_not_stall_sign_in(client, app):
    """100,000 spent refresh tokens a month old: the purge deletes them in batches of 1,000,
    each its own short transaction, while sign-ins go on answering."""
    signed_up = client.new_user(app)
    app_id = db_tools.literal(app["app_id"])
    session = db_tools.literal(signed_up["session_id"])
    db_tools.rows(f"""insert into refresh_tokens (app_id, token_hash, session_id, created_at, expires_at,
                      spent_at)
                      select {app_id}, sha256(('bulk-' || g || '-' || {session})::bytea), {session},
                             now() - interval '40 days', now() + interval '50 days',
                             now() - interval '{MONTH + 86400} seconds'
                      from generate_series(1, 100000) g""", timeout=120)
    latencies = []

    def sign_ins():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            resp = client.guest(app, new_guest_secret())
            assert resp.status == 200, resp
            latencies.append(resp.elapsed)
            if _count(f"select count(*) from refresh_tokens where session_id = {session} and spent_at is not null") == 0:
                return True
        return False

    with ThreadPoolExecutor(max_workers=2) as pool:
        done = [f.result() for f in [pool.submit(sign_ins) for _ in range(2)]]
    assert any(done), "the 100k rows were not purged within 60 s"
    assert latencies and max(latencies) < 2.0, f"slowest sign-in during the purge: {max(latencies):.2f} s"
    assert client.me(app, signed_up["access_token"]).status == 200


def test_apple_notification_records_go_once_too_old_to_come_again(client, app):
    """An Apple notification is refused once its `iat` is 7 days old, so the record that makes
    it apply once goes after that (with a day's margin); a recent one stays."""
    app_id = db_tools.literal(app["app_id"])
    old, recent = "old-" + unique_email("jti"), "recent-" + unique_email("jti")
    db_tools.rows(f"insert into apple_notifications (app_id, event_id, type, subject, received_at) values "
                  f"({app_id}, {db_tools.literal(old)}, 'consent-revoked', 's1', now() - interval '9 days'), "
                  f"({app_id}, {db_tools.literal(recent)}, 'consent-revoked', 's2', now() - interval '6 days')")
    assert _gone(client, f"select count(*) from apple_notifications where event_id = {db_tools.literal(old)}")
    assert _count(f"select count(*) from apple_notifications where event_id = {db_tools.literal(recent)}") == 1


def test_finished_webhook_deliveries_and_sent_mail_records_go_after_their_retention(client, app):
    """The delivery log keeps a finished webhook delivery (with its attempts) for
    IDENTITY_WEBHOOK_DELIVERY_RETENTION_SECONDS (7 days), the mail ledger a sent message for the
    retention period; what is pending, or younger, stays."""
    app_id = db_tools.literal(app["app_id"])
    endpoint = db_tools.literal("whe_retention_" + unique_email().split("@")[0].replace(".", "_"))
    db_tools.rows(f"insert into webhook_endpoints (id, app_id, url, event_types, secret_enc) values "
                  f"({endpoint}, {app_id}, 'https://example.com/hook', '{{*}}', '\\x00') returning 1")
    ids = {}  # The pending one is due tomorrow: no worker tries to send it meanwhile.
    for name, state, age in (("old", "delivered", "8 days"), ("dead", "dead", "8 days"), ("young", "delivered", "1 day"),
                             ("pending", "pending", None)):
        finished = f"now() - interval '{age}'" if age else "null"
        ids[name] = db_tools.value(
            f"insert into webhook_deliveries (endpoint_id, app_id, event_id, event_type, ordering_key, payload, state, "
            f"finished_at, created_at, next_attempt_at) values ({endpoint}, {app_id}, 'evt_{name}', 'user.created', '', "
            f"'{{}}', '{state}', {finished}, now() - interval '9 days', now() + interval '1 day') returning id")
        db_tools.rows(f"insert into webhook_attempts (delivery_id, endpoint_id, app_id, duration_ms, outcome) values "
                      f"({ids[name]}, {endpoint}, {app_id}, 5, 'failed') returning 1")
    old_mail, young_mail = (db_tools.literal("msg_retention_%s_%s" % (n, endpoint.strip("'"))) for n in ("old", "young"))
    db_tools.rows(f"insert into mail_deliveries (message_id, app_id, status, updated_at) values "
                  f"({old_mail}, {app_id}, 'sent', now() - interval '{MONTH} seconds'), "
                  f"({young_mail}, {app_id}, 'sent', now()) returning 1")

    assert _gone(client, f"select count(*) from webhook_deliveries where id in ({ids['old']}, {ids['dead']})")
    assert _gone(client, f"select count(*) from webhook_attempts where delivery_id in ({ids['old']}, {ids['dead']})")
    assert _gone(client, f"select count(*) from mail_deliveries where message_id = {old_mail}")
    assert _count(f"select count(*) from webhook_deliveries where id in ({ids['young']}, {ids['pending']})") == 2
    assert _count(f"select count(*) from webhook_attempts where delivery_id in ({ids['young']}, {ids['pending']})") == 2
    assert _count(f"select count(*) from mail_deliveries where message_id = {young_mail}") == 1
