#!/usr/bin/env bash
# The cluster failure test (Tests/e2e/test_cluster_failover.py) on scripts/cluster.sh's three
# RabbitMQ nodes and PostgreSQL primary + standby: make test runs its short form, make chaos a
# longer one (IDENTITY_CLUSTER_CHAOS_SECONDS per phase).
#
#   scripts/cluster-test.sh [pytest args...]
#
# CLUSTER_DIR (default $RUN_DIR/cluster) holds the cluster; it is stopped afterwards unless
# KEEP_CLUSTER=1 (a promoted standby is rebuilt as a fresh primary + standby by the next start).
# IDENTITY_CLUSTER_NAME (default identity_cluster) names the vhost and the database.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
export CLUSTER_DIR=${CLUSTER_DIR:-$RUN_DIR/cluster}
NAME=${IDENTITY_CLUSTER_NAME:-identity_cluster}
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
CLUSTER=$REPO_DIR/scripts/cluster.sh

if [[ -z ${IDENTITY_BIN_DIR:-} ]]; then
    swift build -c release
    IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path)
fi
export IDENTITY_BIN_DIR
if [[ ${KEEP_CLUSTER:-0} != 1 ]]; then trap '"$CLUSTER" stop || true' EXIT; fi
"$CLUSTER" start
# A fresh primary and standby every run: the test promotes the standby.
"$CLUSTER" reset-pg
eval "$("$CLUSTER" prepare "$NAME" "$NAME")"

key_file=$CLUSTER_DIR/master.key
[[ -s $key_file ]] || (umask 077; openssl rand -hex 32 >"$key_file")
IDENTITY_MASTER_KEY=$(tr -d '[:space:]' <"$key_file")
export IDENTITY_MASTER_KEY IDENTITY_MIGRATIONS_DIR=$REPO_DIR/migrations
export IDENTITY_RUN_DIR=$CLUSTER_DIR/logs IDENTITY_CLUSTER_SCRIPT=$CLUSTER
mkdir -p "$IDENTITY_RUN_DIR"
python3 -m pytest -q -p no:cacheprovider -s Tests/e2e/test_cluster_failover.py "$@"
