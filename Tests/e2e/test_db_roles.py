"""One PostgreSQL role per process kind (migrations/0010_process_roles.sql): each process of the
stack logs in as its own role, the
gateway's cannot read a secret column (password and guest-secret hashes, sealed keys, code
HMACs, an app's secret key hash) nor change anything, the mailer's cannot read users at all,
and what a later migration creates is granted to nobody by default.

Every refusal is PostgreSQL's own `permission denied`, from psql logged in with the role's URL
(the stack's `db_urls`, as the processes themselves use them); a positive control next to each
shows the statement is otherwise fine and the secret really is there."""

import subprocess
import uuid

import pytest

import db_tools

SECRET_COLUMNS = [
    ("users", "password_hash"),
    ("users", "guest_secret_hmac"),
    ("signing_keys", "private_key_enc"),
    ("verification_codes", "code_hmac"),
    ("app_provider_settings", "apple_private_key_enc"),
    ("user_identities", "apple_refresh_token_enc"),
    ("apps", "secret_key_hash"),
    ("mfa_factors", "secret_enc"),
    ("mfa_backup_codes", "code_hmac"),
    ("mfa_challenges", "token_hash"),
]


def psql(url, sql):
    """Runs `sql` as the URL's role; returns the finished process (stdout rows, stderr)."""
    return subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                          capture_output=True, text=True, timeout=30)


def assert_refused(url, sql):
    done = psql(url, sql)
    assert done.returncode != 0, f"{sql!r} was allowed: {done.stdout!r}"
    # DDL on another's table says "must be owner"; everything else "permission denied".
    assert "permission denied" in done.stderr or "must be owner" in done.stderr, \
        f"{sql!r} failed otherwise: {done.stderr}"


