-- The revocation worker ends a user's sessions for the web console too (the console's Users
-- page, as the admin API's DELETE /v1/admin/users/{uid}/sessions): it accepts a console user's
-- session token as the command's authority when that user holds an owner or admin role in the
-- command's app (CallerAuthority). It learns that role, and nothing else, from this function:
-- it reads neither user_profiles nor console_roles. The token worker and the gateway use it too,
-- so the rule (a role counts for a verified, enabled console user's email) is written once.
CREATE FUNCTION console_role(p_console_app text, p_uid text, p_app text)
RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT r.role
    FROM user_profiles p
    JOIN console_roles r ON r.email = lower(p.email)
    -- Only the console app's users hold roles: a caller cannot learn another app's users by
    -- naming their app as the console's.
    WHERE p.app_id = p_console_app AND p_console_app = (SELECT app_id FROM console_app)
      AND p.uid = p_uid AND p.email_verified AND NOT p.disabled
      AND r.app_id = p_app
$$;
GRANT EXECUTE ON FUNCTION console_role(text, text, text)
    TO identity_gateway, identity_token_worker, identity_revocation_worker;
-- Which app is the console app: an app id, no secret.
GRANT SELECT ON console_app TO identity_revocation_worker;
