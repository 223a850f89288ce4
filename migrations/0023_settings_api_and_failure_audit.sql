-- Issue 16's last parts.
--
-- 1. Every setting `identityctl apps settings` sets is also the admin API's (PATCH
--    /v1/admin/settings), through the one AppSettingsUpdate. The admin API's writes are the
--    token worker's, so it now writes the client profile, domains, browser origins, Apple's
--    nonce mode, the passkey relying party and the JWKS cache period too.
GRANT SELECT, INSERT, UPDATE, DELETE ON app_client_profiles, app_domains TO identity_token_worker;
GRANT INSERT, UPDATE ON app_webauthn_settings TO identity_token_worker;
GRANT UPDATE (jwks_cache_seconds) ON apps TO identity_token_worker;
GRANT SELECT (apple_nonce), UPDATE (apple_nonce) ON app_provider_settings TO identity_token_worker;

-- 2. Failed sign-ins past a threshold are security events in the audit log: one account's (or
--    one IP's) failures within a window; a row when the count reaches the app's threshold and
--    at each doubling after it (5, 10, 20, 40…), so a long attack leaves a trail without one
--    row per guess.
ALTER TABLE apps ADD COLUMN failed_sign_in_audit_threshold integer NOT NULL DEFAULT 5
    CHECK (failed_sign_in_audit_threshold BETWEEN 1 AND 1000);
GRANT SELECT (failed_sign_in_audit_threshold), UPDATE (failed_sign_in_audit_threshold)
    ON apps TO identity_token_worker, identityctl;

-- UNLOGGED like rate_limit_state: a crash forgets at most one window of counting.
CREATE UNLOGGED TABLE sign_in_failure_counts (
    app_id text NOT NULL,
    subject text NOT NULL,              -- 'user:<uid>' or 'ip:<address>'
    window_start timestamptz NOT NULL,
    failures integer NOT NULL,
    PRIMARY KEY (app_id, subject)
);
CREATE INDEX sign_in_failure_counts_window ON sign_in_failure_counts (window_start);

-- Counts one failed sign-in against each subject (NULLs skipped: an unknown account has no
-- user subject, yet the call costs the same round trip, so timing tells nothing) and writes
-- the audit rows of the subjects that reached a reporting point. Answers how many it wrote.
-- SECURITY DEFINER: the token worker needs no right on the counts table.
CREATE FUNCTION sign_in_failure_note(p_app text, p_subjects text[], p_window_seconds integer, p_method text,
                                     p_ip text, p_request_id text)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    threshold integer;
    item text;
    n integer;
    written integer := 0;
BEGIN
    SELECT a.failed_sign_in_audit_threshold INTO threshold FROM apps a WHERE a.id = p_app;
    IF threshold IS NULL THEN RETURN 0; END IF;
    FOREACH item IN ARRAY p_subjects LOOP
        CONTINUE WHEN item IS NULL;
        INSERT INTO sign_in_failure_counts AS c (app_id, subject, window_start, failures)
        VALUES (p_app, item, now(), 1)
        ON CONFLICT (app_id, subject) DO UPDATE SET
            failures = CASE WHEN c.window_start < now() - make_interval(secs => p_window_seconds) THEN 1
                            ELSE c.failures + 1 END,
            window_start = CASE WHEN c.window_start < now() - make_interval(secs => p_window_seconds) THEN now()
                                ELSE c.window_start END
        RETURNING c.failures INTO n;
        -- At the threshold and each doubling of it: n = threshold * 2^k.
        IF n >= threshold AND n % threshold = 0 AND ((n / threshold) & ((n / threshold) - 1)) = 0 THEN
            INSERT INTO audit_log (app_id, actor, action, target, ip, request_id, detail)
            VALUES (p_app, 'system', 'security.sign_in_failures', item, nullif(p_ip, ''), nullif(p_request_id, ''),
                    jsonb_build_object('method', p_method, 'failures', n, 'window_seconds', p_window_seconds,
                                       'threshold', threshold));
            written := written + 1;
        END IF;
    END LOOP;
    -- Old windows are dropped now and then rather than by a job nobody runs.
    IF random() < 0.001 THEN
        DELETE FROM sign_in_failure_counts WHERE window_start < now() - interval '1 day';
    END IF;
    RETURN written;
END
$$;
GRANT EXECUTE ON FUNCTION sign_in_failure_note(text, text[], integer, text, text, text) TO identity_token_worker;
