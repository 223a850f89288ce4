#!/usr/bin/env bash
# Builds the image (scripts/image.sh) and starts the stack from it against the running services,
# on a database and a vhost of its own (like scripts/e2e.sh), then runs Tests/image: every
# process as a container (read-only root, non-root), readiness and metrics of each, sign-up,
# sign-in, refresh, /me, a mailed code.
#
#   scripts/image-test.sh [NAME]      NAME: the database and vhost (default identity_image)
#
# Containers of the run are removed whatever happens (the fixture, then this script's trap).
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
export RUN_DIR
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
SERVICES=$REPO_DIR/scripts/services.sh
NAME=${1:-identity_image}
[[ $NAME =~ ^[a-z0-9_]+$ && $NAME != identity_test ]] || { echo "usage: $0 [NAME]" >&2; exit 2; }
[[ -f $RUN_DIR/env ]] || { echo "image-test: $RUN_DIR/env missing: run scripts/services.sh start" >&2; exit 1; }
# shellcheck disable=SC1091
source "$RUN_DIR/env"

"$REPO_DIR/scripts/image.sh"
# shellcheck source=scripts/image.sh
IMAGE_SH_LIB=1 source "$REPO_DIR/scripts/image.sh"
podman_env
export IDENTITY_IMAGE=${IDENTITY_IMAGE:-localhost/identity:latest}

"$SERVICES" psql -d postgres -q \
    -c "DROP DATABASE IF EXISTS $NAME WITH (FORCE)" \
    -c "CREATE DATABASE $NAME OWNER identity" >/dev/null
eval "$("$SERVICES" db-roles "$NAME")"
"$SERVICES" reset-vhost "$NAME" >/dev/null
export IDENTITY_DATABASE_URL=${IDENTITY_DATABASE_URL%/*}/$NAME
export IDENTITY_AMQP_URL=${IDENTITY_AMQP_URL%/*}/$NAME

# Whatever the tests leave behind (an interrupted run), removed on the way out.
IDENTITY_IMAGE_TEST_RUN=$$-$RANDOM
export IDENTITY_IMAGE_TEST_RUN
cleanup() {
    local ids
    ids=$(podman ps -aq --filter "label=identity-image-test=$IDENTITY_IMAGE_TEST_RUN" 2>/dev/null || true)
    [[ -z $ids ]] || podman rm -f -t 5 $ids >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

python3 -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$REPO_DIR/Tests/image" "$REPO_DIR/Tests/image"
