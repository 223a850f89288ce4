#!/usr/bin/env bash
# A rolling upgrade from the previous release, on a database and a vhost of its own (like
# scripts/e2e.sh): the previous release's binaries run against this checkout's schema, then side
# by side with this checkout's (Tests/upgrade says which mix, in order). Migrations must be
# additive for that to pass.
#
#   scripts/upgrade-test.sh [NAME]      NAME: the database and vhost (default identity_upgrade)
#
# The previous release: IDENTITY_UPGRADE_FROM (any commit-ish), else the commit named in
# deploy/previous-release (the release this one upgrades from). Its
# release binaries are built in a detached worktree under .run/upgrade/<commit> from a copy of this
# checkout's .build (a few minutes the first time) and kept there: a rerun for the same commit
# builds nothing. The previous commit must be in the clone: a shallow clone fails here.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
export RUN_DIR
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
SERVICES=$REPO_DIR/scripts/services.sh
# The previous releases' worktrees belong to this checkout, wherever the services run.
CACHE_DIR=${IDENTITY_UPGRADE_CACHE:-$REPO_DIR/.run/upgrade}
NAME=${1:-identity_upgrade}
say() { printf 'upgrade-test: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
[[ $NAME =~ ^[a-z0-9_]+$ && $NAME != identity_test ]] || { echo "usage: $0 [NAME]" >&2; exit 2; }
[[ -f $RUN_DIR/env ]] || die "$RUN_DIR/env missing: run scripts/services.sh start"

# --- the previous release -------------------------------------------------------------------
if [[ $(git rev-parse --is-shallow-repository) == true ]]; then
    die "this clone is shallow: the previous release's commit is not here. Fetch the history (git fetch --unshallow) or clone with full depth."
fi
if [[ -n ${IDENTITY_UPGRADE_FROM:-} ]]; then
    FROM=$IDENTITY_UPGRADE_FROM
    why="IDENTITY_UPGRADE_FROM"
else
    FROM=$(grep -v '^#' deploy/previous-release | head -1 | tr -d '[:space:]')
    [[ -n $FROM ]] || die "deploy/previous-release names no commit"
    why="deploy/previous-release"
fi
OLD_COMMIT=$(git rev-parse --verify --quiet "$FROM^{commit}") ||
    die "the previous release $FROM is not in this clone: fetch it (git fetch --unshallow, or the ref) first"
say "previous release: $(git log -1 --format='%h %ad' --date=short "$OLD_COMMIT"), $why"

OLD_DIR=$CACHE_DIR/$OLD_COMMIT
BUILT=$OLD_DIR/.upgrade-test-built
if [[ -f $BUILT ]]; then
    say "its release binaries are cached in $OLD_DIR"
else
    started=$SECONDS
    mkdir -p "$CACHE_DIR"
    # One previous release is kept: an older one's worktree and build go.
    for stale in "$CACHE_DIR"/*/; do
        stale=${stale%/}
        [[ $stale == "$OLD_DIR" ]] && continue
        git worktree remove --force "$stale" 2>/dev/null || rm -rf "$stale"
        rm -f "$stale.build.log"
    done
    # A worktree left by an interrupted build: start over.
    if [[ -e $OLD_DIR ]]; then
        git worktree remove --force "$OLD_DIR" 2>/dev/null || rm -rf "$OLD_DIR"
    fi
    git worktree prune
    git worktree add --detach --quiet "$OLD_DIR" "$OLD_COMMIT"
    # This checkout's build products as a head start (most modules and dependencies are the same);
    # the Clang module caches are not relocatable (they record their own path), so they go.
    if [[ -d $REPO_DIR/.build ]]; then
        mkdir -p "$OLD_DIR/.build"
        for entry in "$REPO_DIR"/.build/* "$REPO_DIR"/.build/.[!.]*; do
            [[ -e $entry || -L $entry ]] || continue
            case ${entry##*/} in .lock | debug | x86_64-unknown-linux-gnu | *-unknown-linux-*) continue ;; esac
            cp -a "$entry" "$OLD_DIR/.build/"
        done
        for triple in "$REPO_DIR"/.build/*-unknown-linux-*; do
            [[ -d $triple/release ]] || continue
            mkdir -p "$OLD_DIR/.build/${triple##*/}"
            cp -a "$triple/release" "$OLD_DIR/.build/${triple##*/}/"
            # This release's executables are not the previous one's: only what its build links.
            find "$OLD_DIR/.build/${triple##*/}/release" -maxdepth 1 -type f -perm -u+x -delete
        done
        find "$OLD_DIR/.build" -type d -name ModuleCache -prune -exec rm -rf {} +
    fi
    say "building the previous release in $OLD_DIR"
    (cd "$OLD_DIR" && swift build -c release) >"$CACHE_DIR/$OLD_COMMIT.build.log" 2>&1 ||
        { tail -40 "$CACHE_DIR/$OLD_COMMIT.build.log" >&2; die "the previous release does not build (log: $CACHE_DIR/$OLD_COMMIT.build.log)"; }
    (cd "$OLD_DIR" && swift build -c release --show-bin-path) >"$BUILT"
    say "built in $((SECONDS - started)) s"
fi
OLD_BIN_DIR=$(<"$BUILT")
# Every long-running process the previous release has (its Package.swift's executables).
OLD_PROCESSES=$(grep -o '\.executable(name: "[^"]*"' "$OLD_DIR/Package.swift" | sed 's/.*"\(.*\)"/\1/' | grep -vx identityctl | tr '\n' ' ')
[[ $OLD_PROCESSES == *identity-gateway* ]] || die "no identity-gateway among the previous release's executables"

# --- this release ---------------------------------------------------------------------------
if [[ -z ${IDENTITY_BIN_DIR:-} ]]; then
    swift build -c release
    IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path)
fi
NEW_PROCESSES=$(grep -o '\.executable(name: "[^"]*"' "$REPO_DIR/Package.swift" | sed 's/.*"\(.*\)"/\1/' | grep -vx identityctl | tr '\n' ' ')

# --- a database and a vhost of its own ------------------------------------------------------
# shellcheck disable=SC1091
source "$RUN_DIR/env"
"$SERVICES" psql -d postgres -q \
    -c "DROP DATABASE IF EXISTS $NAME WITH (FORCE)" \
    -c "CREATE DATABASE $NAME OWNER identity" >/dev/null
eval "$("$SERVICES" db-roles "$NAME")"
"$SERVICES" reset-vhost "$NAME" >/dev/null
export IDENTITY_DATABASE_URL=${IDENTITY_DATABASE_URL%/*}/$NAME
export IDENTITY_AMQP_URL=${IDENTITY_AMQP_URL%/*}/$NAME
export IDENTITY_RUN_DIR=$RUN_DIR IDENTITY_MIGRATIONS_DIR=$REPO_DIR/migrations
export IDENTITY_OLD_BIN_DIR=$OLD_BIN_DIR IDENTITY_OLD_PROCESSES=$OLD_PROCESSES IDENTITY_OLD_COMMIT=$OLD_COMMIT
export IDENTITY_NEW_BIN_DIR=$IDENTITY_BIN_DIR IDENTITY_NEW_PROCESSES=$NEW_PROCESSES

# The fixture stops every process it started, whatever happens (pytest's own teardown).
python3 -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$REPO_DIR/Tests/upgrade" "$REPO_DIR/Tests/upgrade"
