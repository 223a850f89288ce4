#!/usr/bin/env bash
# Private PostgreSQL and RabbitMQ instances for this checkout (dev and tests).
#
#   scripts/services.sh start|stop|status|stop-broker|start-broker|stop-db|start-db|destroy
#   scripts/services.sh ctl ARGS...         rabbitmqctl against this checkout's node
#   scripts/services.sh psql ARGS...        psql as superuser `postgres` on this checkout's server
#   scripts/services.sh reset-vhost NAME    delete + recreate a vhost, full permissions for guest,
#                                           the per-process broker users (scripts/broker-users.sh)
#   scripts/services.sh db-roles DATABASE   the process roles for DATABASE (owner identity_owner);
#                                           prints export IDENTITY_<ROLE>_DATABASE_URL=... lines
#
# RUN_DIR (default <repo>/.run; IDENTITY_RUN_DIR is honoured too) holds `env`, `master.key` and,
# when the postgres and rabbitmq users can traverse to it, the data. Otherwise (a parent folder
# such as /root is closed to them, or the path is too long for a Unix socket) the data lives in
# /tmp/identity-services-<hash of RUN_DIR>. Everything is idempotent: start reuses what is there.
#
# Ports are fixed (a second checkout cannot run its services at the same time; `start` then fails
# with a clear message): PostgreSQL 55432, AMQP 55672, Erlang distribution 55673.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
PG_PORT=${PG_PORT:-55432}
AMQP_PORT=${AMQP_PORT:-55672}
AMQP_DIST_PORT=${AMQP_DIST_PORT:-55673}
RMQ_NODE=identity@localhost
TEST_VHOST=identity_test

