#!/usr/bin/env bash
# A focused end-to-end run on a database and vhost of its own, for work in progress:
#
#   scripts/e2e.sh NAME [pytest args...]      e.g. scripts/e2e.sh identity_mfa Tests/e2e/test_mfa.py
#
# Builds the release binaries, recreates database NAME and vhost NAME (with the process roles
# and broker users), then runs pytest with the given arguments (default: every non-disruptive
# test). Several checkouts can run it at once against one set of services (RUN_DIR) as long as
# each uses its own NAME; disruptive tests restart the shared broker and database, so they are
# left out unless asked for. `make test` remains the whole run.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
export RUN_DIR
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
SERVICES=$REPO_DIR/scripts/services.sh

[[ $# -ge 1 && $1 =~ ^[a-z0-9_]+$ ]] || { echo "usage: $0 NAME [pytest args...]" >&2; exit 2; }
NAME=$1; shift
[[ $NAME != identity_test ]] || { echo "e2e: identity_test belongs to make test" >&2; exit 2; }
[[ -f $RUN_DIR/env ]] || { echo "e2e: $RUN_DIR/env missing: run scripts/services.sh start" >&2; exit 1; }
# shellcheck disable=SC1091
source "$RUN_DIR/env"
# This checkout's migrations, not those of the checkout that started the services.
export IDENTITY_MIGRATIONS_DIR=$REPO_DIR/migrations

swift build -c release
"$SERVICES" psql -d postgres -q \
    -c "DROP DATABASE IF EXISTS $NAME WITH (FORCE)" \
    -c "CREATE DATABASE $NAME OWNER identity" >/dev/null
eval "$("$SERVICES" db-roles "$NAME")"
"$SERVICES" reset-vhost "$NAME" >/dev/null

# This checkout's migrations, not those of the checkout that wrote RUN_DIR/env.
export IDENTITY_MIGRATIONS_DIR=$REPO_DIR/migrations
export IDENTITY_DATABASE_URL=${IDENTITY_DATABASE_URL%/*}/$NAME
export IDENTITY_AMQP_URL=${IDENTITY_AMQP_URL%/*}/$NAME
IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path)
export IDENTITY_BIN_DIR IDENTITY_SERVICES_SCRIPT=$SERVICES IDENTITY_RUN_DIR=$RUN_DIR

if [[ $# -eq 0 ]]; then set -- -m "not disruptive" Tests/e2e; fi
exec python3 -m pytest -q -p no:cacheprovider "$@"
