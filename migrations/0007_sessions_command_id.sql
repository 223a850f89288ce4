-- 0005 was edited after it landed (it gained sessions.command_id and created_account), so a
-- database migrated before that edit lacks them. This adds what is missing and changes
-- nothing where 0005 already did. (identityctl migrate now refuses a changed applied file.)

ALTER TABLE sessions ADD COLUMN IF NOT EXISTS command_id text;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS created_account boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX IF NOT EXISTS sessions_by_command ON sessions (app_id, command_id) WHERE command_id IS NOT NULL;
