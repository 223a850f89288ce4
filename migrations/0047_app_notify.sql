-- A change of what a gateway resolves a request's app with (the app's key and token lifetime,
-- its client profile, path prefix and allowed origins, its verified domains) is announced on
-- the channel `identity_app_changes` at commit, and each gateway forgets the apps it holds
-- (`AppResolver`), so a setting changed through the console, the admin API, identityctl or psql
-- applies on every replica at once rather than within the cache's minute. Per statement: these
-- tables change only when an app's settings do, and the payload (the table) is all a gateway
-- needs to start from the store again.
CREATE FUNCTION notify_app_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('identity_app_changes', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER apps_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON apps
    FOR EACH STATEMENT EXECUTE FUNCTION notify_app_change();
CREATE TRIGGER app_client_profiles_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON app_client_profiles
    FOR EACH STATEMENT EXECUTE FUNCTION notify_app_change();
CREATE TRIGGER app_domains_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON app_domains
    FOR EACH STATEMENT EXECUTE FUNCTION notify_app_change();
