-- Rate limits shared by every gateway replica (and the token worker's guess budget per
-- address): one GCRA state per (app, limit, subject), changed by one atomic upsert per check.
--
-- UNLOGGED: a limiter's state is worth less than the WAL it would cost on every sign-in and
-- refresh. After a crash PostgreSQL empties the table, which forgives at most one window of
-- counting; codes still die after 5 wrong guesses each, which is in a logged table.

CREATE UNLOGGED TABLE rate_limit_state (
    key text PRIMARY KEY,               -- '<app_id>:<limit name>:<subject>'; subjects are IPs or hashes
    tat double precision NOT NULL       -- GCRA's theoretical arrival time, epoch seconds
);

-- Per-app overrides: {"sign_up_per_ip": {"count": 1000, "window": 3600}, "guest_per_ip": "off"}.
ALTER TABLE apps ADD COLUMN rate_limits jsonb NOT NULL DEFAULT '{}';

-- Takes one request from each limit in `checks`, in order:
--   [{"name": "sign_in_per_ip", "subject": "203.0.113.7", "count": 100, "window": 60}, ...]
-- (count/window are the defaults; the app's override, read here, wins). A limit that refuses
-- ends the walk: nothing after it is taken, and the refused limit's state is left as it was,
-- so hammering a closed limit never pushes its reopening further away. One row per limit
-- looked at: remaining requests, seconds until the whole quota is back (reset), and for the
-- refused one the seconds until one request fits (retry_after > 0).
-- GCRA: a limit of N per W seconds emits one request every T = W/N seconds; a request at time
-- `now` is allowed when max(tat, now) + T - now <= W, and then moves tat there.
CREATE FUNCTION rate_limit_take(p_app text, p_checks jsonb)
RETURNS TABLE (name text, quota integer, window_seconds double precision, remaining integer,
               reset_seconds double precision, retry_after double precision)
LANGUAGE plpgsql AS $$
DECLARE
    overrides jsonb;
    now_s double precision := extract(epoch FROM clock_timestamp());
    item jsonb;
    setting jsonb;
    n integer;
    w double precision;
    t double precision;
    k text;
    new_tat double precision;
    current_tat double precision;
BEGIN
    SELECT a.rate_limits INTO overrides FROM apps a WHERE a.id = p_app;
    FOR item IN SELECT value FROM jsonb_array_elements(p_checks) LOOP
        setting := coalesce(overrides, '{}'::jsonb) -> (item ->> 'name');
        CONTINUE WHEN setting = '"off"'::jsonb;
        n := coalesce((setting ->> 'count')::integer, (item ->> 'count')::integer);
        w := coalesce((setting ->> 'window')::double precision, (item ->> 'window')::double precision);
        t := w / n;
        k := p_app || ':' || (item ->> 'name') || ':' || (item ->> 'subject');
        new_tat := NULL;
        INSERT INTO rate_limit_state AS s (key, tat) VALUES (k, now_s + t)
        ON CONFLICT (key) DO UPDATE SET tat = greatest(s.tat, now_s) + t
            WHERE greatest(s.tat, now_s) + t - now_s <= w + 1e-6
        RETURNING s.tat INTO new_tat;
        name := item ->> 'name';
        quota := n;
        window_seconds := w;
        IF new_tat IS NULL THEN
            SELECT s.tat INTO current_tat FROM rate_limit_state s WHERE s.key = k;
            remaining := 0;
            reset_seconds := greatest(current_tat - now_s, 0);
            retry_after := greatest(greatest(current_tat, now_s) + t - w - now_s, 1e-3);
            RETURN NEXT;
            RETURN;
        END IF;
        remaining := greatest(floor((w - (new_tat - now_s)) / t + 1e-9), 0)::integer;
        reset_seconds := new_tat - now_s;
        retry_after := 0;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Gives one request back to a limit (a code guess that turned out right is not a wrong guess).
CREATE FUNCTION rate_limit_refund(p_app text, p_name text, p_subject text, p_count integer,
                                  p_window double precision)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    setting jsonb;
    t double precision;
BEGIN
    SELECT a.rate_limits -> p_name INTO setting FROM apps a WHERE a.id = p_app;
    IF setting = '"off"'::jsonb THEN RETURN; END IF;
    t := coalesce((setting ->> 'window')::double precision, p_window)
         / coalesce((setting ->> 'count')::integer, p_count);
    UPDATE rate_limit_state SET tat = tat - t WHERE key = p_app || ':' || p_name || ':' || p_subject;
END
$$;
