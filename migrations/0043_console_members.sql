-- The console's Members page (docs/console.md): an app's owners invite, re-role and remove its
-- console members themselves. The token worker carries each change out (it already reads
-- console_roles and the console user's verified email to accept a console session as an admin
-- command's authority), checking in the same transaction, with the app's rows locked, that the
-- caller holds `owner` there and that the app keeps an owner.
GRANT INSERT, UPDATE, DELETE ON console_roles TO identity_token_worker;
