-- The admin API after its seam (issue 16, part A; 0012 landed with the seam): default metadata
-- for new users, app settings written by the token worker, introspection functions in plpgsql.
-- (Numbered 0016 provisionally: 0012 was the number given for this work, and it had landed.)

-- A new user starts with the app's default metadata, whichever flow makes it (sign-up, guest,
-- provider, admin, import), unless the insert gives its own. SECURITY DEFINER: the inserting
-- role needs no right on apps for it.
CREATE FUNCTION users_default_metadata() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    defaults jsonb;
BEGIN
    SELECT a.default_metadata INTO defaults FROM apps a WHERE a.id = NEW.app_id;
    IF NEW.app_metadata = '{}'::jsonb AND jsonb_typeof(defaults -> 'app_metadata') = 'object' THEN
        NEW.app_metadata := defaults -> 'app_metadata';
    END IF;
    IF NEW.user_metadata = '{}'::jsonb AND jsonb_typeof(defaults -> 'user_metadata') = 'object' THEN
        NEW.user_metadata := defaults -> 'user_metadata';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER users_default_metadata BEFORE INSERT ON users
    FOR EACH ROW EXECUTE FUNCTION users_default_metadata();

-- plpgsql, like rate_limit_take: a body is checked when called, not when created. (Replacing a
-- function keeps its grants.)
CREATE OR REPLACE FUNCTION secret_key_owner(p_hash bytea)
RETURNS TABLE (app_id text, key_id text, expires_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    RETURN QUERY SELECT k.app_id, k.id, k.expires_at FROM app_secret_keys k
    WHERE k.key_hash = p_hash AND (k.expires_at IS NULL OR k.expires_at > now());
END
$$;

CREATE OR REPLACE FUNCTION refresh_token_introspect(p_app text, p_hash bytea)
RETURNS TABLE (session_id text, uid text, amr text[], issued_at timestamptz, expires_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    RETURN QUERY SELECT s.id, s.uid, s.amr, t.created_at, least(t.expires_at, s.expires_at)
    FROM refresh_tokens t
    JOIN sessions s ON s.app_id = t.app_id AND s.id = t.session_id
    JOIN users u ON u.app_id = s.app_id AND u.uid = s.uid
    WHERE t.app_id = p_app AND t.token_hash = p_hash AND t.spent_at IS NULL AND t.expires_at > now()
      AND s.ended_at IS NULL AND s.expires_at > now() AND NOT u.disabled;
END
$$;

-- App settings through the admin API (PATCH /v1/admin/settings) are written by the token worker,
-- the holder of the master key that seals an Apple .p8 key.
GRANT SELECT (rate_limits), UPDATE (access_token_ttl, session_lifetime, rate_limits) ON apps TO identity_token_worker;
-- It writes a new sealed .p8 key but may not read one back: it learns only whether one is set.
ALTER TABLE app_provider_settings
    ADD COLUMN apple_private_key_set boolean GENERATED ALWAYS AS (apple_private_key_enc IS NOT NULL) STORED;
GRANT SELECT (app_id, google_client_ids, apple_bundle_ids, apple_services_ids, apple_team_id, apple_key_id,
              firebase_project_id, firebase_trust_email_verified, updated_at, apple_private_key_set),
      INSERT (app_id, google_client_ids, apple_bundle_ids, apple_services_ids, apple_team_id, apple_key_id,
              firebase_project_id, firebase_trust_email_verified, updated_at),
      UPDATE (google_client_ids, apple_bundle_ids, apple_services_ids, apple_team_id, apple_key_id,
              apple_private_key_enc, firebase_project_id, firebase_trust_email_verified, updated_at)
    ON app_provider_settings TO identity_token_worker;
GRANT SELECT, INSERT, UPDATE ON app_mail_settings TO identity_token_worker;
