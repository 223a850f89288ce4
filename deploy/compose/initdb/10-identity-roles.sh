#!/bin/sh
# Runs once, when the postgres container initializes its data folder: the eight process roles
# (README "Database roles") with their passwords from the environment, and the identity
# database owned by identity_owner. The migration (identityctl migrate) grants each role its part.
set -eu
for role in identity_owner identity_gateway identity_token_worker identity_provider_worker \
            identity_mailer_worker identity_revocation_worker identity_webhook_worker identityctl; do
  var=$(echo "$role" | tr 'a-z' 'A-Z')_PASSWORD
  eval "password=\${$var}"
  psql -v ON_ERROR_STOP=1 -U postgres -v role="$role" -v password="$password" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'role', :'password')
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec
SQL
done
psql -v ON_ERROR_STOP=1 -U postgres -c 'CREATE DATABASE identity OWNER identity_owner'
