# Dev and CI entry points. Services (PostgreSQL, RabbitMQ) are private to this checkout: see
# scripts/services.sh. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

ifeq ($(shell command -v swift 2>/dev/null),)
export PATH := /opt/swift/usr/bin:$(PATH)
endif

RUN_DIR ?= $(CURDIR)/.run
export RUN_DIR

.PHONY: deps services build proto proto-check generator-test api-reference api-reference-check phone-table phone-table-check breached-passwords breached-passwords-check gateway-secrets-check door-seams-check config-doc config-doc-check references-check lint image migrate run test stop bench bench-profile chaos cluster deploy-check clean

deps:
	scripts/deps.sh

services: deps
	scripts/services.sh start

build:
	swift build -c release

proto: deps
	python3 tools/protogen.py

proto-check: deps
	python3 tools/protogen.py --check

# tools/protogen.py tested on its own: a fixture's output against references (tools/tests/).
generator-test: deps
	python3 -m pytest -q tools/tests

# The API reference page (web/api-reference/) and the console's files (web/console/), embedded into
# the gateway (tools/apirefgen.py, tools/consolegen.py).
api-reference:
	python3 tools/apirefgen.py
	python3 tools/consolegen.py

api-reference-check:
	python3 tools/apirefgen.py --check
	python3 tools/consolegen.py --check

# IdentityKit's calling-code table, generated from phonenumbers' metadata (tools/phonegen.py).
phone-table:
	python3 tools/phonegen.py

phone-table-check: deps
	python3 tools/phonegen.py --check

# IdentityKit's list of breached passwords, generated from zxcvbn's frequency lists (tools/breachgen.py).
breached-passwords:
	python3 tools/breachgen.py

breached-passwords-check: deps
	python3 tools/breachgen.py --check

# The gateway links no module that reads secret columns (IdentityCredentials), and no file of the
# modules it links names one (scripts/check-gateway-secrets.py; Package.swift says why).
gateway-secrets-check:
	python3 scripts/check-gateway-secrets.py

# Each door that calls operations in-process (GraphQL) reaches the service through the typed
# operation API only: its dependencies, imports and path literals (scripts/check-door-seams.py).
door-seams-check:
	python3 scripts/check-door-seams.py

# docs/configuration.md's table of variables, generated from IdentityKit's one list of them
# (tools/configdoc.py); the check also fails on a variable read in Sources/ but not listed.
config-doc:
	python3 tools/configdoc.py

config-doc-check:
	python3 tools/configdoc.py --check

# Every file the tracked sources, tests, protos, docs and scripts cite exists in the repository
# (a path, a Markdown link or .md name, a section by its heading: scripts/check-references.py),
# and the check's own test.
references-check:
	python3 scripts/check-references.py
	python3 scripts/tests/test_check_references.py

# swift-format's lint with the repository's .swift-format, on every hand-written Swift file
# (generated files come from tools/ and are checked against their generators instead).
lint:
	python3 tools/lint.py

# The service's image (localhost/identity:latest) from this checkout: a debootstrap base made once
# under .run/image, the release executables and the libraries they link (scripts/image.sh).
image: deps
	scripts/image.sh

migrate: services build
	source "$(RUN_DIR)/env" && IDENTITY_DATABASE_URL=$${IDENTITY_OWNER_DATABASE_URL:-$$IDENTITY_DATABASE_URL} \
		"$$(swift build -c release --show-bin-path)/identityctl" migrate

run: services build
	scripts/run.sh

test: services proto-check generator-test api-reference-check phone-table-check breached-passwords-check gateway-secrets-check door-seams-check config-doc-check references-check lint
	scripts/test.sh

stop:
	scripts/services.sh stop

bench: services
	scripts/bench.sh $(BENCH_ARGS)

# Where refresh, sign-in and the reads spend the machine's CPU, by process and library (perf).
bench-profile: services
	scripts/bench.sh --profile $(BENCH_ARGS)

# Rolling restarts under load, longer than make test's one round (Tests/e2e/test_rolling_restart.py)
# on a database and vhost of its own: ROUNDS=N restarts every process N times. Then node failures on
# the cluster harness (scripts/cluster-test.sh), each phase CLUSTER_PHASE seconds (make test: 6).
chaos: services
	IDENTITY_CHAOS_ROUNDS=$${ROUNDS:-3} scripts/e2e.sh identity_chaos Tests/e2e/test_rolling_restart.py -s
	IDENTITY_CLUSTER_CHAOS_SECONDS=$${CLUSTER_PHASE:-30} scripts/cluster-test.sh

# Three RabbitMQ nodes clustered and a PostgreSQL primary + streaming standby (scripts/cluster.sh).
cluster: deps
	scripts/cluster.sh start

# deploy/ validated (Kubernetes and Compose schemas, systemd-analyze); make test runs it too.
deploy-check: deps
	python3 scripts/check-deploy.py

clean:
	rm -rf .build
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -rf .pytest_cache
