#!/usr/bin/env bash
# Boots deploy/systemd's units, as shipped, under systemd in a Debian 12 container
# (systemd-nspawn: PID 1 of the host need not be systemd) against the running services, on a
# database and a vhost of its own (like scripts/image-test.sh), and runs Tests/systemd: every
# unit active, every process's /readyz and /metrics, sign-up, sign-in, refresh, /me and a mailed
# code through the gateway.
#
#   scripts/systemd-test.sh [NAME]        NAME: the database and vhost (default identity_systemd)
#   IDENTITY_BIN_DIR=DIR scripts/systemd-test.sh   takes the release executables from DIR
#                                                  (default: swift build -c release first)
#
# The root filesystem (Debian 12 minbase, systemd and the C libraries the executables link) is
# made once and cached as $IDENTITY_SYSTEMD_DIR/bookworm-systemd.tar.zst (default
# $RUN_DIR/systemd); its debootstrap base is image.sh's ($RUN_DIR/image) when there. Each run
# unpacks it afresh, adds the executables, the Swift runtime they link, the migrations, the units
# and their /etc/identity, boots it, and removes it: the machine is powered off and its
# directory deleted whatever happens.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
export RUN_DIR
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
SERVICES=$REPO_DIR/scripts/services.sh
NAME=${1:-identity_systemd}
[[ $NAME =~ ^[a-z0-9_]+$ && $NAME != identity_test ]] || { echo "usage: $0 [NAME]" >&2; exit 2; }
[[ -f $RUN_DIR/env ]] || { echo "systemd-test: $RUN_DIR/env missing: run scripts/services.sh start" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "systemd-test: needs root (systemd-nspawn)" >&2; exit 1; }
command -v systemd-nspawn >/dev/null || { echo "systemd-test: systemd-nspawn missing (scripts/deps.sh installs systemd-container)" >&2; exit 1; }
# shellcheck disable=SC1091
source "$RUN_DIR/env"

CACHE_DIR=${IDENTITY_SYSTEMD_DIR:-$RUN_DIR/systemd}
BASE_TAR=${IDENTITY_IMAGE_DIR:-$RUN_DIR/image}/bookworm-minbase.tar.zst
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# systemd, and the runtime packages of what scripts/deps.sh installs to build (as
# deploy/image/Containerfile); a change of this list makes a new root filesystem.
PACKAGES=(systemd systemd-sysv dbus libpq5 librabbitmq4 libssl3 libargon2-1 libsodium23 libmicrohttpd12
          libcurl4 libcbor0.8 libqrencode4 ca-certificates tzdata)
EXECUTABLES=(identity-gateway identity-token-worker identity-provider-worker identity-mailer-worker
             identity-revocation-worker identity-webhook-worker identityctl)
step() { printf '==> systemd-test: %s\n' "$*" >&2; }
mkdir -p "$CACHE_DIR"

# The root filesystem, made once per package list.
packages_hash=$(printf '%s\n' "${PACKAGES[@]}" | sha256sum | cut -c1-12)
ROOTFS_TAR=$CACHE_DIR/bookworm-systemd-$packages_hash.tar.zst
if [[ ! -s $ROOTFS_TAR ]]; then
    build=$(mktemp -d "$CACHE_DIR/build.XXXXXX")
    trap 'rm -rf "$build"' EXIT
    if [[ -s $BASE_TAR ]]; then
        step "root filesystem from $BASE_TAR"
        zstd -q -dc "$BASE_TAR" | tar -C "$build" --numeric-owner -xf -
    else
        step "debootstrap bookworm minbase from $MIRROR (once)"
        debootstrap --variant=minbase bookworm "$build" "$MIRROR" > "$CACHE_DIR/debootstrap.log" 2>&1 \
            || { tail -20 "$CACHE_DIR/debootstrap.log" >&2; exit 1; }
    fi
    chmod 0755 "$build"  # the tar's own "." may be a private temporary directory's 0700
    step "apt-get install ${PACKAGES[*]} (once; cached as $ROOTFS_TAR)"
    systemd-nspawn --quiet --register=no --keep-unit -D "$build" --setenv=DEBIAN_FRONTEND=noninteractive \
        /bin/sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${PACKAGES[*]} \
                    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb" \
        > "$CACHE_DIR/apt.log" 2>&1 || { tail -20 "$CACHE_DIR/apt.log" >&2; exit 1; }
    tar -C "$build" --numeric-owner -cf - . | zstd -q -T0 -o "$ROOTFS_TAR.tmp"
    mv "$ROOTFS_TAR.tmp" "$ROOTFS_TAR"
    rm -rf "$build"; trap - EXIT
fi

# The executables.
if [[ -z ${IDENTITY_BIN_DIR:-} ]]; then
    step "swift build -c release"
    swift build -c release
    IDENTITY_BIN_DIR=$(swift build -c release --show-bin-path)
fi

# A fresh database and vhost, and each process kind's own role and broker user on them.
"$SERVICES" psql -d postgres -q \
    -c "DROP DATABASE IF EXISTS $NAME WITH (FORCE)" \
    -c "CREATE DATABASE $NAME OWNER identity" >/dev/null
eval "$("$SERVICES" db-roles "$NAME")"
"$SERVICES" reset-vhost "$NAME" >/dev/null
export IDENTITY_DATABASE_URL=${IDENTITY_DATABASE_URL%/*}/$NAME
export IDENTITY_AMQP_URL=${IDENTITY_AMQP_URL%/*}/$NAME

# This run's machine: unpacked here, removed on the way out (the fixture powers it off first;
# the trap stops whatever is left of it).
ROOT=$(mktemp -d "$CACHE_DIR/machine.XXXXXX")
export IDENTITY_SYSTEMD_ROOT=$ROOT
export IDENTITY_SYSTEMD_PIDFILE=$ROOT.pid
cleanup() {
    local pid
    pid=$(cat "$IDENTITY_SYSTEMD_PIDFILE" 2>/dev/null || true)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$ROOT" "$IDENTITY_SYSTEMD_PIDFILE" "$ROOT.console.log"
}
trap cleanup EXIT INT TERM
step "unpacking the machine in $ROOT"
zstd -q -dc "$ROOTFS_TAR" | tar -C "$ROOT" --numeric-owner -xf -
chmod 0755 "$ROOT"  # the dynamic users must reach /
for exe in "${EXECUTABLES[@]}"; do
    install -m 0755 "$IDENTITY_BIN_DIR/$exe" "$ROOT/usr/local/bin/$exe"
done
# The Swift runtime where the executables' RUNPATH looks for it (as scripts/image.sh copies it).
ldd "$ROOT"/usr/local/bin/* | awk '$3 ~ /^\/opt\/swift\// {print $3}' | sort -u | while read -r lib; do
    mkdir -p "$ROOT$(dirname "$lib")"
    cp -L "$lib" "$ROOT$lib"
done
mkdir -p "$ROOT/usr/share/identity/migrations"
cp -r migrations/. "$ROOT/usr/share/identity/migrations/"
cp deploy/systemd/*.service deploy/systemd/*.target "$ROOT/etc/systemd/system/"

export IDENTITY_RUN_DIR=$RUN_DIR IDENTITY_BIN_DIR
python3 -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$REPO_DIR/Tests/systemd" "$REPO_DIR/Tests/systemd"
