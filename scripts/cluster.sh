#!/usr/bin/env bash
# The service's engines past one machine, on one machine (docs/operations.md, "Running past one machine"):
# three RabbitMQ nodes clustered together and a PostgreSQL primary with a streaming standby, all
# under CLUSTER_DIR, on ports of their own (nothing shared with scripts/services.sh).
#
#   scripts/cluster.sh start                 start what is not running (creates it the first time)
#   scripts/cluster.sh stop | status | destroy
#   scripts/cluster.sh stop-node N | start-node N     RabbitMQ node N (1, 2, 3)
#   scripts/cluster.sh leader VHOST QUEUE    the number of the node leading a quorum queue
#   scripts/cluster.sh stop-pg N | start-pg N | promote-pg N   PostgreSQL server N (1 primary, 2 standby)
#   scripts/cluster.sh reset-pg              a fresh primary (1) and standby (2) (after a promotion)
#   scripts/cluster.sh prepare VHOST DB      vhost with the broker users and policies, database with
#                                            the process roles; prints the env for the harness:
#                                            multi-node AMQP URLs, multi-host libpq URLs
#                                            (target_session_attrs=read-write)
#   scripts/cluster.sh ctl N ARGS...         rabbitmqctl against node N
#   scripts/cluster.sh psql N ARGS...        psql as postgres on server N
#
# CLUSTER_DIR (default $RUN_DIR/cluster, RUN_DIR default <repo>/.run) holds the data, logs and
# passwords. CLUSTER_PORT_BASE (default 31700: below the kernel's ephemeral ports, so no client
# connection can take a stopped node's port before it restarts): AMQP on base+1..3, Erlang distribution on
# base+11..13, PostgreSQL on base+21 (primary) and base+22 (standby). The nodes share the Erlang
# cookie of the rabbitmq user (as scripts/services.sh's node does) and the machine's epmd.
set -euo pipefail

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
RUN_DIR=${RUN_DIR:-${IDENTITY_RUN_DIR:-$REPO_DIR/.run}}
CLUSTER_DIR=${CLUSTER_DIR:-$RUN_DIR/cluster}
BASE=${CLUSTER_PORT_BASE:-31700}
RMQ_LIB=/usr/lib/rabbitmq/bin
NODES=(1 2 3)

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { printf 'cluster: error: %s\n' "$*" >&2; exit 1; }
as_user() { local user=$1; shift; runuser -u "$user" -- "$@"; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
[[ $(id -u) -eq 0 ]] || die "must run as root (it starts servers as the rabbitmq and postgres users)"

mkdir -p "$CLUSTER_DIR"
CLUSTER_DIR=$(cd "$CLUSTER_DIR" && pwd -P)
# The service users must reach their folders: open the path (search only) down to CLUSTER_DIR.
d=$CLUSTER_DIR
while [[ $d != / ]]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
cd /

amqp_port() { echo $((BASE + $1)); }
dist_port() { echo $((BASE + 10 + $1)); }
pg_port() { echo $((BASE + 20 + $1)); }
node_name() { echo "identity-c$1@localhost"; }
node_dir() { echo "$CLUSTER_DIR/rabbit$1"; }

# --- RabbitMQ ------------------------------------------------------------------------------------
rmq_home() { getent passwd rabbitmq | cut -d: -f6; }

rmq_env() {
    local n=$1 dir; dir=$(node_dir "$n")
    printf '%s\n' "HOME=$(rmq_home)" "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" "LANG=C.UTF-8" \
        "RABBITMQ_CONF_ENV_FILE=$dir/rabbitmq-env.conf" "RABBITMQ_NODENAME=$(node_name "$n")" "ERL_EPMD_ADDRESS=127.0.0.1"
}

ctl() {
    local n=$1; shift
    local -a envs; mapfile -t envs < <(rmq_env "$n")
    as_user rabbitmq env -i "${envs[@]}" "$RMQ_LIB/rabbitmqctl" -n "$(node_name "$n")" "$@"
}

node_up() { ctl "$1" -q ping >/dev/null 2>&1; }

node_start() {
    local n=$1 dir; dir=$(node_dir "$n")
    local home; home=$(rmq_home)
    [[ -s $home/.erlang.cookie ]] || die "no Erlang cookie in $home: run scripts/services.sh start once"
    if node_up "$n"; then log "rabbitmq node $n: already running"; return 0; fi
    port_open "$(amqp_port "$n")" && die "port $(amqp_port "$n") is taken"
    install -d -o rabbitmq -g rabbitmq -m 0755 "$dir" "$dir/mnesia" "$dir/log"
    printf '%s\n' '# written by scripts/cluster.sh' >"$dir/rabbitmq-env.conf"
    printf '%s\n' '[].' >"$dir/enabled_plugins"
    printf '%s\n' '# written by scripts/cluster.sh' 'loopback_users.guest = true' 'log.file.level = info' \
        'log.console = false' >"$dir/rabbitmq.conf"
    chmod 0644 "$dir/rabbitmq-env.conf" "$dir/enabled_plugins" "$dir/rabbitmq.conf"
    local -a envs; mapfile -t envs < <(rmq_env "$n")
    envs+=("RABBITMQ_NODE_IP_ADDRESS=127.0.0.1" "RABBITMQ_NODE_PORT=$(amqp_port "$n")"
           "RABBITMQ_DIST_PORT=$(dist_port "$n")" "RABBITMQ_MNESIA_BASE=$dir/mnesia" "RABBITMQ_LOG_BASE=$dir/log"
           "RABBITMQ_CONFIG_FILE=$dir/rabbitmq.conf" "RABBITMQ_ADVANCED_CONFIG_FILE=$dir/advanced.config"
           "RABBITMQ_ENABLED_PLUGINS_FILE=$dir/enabled_plugins" "RABBITMQ_PID_FILE=$dir/mnesia/node.pid"
           "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}")
    local t0; t0=$(date +%s.%N)
    setsid runuser -u rabbitmq -- env -i "${envs[@]}" "$RMQ_LIB/rabbitmq-server" >>"$dir/startup.log" 2>&1 </dev/null &
    local bg=$! i
    for ((i = 0; i < 240; i++)); do
        kill -0 "$bg" 2>/dev/null || { tail -n 30 "$dir/startup.log" >&2; die "rabbitmq node $n exited during start-up"; }
        node_up "$n" && break
        sleep 0.5
    done
    ctl "$n" -q await_startup --timeout 180 >/dev/null || die "rabbitmq node $n did not start (logs: $dir/log)"
    for ((i = 0; i < 120; i++)); do port_open "$(amqp_port "$n")" && break; sleep 0.5; done
    log "rabbitmq node $n: up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s (port $(amqp_port "$n"))"
}

node_stop() {
    local n=$1 dir; dir=$(node_dir "$n")
    if ! node_up "$n"; then log "rabbitmq node $n: not running"; return 0; fi
    ctl "$n" -q stop "$dir/mnesia/node.pid" >/dev/null 2>&1 || ctl "$n" -q shutdown >/dev/null 2>&1 || true
    local i; for ((i = 0; i < 60; i++)); do port_open "$(amqp_port "$n")" || break; sleep 0.25; done
    log "rabbitmq node $n: stopped"
}

# Nodes 2 and 3 join node 1 once (recorded by the cluster's own membership).
cluster_join() {
    local n
    for n in 2 3; do
        if ctl 1 -q cluster_status --formatter json 2>/dev/null | grep -q "$(node_name "$n")"; then continue; fi
        ctl "$n" -q stop_app >/dev/null
        ctl "$n" -q join_cluster "$(node_name 1)" >/dev/null
        ctl "$n" -q start_app >/dev/null
        log "rabbitmq node $n: joined $(node_name 1)"
    done
}

queue_leader() {
    local vhost=$1 queue=$2 n leader
    for n in "${NODES[@]}"; do
        node_up "$n" || continue
        leader=$(ctl "$n" -q list_queues -p "$vhost" name leader --formatter json 2>/dev/null \
            | python3 -c 'import json,sys; q=sys.argv[1]; print(next((r.get("leader","") for r in json.load(sys.stdin) if r["name"]==q), ""))' "$queue")
        [[ $leader =~ identity-c([0-9])@ ]] && { echo "${BASH_REMATCH[1]}"; return 0; }
    done
    return 1
}

# --- PostgreSQL ----------------------------------------------------------------------------------
pg_bin() { ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1; }
PG_BIN=$(pg_bin)
pg_data() { echo "$CLUSTER_DIR/pg$1/data"; }
pg_psql() { local n=$1; shift; PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(pg_port "$n")" -U postgres "$@"; }
pg_running() { [[ -f $(pg_data "$1")/PG_VERSION ]] && as_user postgres "$PG_BIN/pg_ctl" status -D "$(pg_data "$1")" >/dev/null 2>&1; }

pg_start() {
    local n=$1 data; data=$(pg_data "$n")
    if pg_running "$n"; then log "postgres $n: already running"; return 0; fi
    [[ -f $data/PG_VERSION ]] || die "postgres $n has no data (scripts/cluster.sh reset-pg)"
    setsid runuser -u postgres -- "$PG_BIN/pg_ctl" start -D "$data" -l "$CLUSTER_DIR/pg$n/postgres.log" -w -t 120 \
        -o "-c listen_addresses=127.0.0.1 -p $(pg_port "$n") -k $CLUSTER_DIR/pg$n/sock" >/dev/null \
        || { tail -n 20 "$CLUSTER_DIR/pg$n/postgres.log" >&2; die "postgres $n failed to start"; }
    log "postgres $n: running (port $(pg_port "$n")$([[ -f $data/standby.signal ]] && echo ', standby'))"
}

pg_stop() {
    local n=$1
    if pg_running "$n"; then
        as_user postgres "$PG_BIN/pg_ctl" stop -D "$(pg_data "$n")" -m fast -w -t 60 >/dev/null
        log "postgres $n: stopped"
    fi
}

pg_reset() {
    pg_stop 2; pg_stop 1
    rm -rf "$CLUSTER_DIR/pg1" "$CLUSTER_DIR/pg2"
    install -d -o postgres -g postgres -m 0755 "$CLUSTER_DIR/pg1" "$CLUSTER_DIR/pg1/sock" "$CLUSTER_DIR/pg2" "$CLUSTER_DIR/pg2/sock"
    install -d -o postgres -g postgres -m 0700 "$(pg_data 1)"
    as_user postgres "$PG_BIN/initdb" -D "$(pg_data 1)" -U postgres -E UTF8 --locale=C --auth-local=trust \
        --auth-host=trust >"$CLUSTER_DIR/initdb.log" 2>&1 || { cat "$CLUSTER_DIR/initdb.log" >&2; die "initdb failed"; }
    printf '%s\n' 'local all all trust' 'host all all 127.0.0.1/32 trust' 'local replication all trust' \
        'host replication all 127.0.0.1/32 trust' | as_user postgres tee "$(pg_data 1)/pg_hba.conf" >/dev/null
    pg_start 1
    pg_psql 1 -d postgres -c 'CREATE ROLE identity LOGIN SUPERUSER'
    # The standby: a base backup of the primary that streams from it (-R: standby.signal and
    # primary_conninfo), so it is a promotable copy of every committed transaction.
    install -d -o postgres -g postgres -m 0700 "$(pg_data 2)"
    as_user postgres "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$(pg_port 1)" -U postgres -D "$(pg_data 2)" -R -X stream -c fast \
        >"$CLUSTER_DIR/basebackup.log" 2>&1 || { cat "$CLUSTER_DIR/basebackup.log" >&2; die "pg_basebackup failed"; }
    pg_start 2
}

pg_promote() {
    local n=$1
    as_user postgres "$PG_BIN/pg_ctl" promote -D "$(pg_data "$n")" -w -t 60 >/dev/null
    log "postgres $n: promoted"
}

# --- what the harness needs ----------------------------------------------------------------------
# Every node's URL for one user: the AMQP URL list (AMQPEndpoints) of IDENTITY_AMQP_URL.
amqp_list() {
    local user_part=$1 vhost=$2 n out=""
    for n in "${NODES[@]}"; do out+="${out:+,}amqp://$user_part@127.0.0.1:$(amqp_port "$n")/$vhost"; done
    echo "$out"
}

prepare() {
    local vhost=$1 db=$2
    if ctl 1 -q list_vhosts name | grep -qx "$vhost"; then ctl 1 -q delete_vhost "$vhost" >/dev/null; fi
    ctl 1 -q add_vhost "$vhost" >/dev/null
    ctl 1 -q set_permissions -p "$vhost" guest '.*' '.*' '.*' >/dev/null
    "$REPO_DIR/scripts/broker-users.sh" definitions "$vhost" "$CLUSTER_DIR/amqp-users" | ctl 1 -q import_definitions --format json >/dev/null
    pg_psql 1 -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db OWNER identity" >/dev/null
    # The standby must be streaming from the primary, or a promotion would lose what it lacks.
    local i
    for ((i = 0; i < 60; i++)); do
        [[ $(pg_psql 1 -d postgres -tAc "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") == 1 ]] && break
        sleep 0.5
    done
    [[ $i -lt 60 ]] || die "the standby does not stream from the primary (scripts/cluster.sh reset-pg)"
    local hosts="127.0.0.1:$(pg_port 1),127.0.0.1:$(pg_port 2)"
    local attrs="?target_session_attrs=read-write&connect_timeout=2"
    printf 'export IDENTITY_DATABASE_URL=%q\n' "postgresql://identity@$hosts/$db$attrs"
    printf 'export IDENTITY_AMQP_URL=%q\n' "$(amqp_list guest:guest "$vhost")"
    # The process roles (scripts/services.sh db-roles, on the primary), their URLs made multi-host.
    RUN_DIR=$CLUSTER_DIR PG_PORT=$(pg_port 1) "$REPO_DIR/scripts/services.sh" db-roles "$db" \
        | while IFS= read -r line; do
            [[ $line =~ ^export\ ([A-Z_]+)=postgresql://([^@]+)@ ]] || continue
            printf 'export %s=%q\n' "${BASH_REMATCH[1]}" "postgresql://${BASH_REMATCH[2]}@$hosts/$db$attrs"
        done
    "$REPO_DIR/scripts/broker-users.sh" urls "$vhost" "$CLUSTER_DIR/amqp-users" "127.0.0.1:$(amqp_port 1)" \
        | while IFS= read -r line; do
            [[ $line =~ ^export\ ([A-Z_]+)=amqp://([^@]+)@ ]] || continue
            printf 'export %s=%q\n' "${BASH_REMATCH[1]}" "$(amqp_list "${BASH_REMATCH[2]}" "$vhost")"
        done
}

cmd=${1:-}; [[ $# -gt 0 ]] && shift
case $cmd in
    start)
        id rabbitmq >/dev/null 2>&1 && id postgres >/dev/null 2>&1 || die "run scripts/deps.sh first"
        # All at once: a clustered node that was not the last to stop waits for its peers'
        # tables before it finishes booting, so one at a time could wait on a node not yet started.
        pids=()
        for n in "${NODES[@]}"; do node_start "$n" & pids+=($!); done
        for pid in "${pids[@]}"; do wait "$pid" || die "a RabbitMQ node did not start"; done
        cluster_join
        if [[ -f $(pg_data 1)/PG_VERSION && -f $(pg_data 2)/standby.signal ]]; then pg_start 1; pg_start 2; else pg_reset; fi
        ;;
    stop) for n in "${NODES[@]}"; do node_stop "$n"; done; pg_stop 2; pg_stop 1 ;;
    destroy) for n in "${NODES[@]}"; do node_stop "$n"; done; pg_stop 2; pg_stop 1; rm -rf "$CLUSTER_DIR" ;;
    status)
        for n in "${NODES[@]}"; do
            if node_up "$n"; then echo "rabbitmq $n: running $(node_name "$n") amqp port $(amqp_port "$n")"; else echo "rabbitmq $n: stopped"; fi
        done
        for n in 1 2; do
            if pg_running "$n"; then
                echo "postgres $n: running port $(pg_port "$n") in_recovery=$(pg_psql "$n" -d postgres -tAc 'SELECT pg_is_in_recovery()')"
            else echo "postgres $n: stopped"; fi
        done
        ;;
    stop-node) node_stop "$1" ;;
    start-node) node_start "$1" ;;
    leader) queue_leader "$1" "$2" ;;
    stop-pg) pg_stop "$1" ;;
    start-pg) pg_start "$1" ;;
    promote-pg) pg_promote "$1" ;;
    reset-pg) pg_reset ;;
    prepare) [[ $# -eq 2 ]] || die "usage: $0 prepare VHOST DB"; prepare "$1" "$2" ;;
    ctl) n=$1; shift; ctl "$n" "$@" ;;
    psql) n=$1; shift; pg_psql "$n" "$@" ;;
    *) sed -n '2,25p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
