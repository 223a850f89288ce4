-- A redelivered sign-in is answered from the session (or MFA challenge) its first run
-- committed, found by the command's key: since this version the key is the message id bound to
-- the SHA-256 of the command's body (CommandContext.key), so knowing a session's message id is
-- no longer enough to be answered with its tokens. The revocation worker, which ends and
-- purges sessions, no longer reads that key at all: its SELECT on sessions becomes column-level,
-- without command_id or session_token_hash.
REVOKE SELECT ON sessions FROM identity_revocation_worker;
GRANT SELECT (app_id, id, uid, amr, ip, user_agent, created_at, last_seen_at, expires_at, ended_at, end_reason,
              created_account, aal)
    ON sessions TO identity_revocation_worker;