def assert_allowed(url, sql):
    done = psql(url, sql)
    assert done.returncode == 0, f"{sql!r} was refused: {done.stderr}"
    return [line.split("|") for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def populated(stack):
    """A user with a password, a guest, a pending email code: the secret columns hold values."""
    client = stack.client
    app = stack.create_app()
    email = f"roles-{uuid.uuid4().hex[:8]}@example.com"
    resp = client.sign_up(app, email=email, password="a long passphrase")
    assert resp.status == 201, resp.json
    tokens = resp.json["data"]
    assert client.email_code_send(app, f"code-{email}").status == 202
    client.new_guest(app)
    return {"app": app, "email": email, "uid": tokens["user"]["uid"], "session_id": tokens["session_id"]}


def test_every_process_logs_in_as_its_own_role(stack, populated):
    users = {row[0] for row in db_tools.rows(
        "SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = current_database()")}
    for role in ("identity_gateway", "identity_token_worker", "identity_provider_worker",
                 "identity_mailer_worker", "identity_revocation_worker"):
        assert role in users, f"no connection of {role} to the database: {sorted(users)}"
    superusers = db_tools.rows(
        "SELECT DISTINCT a.usename FROM pg_stat_activity a JOIN pg_roles r ON r.rolname = a.usename "
        "WHERE a.datname = current_database() AND a.usename LIKE 'identity\\_%' AND r.rolsuper")
    assert [row[0] for row in superusers] == ["identity"] or superusers == [], superusers
    flags = db_tools.rows("SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles "
                          "WHERE rolname IN ('identity_owner', 'identity_gateway', 'identity_token_worker', "
                          "'identity_provider_worker', 'identity_mailer_worker', 'identity_revocation_worker', "
                          "'identityctl') ORDER BY rolname")
    assert len(flags) == 7 and all(row[1:] == ["f", "f", "f", "f"] for row in flags), flags
    owners = db_tools.rows("SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c "
                           "JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v')")
    assert owners == [["identity_owner"]], f"tables and views not all the owner's: {owners}"


@pytest.mark.parametrize("table,column", SECRET_COLUMNS)
def test_the_gateway_cannot_read_a_secret_column(stack, populated, table, column):
    gateway = stack.db_urls["identity-gateway"]
    assert_refused(gateway, f"SELECT {column} FROM {table} LIMIT 1")
    assert_refused(gateway, f"SELECT * FROM {table} LIMIT 1")
    assert_refused(gateway, f"SELECT count(*) FROM {table} WHERE {column} IS NOT NULL")


def test_the_secrets_are_there_for_the_owner(stack, populated):
    app_id = db_tools.literal(populated["app"]["app_id"])
    assert db_tools.value(f"SELECT count(*) FROM users WHERE app_id = {app_id} AND password_hash IS NOT NULL") == "1"
    assert db_tools.value(f"SELECT count(*) FROM users WHERE app_id = {app_id} AND guest_secret_hmac IS NOT NULL") == "1"
    assert db_tools.value(f"SELECT count(*) FROM verification_codes WHERE app_id = {app_id}") == "1"
    assert db_tools.value(f"SELECT count(*) FROM signing_keys WHERE app_id = {app_id}") == "1"


def test_the_gateway_reads_users_through_the_profile_view(stack, populated):
    gateway = stack.db_urls["identity-gateway"]
    uid, app_id = db_tools.literal(populated["uid"]), db_tools.literal(populated["app"]["app_id"])
    rows = assert_allowed(gateway, f"SELECT uid, email, has_password, identity_providers FROM user_profiles "
                                   f"WHERE app_id = {app_id} AND uid = {uid}")
    assert rows == [[populated["uid"], populated["email"], "t", "{}"]], rows
    columns = [row[0] for row in db_tools.rows(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'user_profiles' ORDER BY 1")]
    assert not {"password_hash", "guest_secret_hmac"} & set(columns), columns
    done = psql(gateway, "SELECT password_hash FROM user_profiles")
    assert done.returncode != 0 and "does not exist" in done.stderr, done.stderr
    # What it reads of the other tables: public columns only.
    assert assert_allowed(gateway, f"SELECT count(*) FROM signing_keys WHERE app_id = {app_id} "
                                   "AND public_pem LIKE '-----BEGIN%'") == [["1"]]
    assert assert_allowed(gateway, f"SELECT app_key FROM apps WHERE id = {app_id}") == [[populated["app"]["app_key"]]]
    assert assert_allowed(gateway, f"SELECT count(*) FROM sessions WHERE app_id = {app_id} AND uid = {uid} "
                                   "AND ended_at IS NULL") == [["1"]]
    # /v1/me is served through the view.
    me = stack.client.sign_in(populated["app"], email=populated["email"], password="a long passphrase")
    assert me.status == 200, me.json
    resp = stack.client.me(populated["app"], me.json["data"]["access_token"])
    assert resp.status == 200 and resp.json["data"]["has_password"] is True, resp.json


@pytest.mark.parametrize("sql", [
    "UPDATE users SET email_verified = true",
    "UPDATE users SET password_hash = NULL",
    "DELETE FROM users",
    "INSERT INTO users (app_id, uid) VALUES ('app_x', 'u_x')",
    "DELETE FROM sessions",
    "UPDATE sessions SET ended_at = NULL",
    "INSERT INTO sessions (app_id, id, uid, amr, expires_at) VALUES ('a', 'b', 'c', '{}', now())",
    "DELETE FROM devices",
    "SELECT token_hash FROM refresh_tokens",
    "DELETE FROM refresh_tokens",
    "INSERT INTO outbox (app_id, event_id, routing_key, message_type, payload) VALUES ('a', 'b', 'c', 'd', 'e')",
    "SELECT payload FROM outbox",
    "UPDATE apps SET access_token_ttl = 86400",
    "SELECT rate_limits FROM apps",
    "SELECT * FROM rate_limit_state",
    "DELETE FROM rate_limit_state",
    "SELECT rate_limit_refund('a', 'b', 'c', 1, 1)",
    "SELECT nonce_hash FROM auth_nonces",
    "SELECT * FROM app_mail_settings",
    "SELECT * FROM mail_deliveries",
    "SELECT * FROM schema_migrations",
    "CREATE TABLE gateway_was_here (a int)",
])
def test_the_gateway_cannot_change_or_read_beyond_its_reads(stack, populated, sql):
    assert_refused(stack.db_urls["identity-gateway"], sql)


def test_the_gateway_takes_rate_limits_only_through_the_function(stack, populated):
    gateway = stack.db_urls["identity-gateway"]
    app_id = db_tools.literal(populated["app"]["app_id"])
    subject = uuid.uuid4().hex
    rows = assert_allowed(gateway, f"SELECT name, remaining FROM rate_limit_take({app_id}, "
                                   f"'[{{\"name\": \"probe\", \"subject\": \"{subject}\", \"count\": 5, \"window\": 60}}]')")
    assert rows == [["probe", "4"]], rows
    # SECURITY DEFINER with a fixed search_path: a caller's temporary table cannot stand in.
    assert db_tools.value("SELECT proconfig::text FROM pg_proc WHERE proname = 'rate_limit_take'") \
        == '{"search_path=public, pg_temp"}'


def test_the_mailer_cannot_read_users_or_sessions(stack, populated):
    mailer = stack.db_urls["identity-mailer-worker"]
    for sql in ("SELECT uid FROM users", "SELECT email FROM users", "SELECT uid FROM user_profiles",
                "SELECT id FROM sessions", "SELECT token_hash FROM refresh_tokens",
                "SELECT email_lower FROM verification_codes", "SELECT subject FROM user_identities",
                "SELECT private_key_enc FROM signing_keys", "SELECT secret_key_hash FROM apps",
                "SELECT apple_private_key_enc FROM app_provider_settings", "SELECT * FROM outbox",
                "SELECT rate_limit_take('a', '[]')"):
        assert_refused(mailer, sql)
    app_id = db_tools.literal(populated["app"]["app_id"])
    assert assert_allowed(mailer, f"SELECT name FROM apps WHERE id = {app_id}") == [[populated["app"]["name"]]]
    assert_allowed(mailer, "SELECT count(*) FROM app_mail_settings")


def test_the_mailer_sees_only_the_send_hooks(stack, populated):
    """Row security on app_auth_hooks (migration 0048): the mailer reads the send_email and
    send_sms hooks it asks, never a before_* hook's sealed secret; the token worker reads all."""
    app_id = populated["app"]["app_id"]
    for kind in ("before_token", "send_email"):
        assert stack.ctl("hooks", "set", app_id, kind, "--url", f"https://hooks.example.com/{kind}").returncode == 0
    where = f"WHERE app_id = {db_tools.literal(app_id)} ORDER BY kind"
    mailer = stack.db_urls["identity-mailer-worker"]
    assert assert_allowed(mailer, f"SELECT kind FROM app_auth_hooks {where}") == [["send_email"]]
    assert assert_allowed(mailer, f"SELECT count(*) FROM app_auth_hooks WHERE kind = 'before_token'") == [["0"]]
    worker = stack.db_urls["identity-token-worker"]
    assert assert_allowed(worker, f"SELECT kind FROM app_auth_hooks {where}") == [["before_token"], ["send_email"]]


def test_the_other_roles_see_only_what_they_use(stack, populated):
    urls = stack.db_urls
    # The provider worker: provider settings, nonces, Apple's token on an identity; no users.
    for sql in ("SELECT uid FROM users", "SELECT password_hash FROM users", "SELECT id FROM sessions",
                "SELECT code_hmac FROM verification_codes", "DELETE FROM user_identities",
                "SELECT private_key_enc FROM signing_keys"):
        assert_refused(urls["identity-provider-worker"], sql)
    assert_allowed(urls["identity-provider-worker"], "SELECT count(*) FROM app_provider_settings")
    # The revocation worker ends sessions and purges, without reading hashes or codes.
    for sql in ("SELECT password_hash FROM users", "SELECT email FROM users", "SELECT code_hmac FROM verification_codes",
                "SELECT private_key_enc FROM signing_keys", "SELECT secret_key_hash FROM apps",
                "UPDATE users SET password_hash = NULL", "INSERT INTO users (app_id, uid) VALUES ('a', 'b')",
                # A session's command key would let a publisher ask for its replay.
                "SELECT command_key FROM sessions", "SELECT session_token_hash FROM sessions"):
        assert_refused(urls["identity-revocation-worker"], sql)
    assert_allowed(urls["identity-revocation-worker"], "SELECT count(*) FROM sessions WHERE ended_at IS NULL")
    # identityctl: apps and settings, never the secret key hash or any user.
    for sql in ("SELECT secret_key_hash FROM apps", "SELECT uid FROM users", "SELECT id FROM sessions",
                "SELECT private_key_enc FROM signing_keys", "DELETE FROM apps"):
        assert_refused(urls["identityctl"], sql)
    assert_allowed(urls["identityctl"], "SELECT count(*) FROM apps")
    # The token worker holds the credentials, yet is no owner: no DDL, no other tables.
    for sql in ("DROP TABLE outbox", "SELECT * FROM mail_deliveries", "SELECT apple_private_key_enc FROM app_provider_settings",
                "SELECT secret_key_hash FROM apps", "SELECT * FROM rate_limit_state"):
        assert_refused(urls["identity-token-worker"], sql)
    assert_allowed(urls["identity-token-worker"], "SELECT count(*) FROM users WHERE password_hash IS NOT NULL")


@pytest.mark.parametrize("role,sql", [
    # Secret keys: hashes only, and no process reads them (the gateway asks secret_key_owner()).
    ("identity-gateway", "SELECT key_hash FROM app_secret_keys"),
    ("identity-gateway", "INSERT INTO app_secret_keys (app_id, id, key_hash) VALUES ('a', 'b', 'c')"),
    ("identity-token-worker", "SELECT key_hash FROM app_secret_keys"),
    ("identityctl", "SELECT key_hash FROM app_secret_keys"),
    ("identity-revocation-worker", "SELECT count(*) FROM app_secret_keys"),
    # Refresh tokens stay unreadable to the gateway; introspection goes through the function.
    ("identity-gateway", "SELECT token_hash FROM refresh_tokens"),
    # The audit log is append-only for everyone.
    ("identity-gateway", "UPDATE audit_log SET actor = 'someone'"),
    ("identity-gateway", "DELETE FROM audit_log"),
    ("identity-token-worker", "UPDATE audit_log SET actor = 'someone'"),
    ("identity-token-worker", "DELETE FROM audit_log"),
    ("identity-token-worker", "SELECT * FROM audit_log"),
    # App settings through the admin API: the token worker writes a sealed .p8 but never reads one.
    ("identity-token-worker", "SELECT apple_private_key_enc FROM app_provider_settings"),
    ("identity-gateway", "UPDATE apps SET default_metadata = '{}'"),
])
def test_admin_api_tables_follow_the_split(stack, populated, role, sql):
    assert_refused(stack.db_urls[role], sql)


def test_the_gateway_resolves_secret_keys_without_reading_hashes(stack, populated):
    gateway = stack.db_urls["identity-gateway"]
    key = populated["app"]["secret_key"]
    hashed = f"sha256(convert_to({db_tools.literal(key)}, 'UTF8'))"
    rows = assert_allowed(gateway, f"SELECT app_id FROM secret_key_owner({hashed})")
    assert rows == [[populated["app"]["app_id"]]]
    assert assert_allowed(gateway, "SELECT app_id FROM secret_key_owner(sha256('nope'))") == []
    assert_allowed(gateway, "INSERT INTO audit_log (app_id, actor, action) VALUES "
                            f"({db_tools.literal(populated['app']['app_id'])}, 'test', 'test.append')")


def test_what_a_later_migration_creates_is_granted_to_nobody(stack):
    """The owner's default privileges: a new table and function are usable by no process role
    until a migration grants them. Checked inside a transaction as the owner, rolled back."""
    owner = stack.db_urls["identity-owner"]
    sql = """
        BEGIN;
        CREATE TABLE later_probe (secret text);
        CREATE FUNCTION later_probe_fn() RETURNS int LANGUAGE sql AS 'SELECT 1';
        SELECT r, has_table_privilege(r, 'later_probe', 'SELECT, INSERT, UPDATE, DELETE'),
               has_function_privilege(r, 'later_probe_fn()', 'EXECUTE')
        FROM unnest(ARRAY['identity_gateway', 'identity_token_worker', 'identity_provider_worker',
                          'identity_mailer_worker', 'identity_revocation_worker', 'identityctl']) AS r;
        ROLLBACK;
    """
    done = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", owner],
                          input=sql, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    rows = [line.split("|") for line in done.stdout.splitlines()]
    assert len(rows) == 6 and all(row[1:] == ["f", "f"] for row in rows), rows