log() { printf 'services: %s\n' "$*" >&2; }
die() { printf 'services: error: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "must run as root (or with sudo installed)"
    SUDO=(sudo)
fi

# Run a command as another system user, with argv passed through untouched.
as_user() {
    local user=$1; shift
    if [[ $(id -u) -eq 0 ]]; then runuser -u "$user" -- "$@"; else sudo -u "$user" -- "$@"; fi
}

mkdir -p "$RUN_DIR" 2>/dev/null || "${SUDO[@]}" mkdir -p "$RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd -P)
cd /   # the service users may not be allowed into the caller's working directory

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

have_users() {
    id postgres >/dev/null 2>&1 || die "user postgres missing: run scripts/deps.sh (make deps)"
    id rabbitmq >/dev/null 2>&1 || die "user rabbitmq missing: run scripts/deps.sh (make deps)"
}

# ---------------------------------------------------------------------------------------------
# Where the data lives.
resolve_data_dir() {
    # Let the service users in: the repo folder and RUN_DIR are ours to open.
    if [[ $RUN_DIR == "$REPO_DIR"/* ]]; then "${SUDO[@]}" chmod o+x "$REPO_DIR"; fi
    "${SUDO[@]}" chmod o+x "$RUN_DIR"
    local sock_suffix="/pg/sock/.s.PGSQL.$PG_PORT"
    if [[ $RUN_DIR =~ ^[A-Za-z0-9_./+@-]+$ ]] && (( ${#RUN_DIR} + ${#sock_suffix} <= 100 )) \
        && as_user postgres test -x "$RUN_DIR" && as_user rabbitmq test -x "$RUN_DIR"; then
        DATA_DIR=$RUN_DIR
    else
        DATA_DIR=/tmp/identity-services-$(printf '%s' "$RUN_DIR" | sha256sum | cut -c1-12)
        "${SUDO[@]}" mkdir -p "$DATA_DIR"
        "${SUDO[@]}" chmod 0755 "$DATA_DIR"
    fi
    printf '%s\n' "$DATA_DIR" >"$RUN_DIR/data-dir"
    set_paths
}

set_paths() {
    PG_DIR=$DATA_DIR/pg
    PGDATA_DIR=$PG_DIR/data
    PG_SOCK=$PG_DIR/sock
    PG_LOG=$PG_DIR/postgres.log
    RMQ_DIR=$DATA_DIR/rabbitmq
    RMQ_MNESIA=$RMQ_DIR/mnesia
    RMQ_LOGS=$RMQ_DIR/log
    RMQ_PIDFILE=$RMQ_MNESIA/$RMQ_NODE.pid
}

# Data dir without side effects (status, stop, ctl, psql): the one `start` recorded.
peek_data_dir() {
    if [[ -s $RUN_DIR/data-dir ]]; then DATA_DIR=$(<"$RUN_DIR/data-dir"); else DATA_DIR=$RUN_DIR; fi
    set_paths
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL
pg_bin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [[ -n $d && -x $d/pg_ctl ]] || die "PostgreSQL server binaries not found under /usr/lib/postgresql: run scripts/deps.sh"
    printf '%s' "$d"
}

pg_running() { [[ -f $PGDATA_DIR/PG_VERSION ]] && as_user postgres "$PG_BIN/pg_ctl" status -D "$PGDATA_DIR" >/dev/null 2>&1; }

pg_psql() { PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres "$@"; }

# The services listen inside the kernel's ephemeral port range (32768-60999 by default): while
# one is stopped (a restart in the tests), any process's outgoing connection may be given its
# port as the local end, and the service then cannot listen on it again until that connection
# closes. Reserved ports are never handed out that way. Root only (a no-op elsewhere, or where
# /proc/sys is read-only).
reserve_ports() {
    local file=/proc/sys/net/ipv4/ip_local_reserved_ports current p
    [[ -w $file ]] || return 0
    current=$(cat "$file" 2>/dev/null) || return 0
    for p in "$@"; do
        [[ ",$current," == *",$p,"* ]] && continue
        current=${current:+$current,}$p
    done
    echo "$current" >"$file" 2>/dev/null || true
}

pg_start() {
    reserve_ports "$PG_PORT"
    PG_BIN=$(pg_bin)
    "${SUDO[@]}" install -d -o postgres -g postgres -m 0755 "$PG_DIR" "$PG_SOCK"
    if [[ ! -f $PGDATA_DIR/PG_VERSION ]]; then
        log "postgres: initdb $PGDATA_DIR"
        "${SUDO[@]}" rm -rf "$PGDATA_DIR"
        "${SUDO[@]}" install -d -o postgres -g postgres -m 0700 "$PGDATA_DIR"
        as_user postgres "$PG_BIN/initdb" -D "$PGDATA_DIR" -U postgres -E UTF8 --locale=C \
            --auth-local=trust --auth-host=trust >"$RUN_DIR/initdb.log" 2>&1 \
            || { cat "$RUN_DIR/initdb.log" >&2; die "initdb failed"; }
        # Private dev instance on loopback: trust for local and 127.0.0.1 only.
        printf '%s\n' \
            'local all all trust' \
            'host  all all 127.0.0.1/32 trust' \
            'local replication all trust' \
            'host  replication all 127.0.0.1/32 trust' \
            | as_user postgres tee "$PGDATA_DIR/pg_hba.conf" >/dev/null
    fi
    if pg_running; then
        log "postgres: already running (port $PG_PORT, data $PGDATA_DIR)"
    else
        if port_open "$PG_PORT"; then
            die "port $PG_PORT is taken by another process (another checkout's services? stop them with its scripts/services.sh stop)"
        fi
        local t0; t0=$(now)
        # setsid: a Ctrl-C in the caller's terminal must not reach the server.
        setsid -w "${SUDO[@]}" runuser -u postgres -- "$PG_BIN/pg_ctl" start -D "$PGDATA_DIR" -l "$PG_LOG" -w -t 120 \
            -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_SOCK" >/dev/null \
            || { tail -n 30 "$PG_LOG" >&2 || true; die "postgres failed to start (log: $PG_LOG)"; }
        log "postgres: started in $(elapsed "$t0") s (port $PG_PORT, data $PGDATA_DIR)"
    fi
    local i
    for ((i = 0; i < 120; i++)); do
        "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break
        sleep 0.5
    done
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || die "postgres does not accept connections (log: $PG_LOG)"
    if [[ $(pg_psql -d postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'identity'") != 1 ]]; then
        pg_psql -d postgres -c 'CREATE ROLE identity LOGIN SUPERUSER'
        log "postgres: created role identity"
    fi
    if [[ $(pg_psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'identity'") != 1 ]]; then
        pg_psql -d postgres -c 'CREATE DATABASE identity OWNER identity'
        log "postgres: created database identity"
    fi
}

pg_stop() {
    PG_BIN=$(pg_bin)
    if pg_running; then
        as_user postgres "$PG_BIN/pg_ctl" stop -D "$PGDATA_DIR" -m fast -w -t 60 >/dev/null
        log "postgres: stopped"
    else
        log "postgres: not running"
    fi
}

pg_status() {
    PG_BIN=$(pg_bin 2>/dev/null) || { echo "postgres: not installed"; return 1; }
    if pg_running && "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then
        echo "postgres: running  postgresql://identity@127.0.0.1:$PG_PORT/identity  data $PGDATA_DIR"
    else
        echo "postgres: stopped  (data $PGDATA_DIR)"
        return 1
    fi
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL roles: one login per process kind (docs/architecture.md, "Database roles"). Roles belong to the
# cluster, grants to each database (migrations/0010_process_roles.sql). `db-roles DB` creates
# the roles (or resets their passwords), hands DB and everything in its public schema to
# identity_owner (so migrations run as a role that is not a superuser), and prints one
# `export IDENTITY_<ROLE>_DATABASE_URL=...` line per role for that database.
DB_ROLES=(identity_owner identity_gateway identity_token_worker identity_provider_worker
          identity_mailer_worker identity_revocation_worker identity_webhook_worker identityctl)

# The role's password, made once and kept in $RUN_DIR/db-passwords (mode 0600).
db_role_password() {
    local role=$1 file=$RUN_DIR/db-passwords pw
    pw=$(sed -n "s/^$role://p" "$file" 2>/dev/null | head -n 1)
    if [[ -z $pw ]]; then
        pw=$(openssl rand -hex 24)
        (umask 077; printf '%s:%s\n' "$role" "$pw" >>"$file")
    fi
    printf '%s' "$pw"
}

db_roles() {
    local db=$1 role pw
    [[ $db =~ ^[A-Za-z0-9_]+$ ]] || die "database name '$db': letters, digits and _ only"
    [[ $(pg_psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'") == 1 ]] \
        || die "database $db does not exist"
    for role in "${DB_ROLES[@]}"; do
        pw=$(db_role_password "$role")
        # Race-safe (another checkout may create the same cluster-wide role at the same time);
        # the owner may create tables in databases it owns, nothing more.
        pg_psql -d postgres <<SQL
DO \$\$ BEGIN CREATE ROLE $role; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$;
ALTER ROLE $role WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$pw';
SQL
    done
    pg_psql -d postgres -c "ALTER DATABASE $db OWNER TO identity_owner"
    # A database migrated before it had an owner role (by the superuser `identity`): its tables
    # (with their sequences), views and functions go to identity_owner.
    pg_psql -d "$db" <<'SQL'
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT c.oid::regclass AS rel, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')
               AND c.relowner <> 'identity_owner'::regrole LOOP
        EXECUTE format('ALTER %s %s OWNER TO identity_owner',
                       CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END, r.rel);
    END LOOP;
    FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'public' AND p.proowner <> 'identity_owner'::regrole LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO identity_owner', r.fn);
    END LOOP;
END
$$;
SQL
    for role in "${DB_ROLES[@]}"; do
        printf 'export %s=%q\n' "${role^^}_DATABASE_URL" \
            "postgresql://$role:$(db_role_password "$role")@127.0.0.1:$PG_PORT/$db"
    done
}

# ---------------------------------------------------------------------------------------------
# RabbitMQ
#
# Cookie: the server and every CLI call run as user rabbitmq with HOME set to that user's home,
# so both read the same $HOME/.erlang.cookie; that is also what a plain `rabbitmqctl` run by root
# (Debian's wrapper su's to rabbitmq) uses, so `rabbitmqctl -n identity@localhost ...` works too.
RMQ_LIB=/usr/lib/rabbitmq/bin

rmq_home() { getent passwd rabbitmq | cut -d: -f6; }

rmq_ensure_cookie() {
    local home cookie; home=$(rmq_home); cookie=$home/.erlang.cookie
    "${SUDO[@]}" install -d -o rabbitmq -g rabbitmq "$home"
    if ! "${SUDO[@]}" test -s "$cookie"; then
        log "rabbitmq: creating Erlang cookie $cookie"
        openssl rand -hex 20 | tr a-f A-F | tr -d '\n' | "${SUDO[@]}" tee "$cookie" >/dev/null
    fi
    "${SUDO[@]}" chown rabbitmq:rabbitmq "$cookie"
    "${SUDO[@]}" chmod 0400 "$cookie"
}

# Environment for the server and the CLI. The CLI gets no port variables: its own distribution
# port range is 35672-35682 by default.
rmq_common_env() {
    printf '%s\n' \
        "HOME=$(rmq_home)" \
        "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" \
        "LANG=C.UTF-8" \
        "RABBITMQ_CONF_ENV_FILE=$RMQ_DIR/rabbitmq-env.conf" \
        "RABBITMQ_NODENAME=$RMQ_NODE" \
        "ERL_EPMD_ADDRESS=127.0.0.1"
}

ctl() {
    local -a envs; mapfile -t envs < <(rmq_common_env)
    as_user rabbitmq env -i "${envs[@]}" "$RMQ_LIB/rabbitmqctl" -n "$RMQ_NODE" "$@"
}

rmq_up() { ctl -q ping >/dev/null 2>&1; }

# Fails when the node that answers as identity@localhost runs from another data folder.
rmq_is_ours() {
    local dir
    dir=$(ctl -q eval 'rabbit_mnesia:dir().' 2>/dev/null | tr -d '"') || return 1
    [[ $dir == "$RMQ_MNESIA"/* ]]
}

rmq_prepare() {
    "${SUDO[@]}" install -d -o rabbitmq -g rabbitmq -m 0755 "$RMQ_DIR" "$RMQ_MNESIA" "$RMQ_LOGS"
    # Own config files, so /etc/rabbitmq does not leak in. No plugins: faster start-up.
    printf '%s\n' '# written by scripts/services.sh' | "${SUDO[@]}" tee "$RMQ_DIR/rabbitmq-env.conf" >/dev/null
    printf '%s\n' '[].' | "${SUDO[@]}" tee "$RMQ_DIR/enabled_plugins" >/dev/null
    printf '%s\n' \
        '# written by scripts/services.sh' \
        'loopback_users.guest = true' \
        'log.file.level = info' \
        'log.console = false' \
        | "${SUDO[@]}" tee "$RMQ_DIR/rabbitmq.conf" >/dev/null
    "${SUDO[@]}" chmod 0644 "$RMQ_DIR/rabbitmq-env.conf" "$RMQ_DIR/enabled_plugins" "$RMQ_DIR/rabbitmq.conf"
}

rmq_wait_port() {
    local i
    for ((i = 0; i < 240; i++)); do port_open "$AMQP_PORT" && return 0; sleep 0.5; done
    return 1
}

rmq_start() {
    reserve_ports "$AMQP_PORT" "$AMQP_DIST_PORT"
    rmq_ensure_cookie
    rmq_prepare
    if rmq_up; then
        rmq_is_ours || die "node $RMQ_NODE is already running from another data folder (another checkout's services? stop them with its scripts/services.sh stop)"
        log "rabbitmq: already running (node $RMQ_NODE, port $AMQP_PORT, data $RMQ_DIR)"
    else
        local p
        for p in "$AMQP_PORT" "$AMQP_DIST_PORT"; do
            port_open "$p" && die "port $p is taken by another process (another checkout's services? stop them with its scripts/services.sh stop)"
        done
        local t0; t0=$(now)
        local -a envs; mapfile -t envs < <(rmq_common_env)
        envs+=(
            "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1"
            "RABBITMQ_NODE_PORT=$AMQP_PORT"
            "RABBITMQ_DIST_PORT=$AMQP_DIST_PORT"
            "RABBITMQ_MNESIA_BASE=$RMQ_MNESIA"
            "RABBITMQ_LOG_BASE=$RMQ_LOGS"
            "RABBITMQ_CONFIG_FILE=$RMQ_DIR/rabbitmq.conf"
            "RABBITMQ_ADVANCED_CONFIG_FILE=$RMQ_DIR/advanced.config"
            "RABBITMQ_ENABLED_PLUGINS_FILE=$RMQ_DIR/enabled_plugins"
            "RABBITMQ_PID_FILE=$RMQ_PIDFILE"
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}"
        )
        # Backgrounded in its own session (a Ctrl-C in the caller's terminal must not reach it).
        setsid "${SUDO[@]}" runuser -u rabbitmq -- env -i "${envs[@]}" "$RMQ_LIB/rabbitmq-server" \
            >>"$RMQ_DIR/startup.log" 2>&1 </dev/null &
        local bg=$! i
        for ((i = 0; i < 120; i++)); do
            if ! kill -0 "$bg" 2>/dev/null; then
                tail -n 40 "$RMQ_DIR/startup.log" >&2 || true
                die "rabbitmq-server exited during start-up (logs: $RMQ_DIR/startup.log, $RMQ_LOGS)"
            fi
            rmq_up && break
            sleep 0.5
        done
        ctl -q await_startup --timeout 120 >/dev/null \
            || die "rabbitmq did not start (logs: $RMQ_DIR/startup.log, $RMQ_LOGS)"
        rmq_wait_port || die "rabbitmq does not accept connections on 127.0.0.1:$AMQP_PORT"
        log "rabbitmq: started in $(elapsed "$t0") s (node $RMQ_NODE, port $AMQP_PORT, data $RMQ_DIR)"
    fi
    rmq_wait_port || die "rabbitmq does not accept connections on 127.0.0.1:$AMQP_PORT"
    if ! ctl -q list_vhosts name 2>/dev/null | grep -qx "$TEST_VHOST"; then
        ctl -q add_vhost "$TEST_VHOST" >/dev/null
        ctl -q set_permissions -p "$TEST_VHOST" guest '.*' '.*' '.*' >/dev/null
        ctl -q set_permissions -p / guest '.*' '.*' '.*' >/dev/null
        log "rabbitmq: created vhost $TEST_VHOST"
    fi
    rmq_users /
}

rmq_stop() {
    if rmq_up; then
        if ! rmq_is_ours; then
            log "error: node $RMQ_NODE runs from another data folder (another checkout); left alone"
            return 1
        fi
        if [[ -f $RMQ_PIDFILE ]]; then ctl -q stop "$RMQ_PIDFILE" >/dev/null; else ctl -q shutdown >/dev/null; fi
        local i
        for ((i = 0; i < 60; i++)); do port_open "$AMQP_PORT" || break; sleep 0.5; done
        log "rabbitmq: stopped"
    else
        log "rabbitmq: not running"
    fi
}

rmq_status() {
    if [[ -x $RMQ_LIB/rabbitmqctl ]] && rmq_up && rmq_is_ours && port_open "$AMQP_PORT"; then
        echo "rabbitmq: running  amqp://guest:guest@127.0.0.1:$AMQP_PORT/  node $RMQ_NODE  data $RMQ_DIR"
    else
        echo "rabbitmq: stopped  (node $RMQ_NODE, data $RMQ_DIR)"
        return 1
    fi
}

reset_vhost() {
    local vhost=$1
    if ctl -q list_vhosts name | grep -qx "$vhost"; then ctl -q delete_vhost "$vhost" >/dev/null; fi
    ctl -q add_vhost "$vhost" >/dev/null
    ctl -q set_permissions -p "$vhost" guest '.*' '.*' '.*' >/dev/null
    rmq_users "$vhost"
}

# ---------------------------------------------------------------------------------------------
# Broker users: one per process kind (scripts/broker-users.sh defines them and their
# permissions), passwords in $RUN_DIR/amqp-users (0600), URLs in $RUN_DIR/env as
# IDENTITY_AMQP_URL_<KIND> (vhost /; the harnesses swap in their own vhost). guest keeps full
# permissions for the harnesses' own checks.
AMQP_USERS_FILE=$RUN_DIR/amqp-users

rmq_users() {
    "$REPO_DIR/scripts/broker-users.sh" definitions "$1" "$AMQP_USERS_FILE" \
        | ctl -q import_definitions --format json >/dev/null \
        || die "could not create the broker users in vhost $1"
}

amqp_user_env() {
    "$REPO_DIR/scripts/broker-users.sh" urls / "$AMQP_USERS_FILE" "127.0.0.1:$AMQP_PORT"
}

# ---------------------------------------------------------------------------------------------
# $RUN_DIR/env
write_env() {
    local key_file=$RUN_DIR/master.key
    if [[ ! -s $key_file ]]; then
        (umask 077; openssl rand -hex 32 >"$key_file.tmp") && mv "$key_file.tmp" "$key_file"
    fi
    local key; key=$(tr -d '[:space:]' <"$key_file")
    [[ $key =~ ^[0-9a-f]{64}$ ]] || die "$key_file does not hold 64 hex characters"
    local tmp=$RUN_DIR/env.tmp
    {
        echo "# Written by scripts/services.sh start. IDENTITY_* variables set in the environment"
        echo "# of that call override these defaults. Service data: $DATA_DIR"
        printf 'export %s=%q\n' \
            IDENTITY_DATABASE_URL "${IDENTITY_DATABASE_URL:-postgresql://identity@127.0.0.1:$PG_PORT/identity}" \
            IDENTITY_AMQP_URL "${IDENTITY_AMQP_URL:-amqp://guest:guest@127.0.0.1:$AMQP_PORT/%2F}" \
            IDENTITY_MASTER_KEY "${IDENTITY_MASTER_KEY:-$key}" \
            IDENTITY_HTTP_PORT "${IDENTITY_HTTP_PORT:-8080}" \
            IDENTITY_PUBLIC_BASE_URL "${IDENTITY_PUBLIC_BASE_URL:-http://127.0.0.1:8080}" \
            IDENTITY_MIGRATIONS_DIR "${IDENTITY_MIGRATIONS_DIR:-$REPO_DIR/migrations}"
        echo "# One broker user per process kind (scripts/broker-users.sh); IDENTITY_AMQP_URL (guest)"
        echo "# is the harnesses' own. scripts/run.sh gives each process its IDENTITY_AMQP_URL_<KIND>."
        amqp_user_env
    } >"$tmp"
    chmod 0600 "$tmp"
    mv "$tmp" "$RUN_DIR/env"
}

# ---------------------------------------------------------------------------------------------
cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
    start)
        have_users; resolve_data_dir
        pg_start
        rmq_start
        write_env
        # The per-process database URLs of the dev database (its own block of $RUN_DIR/env).
        PG_BIN=$(pg_bin); db_roles identity >>"$RUN_DIR/env"
        log "environment: $RUN_DIR/env"
        ;;
    stop)
        peek_data_dir
        rc=0
        rmq_stop || rc=1
        pg_stop || rc=1
        exit $rc
        ;;
    stop-broker)
        peek_data_dir
        rmq_stop
        ;;
    start-broker)
        have_users; resolve_data_dir
        rmq_start
        ;;
    stop-db)
        # PostgreSQL only (pg_ctl stop -m fast: open connections are cut, as in a restart).
        peek_data_dir
        pg_stop
        ;;
    start-db)
        # PostgreSQL only; returns once it accepts connections.
        have_users; resolve_data_dir
        pg_start
        ;;
    status)
        peek_data_dir
        rc=0
        pg_status || rc=1
        rmq_status || rc=1
        exit $rc
        ;;
    ctl)
        peek_data_dir
        ctl "$@"
        ;;
    psql)
        peek_data_dir; PG_BIN=$(pg_bin)
        pg_psql "$@"
        ;;
    db-roles)
        [[ $# -eq 1 ]] || die "usage: $0 db-roles DATABASE"
        peek_data_dir; PG_BIN=$(pg_bin)
        db_roles "$1"
        ;;
    reset-vhost)
        [[ $# -eq 1 ]] || die "usage: $0 reset-vhost NAME"
        peek_data_dir
        reset_vhost "$1"
        ;;
    destroy)
        # Stop both and delete their data (not RUN_DIR's env, master.key or dev-app.json).
        peek_data_dir
        rmq_stop || die "not deleting anything"
        pg_stop
        "${SUDO[@]}" rm -rf "$DATA_DIR/pg" "$DATA_DIR/rabbitmq"
        if [[ $DATA_DIR != "$RUN_DIR" ]]; then "${SUDO[@]}" rmdir "$DATA_DIR" 2>/dev/null || true; fi
        log "deleted service data in $DATA_DIR"
        ;;
    *)
        echo "usage: $0 start|stop|status|stop-broker|start-broker|stop-db|start-db|destroy|ctl ARGS|psql ARGS|reset-vhost NAME|db-roles DATABASE" >&2
        exit 2
        ;;
esac
