#!/usr/bin/env bash
# make bench (and, with --smoke, the smoke run of make test): release binaries on a fresh
# database and vhost of the private services, load from wrk, figures beside the machine's limits.
set -euo pipefail
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
SERVICES=$REPO_DIR/scripts/services.sh
# shellcheck disable=SC1091
source "$RUN_DIR/env"
swift build -c release >/dev/null
"$SERVICES" psql -d postgres -c "DROP DATABASE IF EXISTS identity_bench WITH (FORCE)" -c "CREATE DATABASE identity_bench OWNER identity" >/dev/null
"$SERVICES" reset-vhost identity_bench >/dev/null
# One database role per process (run.py reads IDENTITY_<ROLE>_DATABASE_URL).
eval "$("$SERVICES" db-roles identity_bench)"
ADMIN_URL=$IDENTITY_DATABASE_URL
# This checkout's migrations, not those of the checkout that wrote RUN_DIR/env.
export IDENTITY_MIGRATIONS_DIR=$REPO_DIR/migrations
export IDENTITY_DATABASE_URL=${IDENTITY_DATABASE_URL%/*}/identity_bench
export IDENTITY_AMQP_URL=${IDENTITY_AMQP_URL%/*}/identity_bench
IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path)
export IDENTITY_BIN_DIR IDENTITY_RUN_DIR=$RUN_DIR
# run.py needs a database it may create others from.
IDENTITY_DATABASE_URL=$IDENTITY_DATABASE_URL BENCH_ADMIN_URL=$ADMIN_URL python3 bench/run.py "$@"
