#!/usr/bin/env bash
# `make run`: migrate, make sure a dev app exists, then run the gateway and every worker in
# the foreground with prefixed logs. Ctrl-C (or SIGTERM) stops both; if one dies, the other is
# stopped and this exits non-zero. Expects services up and a release build (make run does both).
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH
cd "$REPO_DIR"
say() { printf 'run: %s\n' "$*" >&2; }

[[ -f $RUN_DIR/env ]] || { say "$RUN_DIR/env missing: run scripts/services.sh start"; exit 1; }
# shellcheck disable=SC1091
source "$RUN_DIR/env"
# Without an SMTP relay the mailer writes each message as an .eml file here.
export IDENTITY_MAIL_DIR=${IDENTITY_MAIL_DIR:-$RUN_DIR/mail}
# Texts of apps without an SMS account of their own go out on the operator's: which calling
# codes those may reach is the operator's to say (none by default). Here they are .sms files,
# so a few common codes are allowed for trying phone sign-in (the app allows its own too).
export IDENTITY_SMS_SHARED_CALLING_CODES=${IDENTITY_SMS_SHARED_CALLING_CODES:-1,33,44,49}
BIN=${RUN_BIN_DIR:-$(swift build -c release --show-bin-path)}   # RUN_BIN_DIR: other binaries

# Each process logs in to PostgreSQL as its own role (docs/architecture.md, "Database roles"): db_url NAME is
# $<NAME>_DATABASE_URL from .run/env (identity-gateway: IDENTITY_GATEWAY_DATABASE_URL), or the
# one IDENTITY_DATABASE_URL of an env written before the roles existed. Migrations run as the owner.
db_url() {
    local var; var=$(printf '%s' "$1" | tr 'a-z-' 'A-Z_')_DATABASE_URL
    printf '%s' "${!var:-$IDENTITY_DATABASE_URL}"
}

IDENTITY_DATABASE_URL=$(db_url identity-owner) "$BIN/identityctl" migrate
# Rows an older checkout sealed with the master key itself move under their sub-keys (a no-op
# once done; docs/architecture.md, "Keys").
IDENTITY_DATABASE_URL=$(db_url identity-owner) "$BIN/identityctl" keys reseal >/dev/null

DEV_APP=$RUN_DIR/dev-app.json
if [[ ! -s $DEV_APP ]]; then
    IDENTITY_DATABASE_URL=$(db_url identityctl) "$BIN/identityctl" apps create --name dev >"$DEV_APP.tmp"
    mv "$DEV_APP.tmp" "$DEV_APP"
    say "created the dev app"
fi
say "dev app ($DEV_APP):"
cat "$DEV_APP"
echo

# The web console (docs/console.md): its app once, and the dev app's owner by email, with an
# invitation link (a new one each run) that makes the owner's console account when opened.
CONSOLE_APP=$RUN_DIR/console-app.json
if [[ ! -s $CONSOLE_APP ]]; then
    IDENTITY_DATABASE_URL=$(db_url identityctl) "$BIN/identityctl" console init >"$CONSOLE_APP.tmp" \
        && mv "$CONSOLE_APP.tmp" "$CONSOLE_APP" && say "created the console app"
fi
CONSOLE_OWNER=${IDENTITY_CONSOLE_DEV_OWNER:-owner@example.com}
DEV_APP_ID=$(sed -n 's/.*"app_id":"\([^"]*\)".*/\1/p' "$DEV_APP")
INVITED=$(IDENTITY_DATABASE_URL=$(db_url identityctl) "$BIN/identityctl" console invite --app "$DEV_APP_ID" \
    --email "$CONSOLE_OWNER" --role owner)
