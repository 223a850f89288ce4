#!/usr/bin/env bash
# make bench (and, with --smoke, the smoke run of make test; with --scale, seeded to a million
# users and measured again: docs/performance.md): release binaries on a fresh
# database and vhost of the private services, load from wrk, figures beside the machine's limits.
set -euo pipefail
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
SERVICES=$REPO_DIR/scripts/services.sh
# The bench's database and vhost (BENCH_DB): a checkout beside others on shared services names its own.
BENCH_DB=${BENCH_DB:-identity_bench}
# shellcheck disable=SC1091
source "$RUN_DIR/env"
swift build -c release >/dev/null
"$SERVICES" psql -d postgres -c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" -c "CREATE DATABASE $BENCH_DB OWNER identity" >/dev/null
"$SERVICES" reset-vhost "$BENCH_DB" >/dev/null
# One database role per process (run.py reads IDENTITY_<ROLE>_DATABASE_URL).
eval "$("$SERVICES" db-roles "$BENCH_DB")"
ADMIN_URL=$IDENTITY_DATABASE_URL
# This checkout's migrations, not those of the checkout that wrote RUN_DIR/env.
export IDENTITY_MIGRATIONS_DIR=$REPO_DIR/migrations
export IDENTITY_DATABASE_URL=${IDENTITY_DATABASE_URL%/*}/$BENCH_DB
export IDENTITY_AMQP_URL=${IDENTITY_AMQP_URL%/*}/$BENCH_DB
# BENCH_BIN_DIR: other binaries (say, a build of the previous commit) for a before/after run.
IDENTITY_BIN_DIR=${BENCH_BIN_DIR:-$(swift build -c release --show-bin-path)}
export IDENTITY_BIN_DIR IDENTITY_RUN_DIR=$RUN_DIR
# The peer stacks (bench/peers.py) run in their own virtual environment, made here from PyPI
# when missing; not for the smoke run (make test must not need the network) unless --peers.
peers=1
for arg in "$@"; do
    case $arg in --smoke) [[ " $* " == *" --peers "* ]] || peers=0 ;; --no-peers) peers=0 ;; esac
done
BENCH_PEERS_VENV=${BENCH_PEERS_VENV:-$REPO_DIR/.run/peers-venv}
if (( peers )) && ! "$BENCH_PEERS_VENV/bin/python" -c 'import django, rest_framework_simplejwt, fastapi_users' 2>/dev/null; then
    echo "bench: installing the peer stacks into $BENCH_PEERS_VENV (pip, bench/peers/requirements.txt)" >&2
    # A failed install is loud but costs only the peers' rows (run.py marks them), not the run.
    { python3 -m venv "$BENCH_PEERS_VENV" && "$BENCH_PEERS_VENV/bin/pip" install -q -r bench/peers/requirements.txt; } \
        || echo "bench: warning: the peer stacks did not install; their rows will say so" >&2
fi
# The profile (--profile, make bench-profile) samples with perf, installed here when missing.
if [[ " $* " == *" --profile "* ]] && ! command -v perf >/dev/null; then
    echo "bench: installing perf (linux-perf)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-perf >/dev/null
fi
export BENCH_DB BENCH_PEERS_VENV
# run.py needs a database it may create others from.
IDENTITY_DATABASE_URL=$IDENTITY_DATABASE_URL BENCH_ADMIN_URL=$ADMIN_URL python3 bench/run.py "$@"
