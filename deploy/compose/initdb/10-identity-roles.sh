#!/bin/sh
# Runs once, when the postgres container initializes its data folder: the eight process roles
# (README "Database roles"), each with the password Compose mounts as
# /run/secrets/<role, dashed>-password, and the identity database owned by identity_owner. The
# migration (identityctl migrate) grants each role its part.
set -eu
for role in identity_owner identity_gateway identity_token_worker identity_provider_worker \
            identity_mailer_worker identity_revocation_worker identity_webhook_worker identityctl; do
  file=/run/secrets/$(echo "$role" | tr _ -)-password
  password=$(cat "$file")
  [ -n "$password" ] || { echo "10-identity-roles.sh: $file is empty" >&2; exit 1; }
  psql -v ON_ERROR_STOP=1 -U postgres -v role="$role" -v password="$password" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'role', :'password')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec
SQL
done
psql -v ON_ERROR_STOP=1 -U postgres -c 'CREATE DATABASE identity OWNER identity_owner'
