-- Account takeover hardening (issue "account takeover", the low items).

-- 1. An idle timeout for the sessions of the session-token profiles (`session-object` with
-- its cookie, `single-token`): their one token lives as long as the session (a year by
-- default) and is never refreshed, so without it a token taken from a device unused for months
-- still works. A session unseen for longer than this is refused and ended where its token is
-- checked (the gateway, IdentityKit/Auth/SessionToken.swift). Standard sessions have theirs
-- already: a refresh token unused for 90 days expires.
ALTER TABLE apps ADD COLUMN session_idle_timeout integer NOT NULL DEFAULT 2592000
    CHECK (session_idle_timeout BETWEEN 300 AND 31536000);
GRANT SELECT (session_idle_timeout) ON apps TO identity_gateway, identity_token_worker, identityctl;
GRANT UPDATE (session_idle_timeout) ON apps TO identity_token_worker, identityctl;

-- The gateway reads sessions but writes nothing; a session token in use is marked seen through
-- this function, at most once a minute (the minute is the precision an idle timeout of at least
-- five needs, and it keeps the write off nearly every request). It never revives a session: one
-- already idle or ended stays as it is.
CREATE FUNCTION session_token_seen(p_app text, p_session text)
RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    UPDATE sessions s SET last_seen_at = now()
    FROM apps a
    WHERE a.id = p_app AND s.app_id = p_app AND s.id = p_session
      AND s.session_token_hash IS NOT NULL AND s.ended_at IS NULL
      AND s.last_seen_at < now() - interval '60 seconds'
      AND s.last_seen_at > now() - make_interval(secs => a.session_idle_timeout)
$$;
GRANT EXECUTE ON FUNCTION session_token_seen(text, text) TO identity_gateway;

-- The workers check the session token a command carries (CallerAuthority: sign-out, session
-- ending, the token worker's flows) by finding its live session. Since 0028 the revocation
-- worker may not read `session_token_hash`, so a sign-out with a session token (the
-- `session-object` profile's cookie) was refused; this answers for a token the caller holds
-- (its hash) without letting it read any hash.
CREATE FUNCTION session_token_session(p_app text, p_hash bytea)
RETURNS TABLE (id text, uid text, amr text[], aal integer, expires_at timestamptz, created_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT s.id, s.uid, s.amr, s.aal::integer, s.expires_at, s.created_at FROM sessions s
    WHERE s.app_id = p_app AND s.session_token_hash = p_hash AND s.ended_at IS NULL AND s.expires_at > now()
$$;
GRANT EXECUTE ON FUNCTION session_token_session(text, bytea) TO identity_token_worker, identity_revocation_worker;

-- 2. Known devices for the per-identifier sign-in limit (OWASP, "device cookies"): ten wrong
-- passwords from anywhere spend an identifier's budget, and until now locked its owner out too.
-- A successful password sign-in (standard profile) answers with a device token, which the
-- client sends back as X-Device-Token; once the identifier's budget is spent, a sign-in with a
-- live device token of that identifier's user is counted against a budget of that device's own
-- (`sign_in_per_device`), so a guesser who spent the identifier's budget has not locked out the
-- owner's devices. Only the token's SHA-256 is kept; a successful sign-in with it replaces it.
CREATE TABLE sign_in_devices (
    app_id     text NOT NULL,
    token_hash bytea NOT NULL,
    uid        text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, token_hash),
    FOREIGN KEY (app_id, uid) REFERENCES users (app_id, uid) ON DELETE CASCADE
);
CREATE INDEX sign_in_devices_by_user ON sign_in_devices (app_id, uid, created_at);
GRANT SELECT, INSERT, DELETE ON sign_in_devices TO identity_token_worker;

-- The gateway learns whether a token is a live device token of the user an identifier names
-- (email or username, as the sign-in reads it: UserStore.find), and nothing else: it reads
-- neither the table nor users.
CREATE FUNCTION sign_in_device_known(p_app text, p_identifier text, p_hash bytea)
RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT EXISTS (
        SELECT 1 FROM sign_in_devices d JOIN users u ON u.app_id = d.app_id AND u.uid = d.uid
        WHERE d.app_id = p_app AND d.token_hash = p_hash AND d.expires_at > now()
          AND CASE WHEN strpos(p_identifier, '@') > 0 THEN lower(u.email) = lower(p_identifier)
                   ELSE lower(u.username) = lower(p_identifier) END)
$$;
GRANT EXECUTE ON FUNCTION sign_in_device_known(text, text, bytea) TO identity_gateway;
