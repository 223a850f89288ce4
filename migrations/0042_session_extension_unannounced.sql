-- A refresh moves its session's expiry later; it no longer announces that on
-- `identity_session_changes`. Every refresh did (0038 watched any change of expires_at), and a
-- transaction that notifies takes PostgreSQL's cluster-wide notify lock from its pre-commit to
-- the end of its commit, so concurrent refreshes committed one at a time, each behind the
-- previous one's WAL flush.
--
-- A gateway's memory of a session can then hold an expiry that is earlier than the stored one.
-- That is never unsafe (the entry can only say "expired" too early, never "live" too late),
-- and the gateway reads the session again instead of refusing when the expiry it holds has
-- passed (`SessionReads.liveSession`). What still moves the expiry earlier (a shorter session
-- lifetime applied by a later refresh) is announced as before, as is every end, delete and
-- change of owner.
DROP TRIGGER sessions_notify_change ON sessions;
CREATE TRIGGER sessions_notify_change
    AFTER UPDATE OF ended_at, expires_at, uid ON sessions
    FOR EACH ROW
    WHEN (OLD.ended_at IS DISTINCT FROM NEW.ended_at
          OR (OLD.expires_at IS DISTINCT FROM NEW.expires_at AND NOT COALESCE(NEW.expires_at > OLD.expires_at, false))
          OR OLD.uid IS DISTINCT FROM NEW.uid)
    EXECUTE FUNCTION notify_session_change();