say "console ($CONSOLE_APP): /console, owner of the dev app: $CONSOLE_OWNER"
say "  no console account yet? open $(sed -n 's/.*"invitation_url":"\([^"]*\)".*/\1/p' <<<"$INVITED") (works once, for 7 days)"

PROCS=(identity-gateway identity-token-worker identity-provider-worker identity-mailer-worker identity-revocation-worker
       identity-webhook-worker)
declare -A NAME_OF=()
PIDS=()
width=0
for name in "${PROCS[@]}"; do (( ${#name} > width )) && width=${#name}; done

interrupted=0
trap 'interrupted=$((interrupted + 1))' INT TERM
# Should this script itself fail, leave nothing behind.
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done' EXIT

# Least privilege: the gateway never gets the master key; the mailer gets only the sub-key
# that opens mail codes.
MAIL_PAYLOAD_KEY=$("$BIN/identityctl" keys mail-payload-key)
# The webhook worker likewise: only the sub-key that opens the endpoints' secrets.
WEBHOOK_SECRET_KEY=$("$BIN/identityctl" keys webhook-secret-key)
# Each process on its own broker user: IDENTITY_AMQP_URL_<KIND> from $RUN_DIR/env (identity-token-worker
# → IDENTITY_AMQP_URL_TOKEN_WORKER), else the shared IDENTITY_AMQP_URL.
amqp_url_of() {
    local kind=${1#identity-}; kind=${kind^^}; kind=IDENTITY_AMQP_URL_${kind//-/_}
    printf '%s' "${!kind:-$IDENTITY_AMQP_URL}"
}

for name in "${PROCS[@]}"; do
    prefix=$(printf "%-${width}s | " "$name")
    url=$(amqp_url_of "$name")
    case $name in
        identity-gateway) launch=(env -u IDENTITY_MASTER_KEY "IDENTITY_AMQP_URL=$url") ;;
        identity-mailer-worker)
            launch=(env -u IDENTITY_MASTER_KEY "IDENTITY_MAIL_PAYLOAD_KEY=$MAIL_PAYLOAD_KEY" "IDENTITY_AMQP_URL=$url") ;;
        identity-webhook-worker)
            launch=(env -u IDENTITY_MASTER_KEY "IDENTITY_WEBHOOK_SECRET_KEY=$WEBHOOK_SECRET_KEY" "IDENTITY_AMQP_URL=$url") ;;
        *) launch=(env "IDENTITY_AMQP_URL=$url") ;;
    esac
    # The log filter ignores Ctrl-C so it still prints what the process says while stopping.
    # Each process runs in a session of its own (setsid), so a Ctrl-C reaches only this script,
    # which sends each process exactly one SIGTERM: a terminal's SIGINT to the whole group plus
    # our SIGTERM would be two signals, which a process takes as "stop now, skip the drain".
    setsid "${launch[@]}" "IDENTITY_DATABASE_URL=$(db_url "$name")" "$BIN/$name" > >(trap '' INT TERM; exec sed -u "s/^/${prefix//\//\\/}/") 2>&1 &
    PIDS+=("$!")
    NAME_OF[$!]=$name
    say "started $name (pid $!)"
done

failed=0
while :; do
    died=
    rc=0
    wait -n -p died "${PIDS[@]}" || rc=$?
    died=${died:-}
    if [[ -n $died ]]; then
        say "${NAME_OF[$died]} exited with status $rc; stopping the others"
        failed=$(( rc == 0 ? 1 : rc ))
        break
    fi
    (( interrupted )) && break
    if (( rc == 127 )); then failed=1; break; fi   # nothing left to wait for
done

# Stop whatever still runs: SIGTERM, then wait (SIGKILL after 30 s or on a second Ctrl-C).
alive() {
    local p
    for p in "${PIDS[@]}"; do
        [[ $p != "$died" ]] && kill -0 "$p" 2>/dev/null && echo "$p"
    done
    return 0
}
mapfile -t rest < <(alive)
if (( ${#rest[@]} )); then
    say "stopping ${rest[*]/#/pid }"
    kill -TERM "${rest[@]}" 2>/dev/null || true
    start_interrupts=$interrupted
    for ((i = 0; i < 300; i++)); do
        mapfile -t rest < <(alive)
        (( ${#rest[@]} )) || break
        (( interrupted > start_interrupts )) && break
        sleep 0.1
    done
    mapfile -t rest < <(alive)
    if (( ${#rest[@]} )); then
        say "killing ${rest[*]/#/pid }"
        kill -KILL "${rest[@]}" 2>/dev/null || true
    fi
fi
for p in "${PIDS[@]}"; do
    [[ $p == "$died" ]] && continue
    rc=0
    wait "$p" 2>/dev/null || rc=$?
    say "${NAME_OF[$p]} stopped (status $rc)"
    # 143/130: ended by the signal we (or the terminal) sent.
    if (( rc != 0 && rc != 143 && rc != 130 && failed == 0 )); then failed=$rc; fi
done
wait 2>/dev/null || true   # log filters
exit "$failed"
