-- Every change that ends a session or changes what GET /v1/me and introspection answer is
-- announced on the channel `identity_session_changes`, sent by PostgreSQL at commit. Each gateway
-- listens and drops what it holds in memory for that session or user (`SessionReadCache`).
-- Triggers, not code paths: no writer (worker, identityctl, a purge, a cascade, an operator's
-- psql) can end a session without the gateways hearing of it.
--
-- The payload is JSON: {"k": "s", "a": app_id, "id": session id} for a session,
-- {"k": "u", "a": app_id, "id": uid} for a user (their profile, identities or factors).

CREATE FUNCTION notify_session_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_app text;
    row_id  text;
BEGIN
    -- The key a gateway holds is the row's old one (ids are never updated).
    IF TG_OP = 'INSERT' THEN
        row_app := NEW.app_id;
        row_id := NEW.id;
    ELSE
        row_app := OLD.app_id;
        row_id := OLD.id;
    END IF;
    PERFORM pg_notify('identity_session_changes', json_build_object('k', 's', 'a', row_app, 'id', row_id)::text);
    RETURN NULL;
END
$$;

CREATE FUNCTION notify_user_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_app text;
    row_uid text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_app := OLD.app_id;
        row_uid := OLD.uid;
    ELSE
        row_app := NEW.app_id;
        row_uid := NEW.uid;
    END IF;
    PERFORM pg_notify('identity_session_changes', json_build_object('k', 'u', 'a', row_app, 'id', row_uid)::text);
    -- A row moved to another user (an UPDATE of uid) changes the old user's answer too.
    IF TG_OP = 'UPDATE' AND (OLD.app_id, OLD.uid) IS DISTINCT FROM (NEW.app_id, NEW.uid) THEN
        PERFORM pg_notify('identity_session_changes', json_build_object('k', 'u', 'a', OLD.app_id, 'id', OLD.uid)::text);
    END IF;
    RETURN NULL;
END
$$;

-- A session's insert needs no word (nobody holds it yet); a refresh's bookkeeping (last_seen_at)
-- changes nothing a gateway holds, so only the columns that do are watched.
CREATE TRIGGER sessions_notify_change
    AFTER UPDATE OF ended_at, expires_at, uid ON sessions
    FOR EACH ROW
    WHEN (OLD.ended_at IS DISTINCT FROM NEW.ended_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
          OR OLD.uid IS DISTINCT FROM NEW.uid)
    EXECUTE FUNCTION notify_session_change();

CREATE TRIGGER sessions_notify_delete
    AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION notify_session_change();

-- The user_profiles view reads users, user_identities (its providers) and mfa_factors (mfa_enabled).
CREATE TRIGGER users_notify_change
    AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION notify_user_change();

CREATE TRIGGER user_identities_notify_change
    AFTER INSERT OR UPDATE OR DELETE ON user_identities
    FOR EACH ROW EXECUTE FUNCTION notify_user_change();

CREATE TRIGGER mfa_factors_notify_change
    AFTER INSERT OR UPDATE OR DELETE ON mfa_factors
    FOR EACH ROW EXECUTE FUNCTION notify_user_change();
