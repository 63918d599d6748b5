# Starts what the scale-out tests need beside the throwaway server, all on
# loopback, from Debian's packages. Sourced by scripts/test, after
# start_throwaway_postgres (whose server is the primary here):
#
#   DEPOT_POSTGRES_STANDBY_URL          the primary and a streaming hot standby
#   DEPOT_POSTGRES_LAGGING_STANDBY_URL  the primary and a standby that applies
#                                       each commit 1.5 s late (recovery_min_apply_delay)
#   DEPOT_PGBOUNCER_URL                 PgBouncer in transaction mode before the primary
#   DEPOT_FAILOVER_URL                  a second primary and its synchronous standby,
#   DEPOT_FAILOVER_STANDBY_URL          for the failover test, which kills the primary
#   DEPOT_FAILOVER_PRIMARY_PID          (this postmaster) and promotes the standby
#
# stop_scale_out_servers stops and deletes them all; scripts/test calls it on exit.

DEPOT_PGBOUNCER_PID_FILE=""

# postgres_url PORT[,PORT...] [QUERY]: the depot role's URL for these loopback ports.
postgres_url() {
    local hosts="" port
    for port in ${1//,/ }; do hosts="${hosts:+$hosts,}127.0.0.1:$port"; done
    echo "postgres://depot:$(cat "$DEPOT_PG_DIR/password")@$hosts/postgres${2:+?$2}"
}

# start_server DIR PORT [SETTING...]: starts the cluster in DIR/data on PORT.
start_server() {
    local dir=$1 port=$2
    shift 2
    local options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c full_page_writes=off"
    local setting
    for setting in "$@"; do options="$options -c $setting"; done
    run_as_postgres_user "$DEPOT_PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$options" start > /dev/null \
        || { cat "$dir/server.log" >&2; return 1; }
}

# new_server_dir: a folder for one more server, deleted at the end. (Called in
# command substitutions, so the list of folders is kept in a file.)
new_server_dir() {
    local dir
    dir=$(mktemp -d /tmp/depot-postgres.XXXXXX)
    chmod 755 "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    echo "$dir" >> "$DEPOT_PG_DIR/scale-out-dirs"
    echo "$dir"
}

# start_standby PRIMARY_PORT NAME [SETTING...]: a hot standby of the server on
# PRIMARY_PORT, streaming as NAME; prints its port.
start_standby() {
    local primary_port=$1 name=$2
    shift 2
    local dir port
    dir=$(new_server_dir)
    port=$(free_loopback_port)
    # -R writes the standby's primary_conninfo; -X stream copies the WAL the copy needs.
    run_as_postgres_user env PGPASSWORD="$(cat "$DEPOT_PG_DIR/password")" "$DEPOT_PG_BIN/pg_basebackup" \
        -h 127.0.0.1 -p "$primary_port" -U depot -D "$dir/data" -R -X stream -c fast \
        -d "application_name=$name" > "$dir/basebackup.log" 2>&1 \
        || { cat "$dir/basebackup.log" >&2; return 1; }
    start_server "$dir" "$port" "hot_standby=on" "$@"
    echo "$port"
}

# wait_for_sql URL SQL: waits (up to 30 s) until SQL answers t on URL.
wait_for_sql() {
    local attempt
    for attempt in $(seq 1 300); do
        [ "$(psql "$1" -Atc "$2" 2>/dev/null)" = "t" ] && return 0
        sleep 0.1
    done
    echo "timed out waiting for: $2" >&2
    return 1
}

start_scale_out_servers() {
    local primary_port=${DEPOT_POSTGRES_URL##*:}
    primary_port=${primary_port%%/*}
    local password
    password=$(cat "$DEPOT_PG_DIR/password")
    trap 'status=$?; stop_scale_out_servers "$status"; stop_throwaway_postgres "$status"' EXIT

    local standby lagging
    standby=$(start_standby "$primary_port" depot_standby)
    lagging=$(start_standby "$primary_port" depot_lagging "recovery_min_apply_delay=1500ms")
    export DEPOT_POSTGRES_STANDBY_URL DEPOT_POSTGRES_LAGGING_STANDBY_URL
    DEPOT_POSTGRES_STANDBY_URL=$(postgres_url "$primary_port,$standby")
    DEPOT_POSTGRES_LAGGING_STANDBY_URL=$(postgres_url "$primary_port,$lagging")
    wait_for_sql "$DEPOT_POSTGRES_URL" "SELECT count(*) = 2 FROM pg_stat_replication WHERE state = 'streaming'"
    echo "==> standbys streaming from 127.0.0.1:$primary_port: 127.0.0.1:$standby, and 127.0.0.1:$lagging (1.5 s behind)"

    # PgBouncer in transaction mode. It refuses to run as root.
    local bouncer bouncer_port
    bouncer=$(new_server_dir)
    bouncer_port=$(free_loopback_port)
    printf '"depot" "%s"\n' "$password" > "$bouncer/userlist.txt"
    cat > "$bouncer/pgbouncer.ini" <<EOF
[databases]
* = host=127.0.0.1 port=$primary_port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $bouncer/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 40
logfile = $bouncer/pgbouncer.log
pidfile = $bouncer/pgbouncer.pid
EOF
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$bouncer"
    run_as_postgres_user pgbouncer -d "$bouncer/pgbouncer.ini" || { cat "$bouncer/pgbouncer.log" >&2; return 1; }
    DEPOT_PGBOUNCER_PID_FILE="$bouncer/pgbouncer.pid"
    export DEPOT_PGBOUNCER_URL
    DEPOT_PGBOUNCER_URL=$(postgres_url "$bouncer_port" "pgbouncer=true&listener=127.0.0.1:$primary_port")
    wait_for_sql "$(postgres_url "$bouncer_port")" "SELECT true"
    echo "==> PgBouncer $(pgbouncer --version | head -n 1 | awk '{print $2}') in transaction mode on 127.0.0.1:$bouncer_port"
    start_failover_pair
}

# start_failover_pair: a primary of its own and a synchronous standby, for the
# failover test (which kills the primary and promotes the standby: a second run
# of the suite, as `scripts/test --stress` makes, needs a new pair).
start_failover_pair() {
    local failover failover_port failover_standby
    failover=$(new_server_dir)
    failover_port=$(free_loopback_port)
    run_as_postgres_user "$DEPOT_PG_BIN/initdb" -D "$failover/data" -U depot --pwfile="$DEPOT_PG_DIR/password" \
        -A scram-sha-256 -E UTF8 --locale=C.UTF-8 > "$failover/initdb.log" 2>&1 \
        || { cat "$failover/initdb.log" >&2; return 1; }
    start_server "$failover" "$failover_port" "synchronous_commit=on"
    failover_standby=$(start_standby "$failover_port" depot_failover)
    # Synchronous from now on: the standby's copy (taken before) does not wait for a standby of its own.
    psql "$(postgres_url "$failover_port")" -qAtc "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" > /dev/null
    wait_for_sql "$(postgres_url "$failover_port")" "SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'"
    export DEPOT_FAILOVER_URL DEPOT_FAILOVER_STANDBY_URL DEPOT_FAILOVER_PRIMARY_PID
    DEPOT_FAILOVER_URL=$(postgres_url "$failover_port,$failover_standby")
    DEPOT_FAILOVER_STANDBY_URL=$(postgres_url "$failover_standby")
    DEPOT_FAILOVER_PRIMARY_PID=$(head -n 1 "$failover/data/postmaster.pid")
    echo "==> failover pair: 127.0.0.1:$failover_port and its synchronous standby 127.0.0.1:$failover_standby"
}

stop_scale_out_servers() {
    local status=${1:-0}
    if [ "$status" -ne 0 ] && [ -n "$DEPOT_PGBOUNCER_PID_FILE" ] && [ -f "$(dirname "$DEPOT_PGBOUNCER_PID_FILE")/pgbouncer.log" ]; then
        echo "==> the run failed; PgBouncer's warnings, errors and closings other than a client's own:" >&2
        grep -E "WARNING|ERROR|FATAL|closing because" "$(dirname "$DEPOT_PGBOUNCER_PID_FILE")/pgbouncer.log" \
            | grep -v "client close request" | tail -n 40 >&2 || true
    fi
    if [ -n "$DEPOT_PGBOUNCER_PID_FILE" ] && [ -f "$DEPOT_PGBOUNCER_PID_FILE" ]; then
        kill "$(cat "$DEPOT_PGBOUNCER_PID_FILE")" 2>/dev/null || true
    fi
    [ -n "${DEPOT_PG_DIR:-}" ] && [ -f "$DEPOT_PG_DIR/scale-out-dirs" ] || return 0
    local dir
    while read -r dir; do
        if [ -d "$dir/data" ]; then
            run_as_postgres_user "$DEPOT_PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop > /dev/null 2>&1 || true
        fi
        rm -rf "$dir"
    done < "$DEPOT_PG_DIR/scale-out-dirs"
    rm -f "$DEPOT_PG_DIR/scale-out-dirs"
}
