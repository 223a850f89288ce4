-- Console sessions end after 12 hours, or 30 minutes unused (docs/console.md, "Signing in"):
-- a console session administers every app its account holds a role in, so it is kept as short
-- as a working day and dropped when its desk is left. `identityctl console init` makes new
-- consoles so; a console made before gets the same here unless its operator changed the
-- service's defaults for it. The operator may set others (identityctl apps settings
-- CONSOLE_APP_ID --session-lifetime N --session-idle-timeout N).
UPDATE apps SET session_lifetime = 43200
WHERE id = (SELECT app_id FROM console_app) AND session_lifetime = 31536000;
UPDATE apps SET session_idle_timeout = 1800
WHERE id = (SELECT app_id FROM console_app) AND session_idle_timeout = 2592000;
