#!/usr/bin/env bash
# Unit tests, then end-to-end tests against a fresh database and a fresh vhost.
# Expects the services to be up (`make test` runs deps, services and proto-check first).
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
export RUN_DIR
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
SERVICES=$REPO_DIR/scripts/services.sh
step() { printf '\n==> %s\n' "$*" >&2; }

[[ -f $RUN_DIR/env ]] || { echo "test: $RUN_DIR/env missing: run scripts/services.sh start" >&2; exit 1; }
# shellcheck disable=SC1091
source "$RUN_DIR/env"

# deploy/: Kubernetes manifests against the Kubernetes JSON schemas, compose against the Compose
# Specification, systemd units through systemd-analyze verify, checkov on the rendered overlays
# (about 40 s; scripts/check-deploy.py).
step "deploy/ checks"
python3 "$REPO_DIR/scripts/check-deploy.py"

step "swift build --build-tests"
swift build --build-tests

# The Swift SDK's own package (clients/swift: iOS 15, macOS 12, the same sources through a
# symlink) still resolves and builds (under a minute; Linux checks what Linux can).
step "swift build --package-path clients/swift"
swift build --package-path clients/swift

# The store tests (StoreTenancyTests) run on a fresh database of their own; without
# IDENTITY_TEST_DATABASE_URL they are skipped.
STORE_TEST_DB=identity_store_test

step "fresh database $STORE_TEST_DB"
"$SERVICES" psql -d postgres \
    -c "DROP DATABASE IF EXISTS $STORE_TEST_DB WITH (FORCE)" \
    -c "CREATE DATABASE $STORE_TEST_DB OWNER identity"

# The process roles for it (docs/architecture.md, "Database roles"): the store tests migrate and write as the
# owner, and StoreRolesTests checks what the gateway's role is refused.
STORE_DB_ENV=$("$SERVICES" db-roles "$STORE_TEST_DB")
STORE_OWNER_URL=$(eval "$STORE_DB_ENV"; printf '%s' "$IDENTITY_OWNER_DATABASE_URL")
STORE_GATEWAY_URL=$(eval "$STORE_DB_ENV"; printf '%s' "$IDENTITY_GATEWAY_DATABASE_URL")

step "swift test --skip-build  (store tests on db $STORE_TEST_DB)"
IDENTITY_TEST_DATABASE_URL=$STORE_OWNER_URL IDENTITY_TEST_GATEWAY_DATABASE_URL=$STORE_GATEWAY_URL swift test --skip-build

# The end-to-end tests run the release binaries, as make run and production do: a bug that
# only the optimizer exposes (a C pointer outliving its buffer) must fail here.
step "swift build -c release"
swift build -c release

# The image (scripts/image.sh: a debootstrap base cached under $RUN_DIR/image, these release
# executables, the libraries they link) and the stack started from it, every process a container
# against the services here, on a database and vhost of its own (about a minute when the base is
# cached). IDENTITY_SKIP_IMAGE_TEST=1 leaves it out, and says so.
step "image smoke test (scripts/image-test.sh)"
if [[ ${IDENTITY_SKIP_IMAGE_TEST:-} == 1 ]]; then
    echo "test: SKIPPED the image smoke test: IDENTITY_SKIP_IMAGE_TEST=1" >&2
else
    IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path) "$REPO_DIR/scripts/image-test.sh" identity_image
fi

# deploy/systemd's units booted under systemd (systemd-nspawn on a cached Debian 12 root
# filesystem: PID 1 here is not systemd), against the services here, with their hardening and
# syscall filters as shipped: every unit active, each process ready, a sign-in through it.
step "systemd units under systemd-nspawn (scripts/systemd-test.sh)"
IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path) "$REPO_DIR/scripts/systemd-test.sh" identity_systemd

# A rolling upgrade from the previous release (deploy/previous-release): its binaries, built
# once and cached under .run/upgrade, against this schema,
# then side by side with these binaries, then replaced by them (scripts/upgrade-test.sh).
# A checkout without that commit (an export without history, a shallow clone) cannot build it:
# the run says so loudly and goes on; scripts/upgrade-test.sh alone fails there.
step "upgrade test (scripts/upgrade-test.sh)"
previous_release=$(grep -v '^#' "$REPO_DIR/deploy/previous-release" | head -1 | tr -d '[:space:]')
if git -C "$REPO_DIR" rev-parse --verify --quiet "$previous_release^{commit}" >/dev/null 2>&1; then
    IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path) "$REPO_DIR/scripts/upgrade-test.sh" identity_upgrade
else
    echo "test: SKIPPED the upgrade test: the previous release $previous_release is not in this checkout" \
        "(no git history here); scripts/upgrade-test.sh runs it where the history is" >&2
fi

TEST_DB=identity_test
TEST_VHOST=identity_test

step "fresh database $TEST_DB"
"$SERVICES" psql -d postgres \
    -c "DROP DATABASE IF EXISTS $TEST_DB WITH (FORCE)" \
    -c "CREATE DATABASE $TEST_DB OWNER identity"

# Each process of the end-to-end tests logs in as its own role (conftest reads these
# IDENTITY_<ROLE>_DATABASE_URL variables); IDENTITY_DATABASE_URL stays the superuser's, for
# the tests' own look into the database (db_tools.py).
eval "$("$SERVICES" db-roles "$TEST_DB")"

step "fresh vhost $TEST_VHOST"
"$SERVICES" reset-vhost "$TEST_VHOST"

export IDENTITY_DATABASE_URL=${IDENTITY_DATABASE_URL%/*}/$TEST_DB
export IDENTITY_AMQP_URL=${IDENTITY_AMQP_URL%/*}/$TEST_VHOST
IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path)
export IDENTITY_BIN_DIR
export IDENTITY_SERVICES_SCRIPT=$SERVICES
export IDENTITY_RUN_DIR=$RUN_DIR

# The benchmark's smoke run (about 20 s): make bench must not rot. Figures are not checked.
# It runs before the end-to-end tests so that pytest's summary is the run's closing line.
step "bench smoke run"
"$REPO_DIR/scripts/bench.sh" --smoke
# And its soak (make bench BENCH_ARGS="--soak 600"), for a few seconds: the tables are sampled.
"$REPO_DIR/scripts/bench.sh" --smoke --soak 3

# Node failures on a cluster of its own (three RabbitMQ nodes, a PostgreSQL standby; ports
# 31701-31722, data under $RUN_DIR/cluster), short form: docs/operations.md, "Running past one machine".
step "cluster failure test (scripts/cluster-test.sh)"
"$REPO_DIR/scripts/cluster-test.sh"

# Keep only this run's service logs (conftest writes them under $RUN_DIR/identity-e2e-*).
rm -rf "$RUN_DIR"/identity-e2e-*

step "python3 -m pytest -q Tests/e2e  (db $IDENTITY_DATABASE_URL, amqp $IDENTITY_AMQP_URL)"
python3 -m pytest -q Tests/e2e
