#!/usr/bin/env bash
# Builds the identity service's image (localhost/identity:latest, or $IDENTITY_IMAGE) from this
# checkout with Debian's tools only: a Debian 12 minbase made once with debootstrap from Debian's
# mirror (cached under $RUN_DIR/image), imported as localhost/identity-base:bookworm, then
# deploy/image/Containerfile over the release executables and the Swift runtime they link.
#
#   scripts/image.sh            (make image)   builds the release executables first
#   IDENTITY_BIN_DIR=DIR scripts/image.sh      takes the executables from DIR
#
# Ends with an ldd check inside the image: a library the executables link but the image lacks
# fails the build. Sourced with IMAGE_SH_LIB=1, it only defines podman_env (scripts/image-test.sh).
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
IMAGE=${IDENTITY_IMAGE:-localhost/identity:latest}
BASE_IMAGE=localhost/identity-base:bookworm
IMAGE_DIR=${IDENTITY_IMAGE_DIR:-$RUN_DIR/image}
BASE_TAR=$IMAGE_DIR/bookworm-minbase.tar.zst
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
EXECUTABLES=(identity-gateway identity-token-worker identity-provider-worker identity-mailer-worker
             identity-revocation-worker identity-webhook-worker identityctl)

# podman's settings for this machine, in a file of our own (CONTAINERS_CONF; /etc untouched):
# runc (crun refuses cgroups in hybrid mode), and default ulimits no higher than the hard limits
# we have (podman's defaults ask for more, which fails without CAP_SYS_RESOURCE).
podman_env() {
    mkdir -p "$IMAGE_DIR"
    local nofile nproc
    nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
    [[ $nofile == unlimited ]] && nofile=1048576
    [[ $nproc == unlimited ]] && nproc=65536
    (( nproc > 32768 )) && nproc=32768
    cat > "$IMAGE_DIR/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
CONF
    export CONTAINERS_CONF=$IMAGE_DIR/containers.conf
}
[[ ${IMAGE_SH_LIB:-} == 1 ]] && return 0

step() { printf '==> image: %s\n' "$*" >&2; }
podman_env
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

# The base: debootstrap's minbase of Debian 12, made once.
if [[ ! -s $BASE_TAR ]]; then
    step "debootstrap bookworm minbase from $MIRROR (once; cached as $BASE_TAR)"
    rootfs=$(mktemp -d "$IMAGE_DIR/rootfs.XXXXXX")
    trap 'rm -rf "$rootfs"' EXIT
    debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" > "$IMAGE_DIR/debootstrap.log" 2>&1 \
        || { tail -20 "$IMAGE_DIR/debootstrap.log" >&2; exit 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" --numeric-owner -cf - . | zstd -q -T0 -o "$BASE_TAR.tmp"
    mv "$BASE_TAR.tmp" "$BASE_TAR"
    rm -rf "$rootfs"; trap - EXIT
    podman rmi -f "$BASE_IMAGE" >/dev/null 2>&1 || true
fi
if ! podman image exists "$BASE_IMAGE"; then
    step "podman import $BASE_TAR as $BASE_IMAGE"
    zstd -q -dc "$BASE_TAR" | podman import --quiet - "$BASE_IMAGE" >/dev/null
fi

# The executables.
if [[ -z ${IDENTITY_BIN_DIR:-} ]]; then
    step "swift build -c release"
    (cd "$REPO_DIR" && swift build -c release)
    IDENTITY_BIN_DIR=$(cd "$REPO_DIR" && swift build -c release --show-bin-path)
fi

# The build context: only what the image holds (the checkout's .build is gigabytes).
ctx=$IMAGE_DIR/context
rm -rf "$ctx"
mkdir -p "$ctx/bin" "$ctx/swift" "$ctx/migrations"
for exe in "${EXECUTABLES[@]}"; do
    cp "$IDENTITY_BIN_DIR/$exe" "$ctx/bin/"
done
cp -r "$REPO_DIR/migrations/." "$ctx/migrations/"
# The Swift runtime, where the executables' RUNPATH looks for it: every library ldd resolves
# from the toolchain.
ldd "${ctx}"/bin/* | awk '$3 ~ /^\/opt\/swift\// {print $3}' | sort -u | while read -r lib; do
    mkdir -p "$ctx/swift$(dirname "$lib")"
    cp -L "$lib" "$ctx/swift$lib"
done
cp "$REPO_DIR/deploy/image/Containerfile" "$ctx/Containerfile"

step "podman build $IMAGE"
podman build --quiet --layers --network host -f "$ctx/Containerfile" -t "$IMAGE" "$ctx" >/dev/null

# Every library each executable links, resolved inside the image.
missing=$(podman run --rm --network none --entrypoint /bin/sh "$IMAGE" -c \
    'for f in /usr/local/bin/*; do ldd "$f" | sed -n "s|^|$f: |; /not found/p"; done')
if [[ -n $missing ]]; then
    printf 'image: libraries missing in %s:\n%s\n' "$IMAGE" "$missing" >&2
    exit 1
fi
step "$IMAGE built; every executable's libraries resolve inside it"
