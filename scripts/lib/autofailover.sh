# Starts a throwaway pg_auto_failover formation for the tests, all on loopback,
# from Debian's packages (postgresql-15, postgresql-15-auto-failover,
# pg-auto-failover-cli): a monitor, and a primary and its synchronous standby
# (synchronous_standby_names 'ANY 1 (pgautofailover_standby_N)' on the
# primary, synchronous_commit on: a commit returns once the standby has it),
# each node kept by a pg_autoctl keeper that the monitor drives. Source it,
# then call start_throwaway_autofailover: it exports
#
#   DEPOT_AUTOFAILOVER_URL  postgres://depot:PASSWORD@127.0.0.1:P1,127.0.0.1:P2/depot
#                           (add target_session_attrs=read-write for the primary)
#   DEPOT_AUTOFAILOVER_DIR  the formation's temporary folder, where for each node N in 1..2
#                           nodeN/pgdata  its PGDATA (postmaster.pid: the postmaster's pid),
#                           nodeN/kill    SIGKILLs the whole node like a machine
#                                         dying: its keeper and all its PostgreSQL
#                                         processes at once, so that the monitor
#                                         fails over (when it was the primary)
#                           nodeN/start   (re)starts its keeper, which rejoins
#                                         (as the secondary after a failover); returns
#                                         once the node is in its goal state (a
#                                         secondary: and the other node primary
#                                         again, synchronous), exit 1 after 120 s
#                           and `state` prints pg_autoctl show state; `nodes`
#                           lists `N PORT`, one node a line
#
# and stops it all and deletes the folder when the calling shell exits.
#
# The role `depot` (a random password, scram-sha-256; CREATEDB) owns the
# database `depot`. pg_autoctl's own roles (monitor, health checks,
# replication) connect with --auth trust, from 127.0.0.1 only; the superuser
# through the unix sockets alone, in folders only the servers' user enters.
#
# Ports: the monitor's and each node's PostgreSQL port from 27306-27999,
# below Linux's ephemeral range and apart from the other libraries' ranges.
# Startup takes 5-11 s here (the monitor, the primary and the standby's copy
# 1-4 s each, the most with the machine busy). Failover, from a SIGKILL of the
# primary to the first write the standby takes as primary, takes 7.5-10 s:
# the monitor calls a node unhealthy when its keeper has not reported for 3 s
# and a health check fails (checks every 1 s), gives a primary that might be
# alive 5 s to demote itself (its keeper does at 3 s without the monitor and
# without a standby: timeout.network_partition_timeout), then promotes. No
# write acknowledged before the kill was lost in these runs. nodeN/start then
# rejoins in 1.5-3 s (pg_rewind). A primary SIGKILLed and started again at
# once fails over all the same (its keeper's first report says PostgreSQL is
# not running), without the 5 s wait (the keeper itself demotes it): the
# start returns in about 4 s, the node a secondary.
#
# With the standby SIGKILLed, commits on the primary wait 3-6.5 s, until the
# monitor takes synchronous replication off (the primary goes to
# wait_primary, synchronous_standby_names ''); nodeN/start puts it back.

source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"

# autofailover_env MEMBER: the whole environment a pg_autoctl of MEMBER
# (monitor, node1, node2) runs in. pg_autoctl keeps its configuration, state
# and pid files under the XDG folders (by default in the user's home, by
# PGDATA): here in the member's folder. PG_REGRESS_SOCK_DIR, which pg_autoctl
# passes to postgres as -k, and PGHOST put the unix socket in MEMBER/run (a
# folder only the servers' user enters). initdb takes its locale from LANG.
# Its words, NAME=VALUE without spaces, are for splitting: env -i $(...).
autofailover_env() {
    local member="$DEPOT_AUTOFAILOVER_DIR/$1"
    echo "HOME=$member XDG_CONFIG_HOME=$member/config XDG_DATA_HOME=$member/share" \
        "XDG_RUNTIME_DIR=$member/run PGHOST=$member/run PG_REGRESS_SOCK_DIR=$member/run" \
        "PATH=$DEPOT_AUTOFAILOVER_BIN:/usr/bin:/bin LANG=C.UTF-8"
}

# autofailover_pids MEMBER_FOLDER: the member's processes, by their working
# directory: the keeper's (pg_autoctl and what it runs, started in
# MEMBER/run) and PostgreSQL's (the postmaster and every process it forks work
# in their PGDATA). /proc/PID/cwd proves it: never another's process, whatever
# its name (pg_autoctl and postgres retitle theirs). A zombie has none.
autofailover_pids() {
    find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$1/run" -o -lname "$1/pgdata" \) \
        -printf '%h\n' 2> /dev/null | sed 's|^/proc/||' || true
}

# autofailover_running FOLDER: whether any process of the member is left.
autofailover_running() {
    [ -n "$(autofailover_pids "$1")" ]
}

# autofailover_sql MEMBER PORT DATABASE SQL...: runs each SQL as the superuser,
# over the member's unix socket.
autofailover_sql() {
    local member=$1 port=$2 database=$3
    shift 3
    local commands=() sql
    for sql in "$@"; do commands+=(-c "$sql"); done
    run_as_postgres_user env -i $(autofailover_env "$member") psql -X -q -A -t -v ON_ERROR_STOP=1 \
        -h "$DEPOT_AUTOFAILOVER_DIR/$member/run" -p "$port" -d "$database" "${commands[@]}"
}

# autofailover_trusted_hba PGDATA: keeps pg_autoctl's own rules in its
# pg_hba.conf (its roles, trusted from 127.0.0.1) and the unix sockets', and
# drops initdb's "anyone from loopback, any role, trusted" (pg_autoctl runs
# initdb --auth=trust) and pg_autoctl's rule for the superuser from loopback;
# EXTRA lines go first.
autofailover_trusted_hba() {
    local hba="$1/pg_hba.conf" rules
    shift
    rules=$(
        printf '%s\n' "# scripts/lib/autofailover.sh: unix sockets, pg_autoctl's own roles, and:" "$@"
        grep -E '^local[[:space:]]' "$hba"
        grep -F 'Auto-generated by pg_auto_failover' "$hba" | grep -vF '"postgres"'
    ) || return 1
    # Rewritten in place: the file keeps its owner and mode.
    printf '%s\n' "$rules" > "$hba"
}

# write_autofailover_node_scripts N: writes nodeN/kill and nodeN/start, scripts
# of their own (every value written in, nothing taken from the caller's shell
# but its user: a test runs them through Process, maybe as root).
write_autofailover_node_scripts() {
    local n=$1 node="$DEPOT_AUTOFAILOVER_DIR/node$1" port as_owner=""
    port=$(awk -v n="$n" '$1 == n {print $2}' "$DEPOT_AUTOFAILOVER_DIR/nodes")
    # pg_autoctl and PostgreSQL refuse to run as root: then as postgres.
    [ "$(id -u)" -eq 0 ] && as_owner="setpriv --reuid=postgres --regid=postgres --init-groups"
    local pids_function
    pids_function=$(cat <<'FUNCTION'
# node_pids: this node's processes, by their working directory: the keeper's
# (pg_autoctl and what it runs, started in $node/run) and PostgreSQL's (the
# postmaster and every process it forks work in PGDATA). /proc/PID/cwd proves
# it: never another's process, whatever its name. A zombie has none.
node_pids() {
    find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$node/run" -o -lname "$node/pgdata" \) \
        -printf '%h\n' 2> /dev/null | sed 's|^/proc/||'
}
FUNCTION
)
    cat > "$node/kill" <<SCRIPT
#!/usr/bin/env bash
# SIGKILLs node $n (127.0.0.1:$port) of the throwaway pg_auto_failover formation in
# $DEPOT_AUTOFAILOVER_DIR (scripts/lib/autofailover.sh) like a machine dying: its
# pg_autoctl keeper and all its PostgreSQL processes at once, so that nothing
# restarts PostgreSQL here and the monitor fails over when it was the primary.
# Returns once they are all gone.
set -u
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\${PATH:+:\$PATH}"
# Out of the node's folders: this script is no process of the node's.
cd /
node='$node'

$pids_function

count=0
rounds=0
# Once more while any is left: a keeper may have forked in the meantime.
while pids=\$(node_pids) && [ -n "\$pids" ]; do
    if [ \$rounds -ge 100 ]; then
        echo "pg_auto_failover node $n: processes still alive after SIGKILL: \$(echo \$pids)" >&2
        exit 1
    fi
    [ \$rounds -eq 0 ] && count=\$(echo "\$pids" | wc -l)
    kill -KILL \$pids 2> /dev/null
    rounds=\$((rounds + 1))
    sleep 0.05
done
echo "==> pg_auto_failover node $n (127.0.0.1:$port) killed (\$count processes)"
SCRIPT
    cat > "$node/start" <<SCRIPT
#!/usr/bin/env bash
# (Re)starts node $n (127.0.0.1:$port) of the throwaway pg_auto_failover formation
# in $DEPOT_AUTOFAILOVER_DIR (scripts/lib/autofailover.sh): its pg_autoctl keeper, in the
# background, which starts PostgreSQL and rejoins the formation (as the
# secondary, after pg_rewind, when the other node took over meanwhile). Returns
# once the monitor has the node in its goal state (single, wait_primary,
# primary or secondary), running and reporting since this started, or fails
# (exit 1, the tail of the keeper's log) after 120 s. A keeper still running is
# only waited for. Arguments replace \`run\` (start_throwaway_autofailover
# creates the node with \`create postgres ... --run\`).
set -u
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\${PATH:+:\$PATH}"
cd /
node='$node'
monitor_url='$DEPOT_AUTOFAILOVER_MONITOR_URL'

$pids_function

# keeper_running: a pg_autoctl of this node's runs.
keeper_running() {
    [ -n "\$(find /proc -mindepth 2 -maxdepth 2 -name cwd -lname "\$node/run" 2> /dev/null)" ]
}

# node_state SINCE: "REPORTED GOAL" when the node is in its goal state and has
# reported it (PostgreSQL running) since SINCE, seconds since the epoch; a
# secondary once the other node is back from wait_primary to primary too (its
# commits wait for this one again).
node_state() {
    psql -X -q -A -t -F ' ' "\$monitor_url" -c "SELECT reportedstate, goalstate FROM pgautofailover.node
        WHERE formationid = 'default' AND nodename = 'node$n' AND reportedstate = goalstate
        AND goalstate IN ('single', 'wait_primary', 'primary', 'secondary')
        AND reportedpgisrunning AND reporttime > to_timestamp(\$1)
        AND (goalstate <> 'secondary' OR EXISTS (SELECT FROM pgautofailover.node AS primary_node
            WHERE primary_node.formationid = 'default' AND primary_node.reportedstate = 'primary'
            AND primary_node.goalstate = 'primary'))" 2> /dev/null
}

started=\$SECONDS
since=\$(date +%s.%N)
[ \$# -gt 0 ] || set -- run --pgdata "\$node/pgdata"
if ! keeper_running; then
    if [ -z "\$(node_pids)" ]; then
        # Left behind by a SIGKILL: their pids may be other processes' by now,
        # which pg_autoctl and postgres would take for a keeper or server running.
        rm -f "\$node/pgdata/postmaster.pid" "\$node/run"/.s.PGSQL.*.lock
        find "\$node/run/pg_autoctl" -name '*.pid' -delete 2> /dev/null
    fi
    # setsid: a session of its own, so that the end of whoever ran this (a
    # test process, its process group) does not take the node with it. Its
    # working directory, \$node/run (set before the fork, so that it has it
    # from its first moment), is what node_pids (and nodeN/kill) find it by.
    # setpriv rather than runuser, which would stay, as root, in between.
    cd "\$node/run" || exit 1
    (
        # Nothing of the caller's but these: a descriptor a test process left
        # inheritable (a socket, a pipe) would stay open as long as the keeper.
        for fd in /proc/self/fd/*; do
            fd=\${fd##*/}
            [ "\$fd" -gt 2 ] && [ "\$fd" -lt 255 ] && eval "exec \$fd>&-" 2> /dev/null
        done
        exec setsid $as_owner env -i $(autofailover_env "node$n") \\
            pg_autoctl "\$@" >> "\$node/keeper.log" 2>&1 < /dev/null
    ) &
    cd /
fi
tries=0
while :; do
    state=\$(node_state "\$since")
    [ -n "\$state" ] && break
    if ! keeper_running || [ \$tries -ge 600 ]; then
        echo "pg_auto_failover node $n (127.0.0.1:$port) did not reach its goal state:" >&2
        psql -X -q "\$monitor_url" -c "SELECT nodename, reportedstate, goalstate, reportedpgisrunning,
            health, reporttime FROM pgautofailover.node ORDER BY nodeid" >&2
        tail -n 30 "\$node/keeper.log" >&2
        exit 1
    fi
    tries=\$((tries + 1))
    sleep 0.2
done
echo "==> pg_auto_failover node $n on 127.0.0.1:$port \${state%% *} in \$((SECONDS - started)) s"
SCRIPT
    chmod 755 "$node/kill" "$node/start"
}

# start_throwaway_autofailover: a monitor, then node 1 (which becomes the
# primary, gets the role and database `depot`) and node 2 (a copy of it, the
# synchronous standby), each with a PGDATA, folders and a port of its own in
# one temporary directory, each kept by a pg_autoctl keeper; waits until the
# monitor has one primary and one secondary, both in their goal state, then
# exports DEPOT_AUTOFAILOVER_URL and DEPOT_AUTOFAILOVER_DIR.
start_throwaway_autofailover() {
    ensure_debian_packages postgresql-15 postgresql-15-auto-failover pg-auto-failover-cli postgresql-client-15 || return 1
    # The PostgreSQL the pgautofailover extension was built for.
    local control
    control=$(ls /usr/share/postgresql/*/extension/pgautofailover.control 2> /dev/null | sort -V | tail -n 1 || true)
    DEPOT_AUTOFAILOVER_BIN="/usr/lib/postgresql/$(basename "$(dirname "$(dirname "$control")")")/bin"
    if [ -z "$control" ] || [ ! -x "$DEPOT_AUTOFAILOVER_BIN/pg_ctl" ] || ! command -v pg_autoctl > /dev/null; then
        echo "pg_auto_failover or its PostgreSQL is missing (Debian packages postgresql-15-auto-failover, pg-auto-failover-cli)" >&2
        return 1
    fi
    DEPOT_AUTOFAILOVER_DIR=$(mktemp -d /tmp/depot-autofailover.XXXXXX)
    chmod 755 "$DEPOT_AUTOFAILOVER_DIR"
    # Stopped at exit, before what the EXIT trap did already.
    chain_exit_trap stop_throwaway_autofailover
    local member monitor_port n port ports=()
    for member in monitor node1 node2; do
        mkdir -p "$DEPOT_AUTOFAILOVER_DIR/$member/run"
        chmod 700 "$DEPOT_AUTOFAILOVER_DIR/$member/run"
    done
    monitor_port=$(free_loopback_port 27306 27999) || return 1
    for n in 1 2; do
        port=$(free_loopback_port 27306 27999) || return 1
        ports+=("$port")
        echo "$n $port" >> "$DEPOT_AUTOFAILOVER_DIR/nodes"
    done
    DEPOT_AUTOFAILOVER_MONITOR_URL="postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable"
    for n in 1 2; do write_autofailover_node_scripts "$n"; done
    cat > "$DEPOT_AUTOFAILOVER_DIR/state" <<SCRIPT
#!/usr/bin/env bash
# Prints pg_autoctl show state for the throwaway pg_auto_failover formation in
# $DEPOT_AUTOFAILOVER_DIR (scripts/lib/autofailover.sh). Arguments go to it (--json).
cd /
exec env -i HOME=/tmp PATH="/usr/bin:/bin" pg_autoctl show state --monitor '$DEPOT_AUTOFAILOVER_MONITOR_URL' "\$@"
SCRIPT
    chmod 755 "$DEPOT_AUTOFAILOVER_DIR/state"
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$DEPOT_AUTOFAILOVER_DIR"/monitor "$DEPOT_AUTOFAILOVER_DIR"/node?
    local password as_owner=()
    password="depot-$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"
    [ "$(id -u)" -eq 0 ] && as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups)
    echo "==> starting a throwaway pg_auto_failover formation ($(pg_autoctl --version | awk 'NR == 1 {print $3}'), PostgreSQL $("$DEPOT_AUTOFAILOVER_BIN/postgres" --version | awk '{print $3}')): monitor on 127.0.0.1:$monitor_port, nodes on :${ports[0]} and :${ports[1]}"
    local started=$SECONDS
    # The monitor: created and then kept by one pg_autoctl, like the nodes'
    # keepers (setsid, found by its working directory, which it has from its
    # first moment; started from a subshell, so that it is no child of this
    # shell's to wait for). --no-ssl: loopback only.
    local monitor="$DEPOT_AUTOFAILOVER_DIR/monitor" here=$PWD
    cd "$monitor/run" || return 1
    (
        setsid "${as_owner[@]}" env -i $(autofailover_env monitor) \
            pg_autoctl create monitor --pgdata "$monitor/pgdata" --pgctl "$DEPOT_AUTOFAILOVER_BIN/pg_ctl" \
            --pgport "$monitor_port" --hostname 127.0.0.1 --listen 127.0.0.1 \
            --auth trust --no-ssl --run >> "$monitor/keeper.log" 2>&1 < /dev/null &
    )
    cd "$here" || return 1
    local tries=0
    until [ "$(psql -X -q -A -t "$DEPOT_AUTOFAILOVER_MONITOR_URL" \
            -c "SELECT count(*) FROM pgautofailover.formation WHERE formationid = 'default'" 2> /dev/null)" = 1 ]; do
        if [ -z "$(autofailover_pids "$monitor")" ] || [ $tries -ge 600 ]; then
            echo "the pg_auto_failover monitor (127.0.0.1:$monitor_port) did not start:" >&2
            tail -n 30 "$monitor/keeper.log" >&2
            return 1
        fi
        tries=$((tries + 1))
        sleep 0.2
    done
    # A fast failover, still safe (the defaults take about 50 s): a node is
    # unhealthy when its keeper has not reported for 3 s (it does each second)
    # and the monitor's health check fails (every 1 s, a 1 s connection
    # timeout, 2 retries 0.5 s apart); a primary that might still run is given
    # 5 s to demote itself before the standby is promoted, while a keeper that
    # loses both the monitor and its standby demotes its primary at 3 s
    # (timeout.network_partition_timeout, set on each node below). A primary
    # cut off keeps no commits meanwhile either: its synchronous standby is the
    # one being promoted.
    autofailover_sql monitor "$monitor_port" pg_auto_failover \
        "ALTER SYSTEM SET pgautofailover.health_check_period = '1s'" \
        "ALTER SYSTEM SET pgautofailover.health_check_timeout = '1s'" \
        "ALTER SYSTEM SET pgautofailover.health_check_max_retries = 2" \
        "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = '500ms'" \
        "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = '3s'" \
        "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = '5s'" \
        "SELECT pg_reload_conf()" > /dev/null || return 1
    autofailover_trusted_hba "$monitor/pgdata" || return 1
    autofailover_sql monitor "$monitor_port" pg_auto_failover "SELECT pg_reload_conf()" > /dev/null || return 1
    echo "==> pg_auto_failover monitor on 127.0.0.1:$monitor_port ready in $((SECONDS - started)) s"
    # Node 1, the primary-to-be: alone it is "single".
    local create=(create postgres --formation default --dbname depot --hostname 127.0.0.1 --listen 127.0.0.1
        --monitor "$DEPOT_AUTOFAILOVER_MONITOR_URL" --auth trust --no-ssl --pgctl "$DEPOT_AUTOFAILOVER_BIN/pg_ctl")
    local node1="$DEPOT_AUTOFAILOVER_DIR/node1" node2="$DEPOT_AUTOFAILOVER_DIR/node2"
    "$node1/start" "${create[@]}" --name node1 --pgdata "$node1/pgdata" --pghost "$node1/run" \
        --pgport "${ports[0]}" --run || return 1
    # Before node 2 copies it (pg_basebackup): the role, its database, the
    # rules, the settings. pg_basebackup waits for a checkpoint that pg_autoctl
    # does not ask to be fast, spread over checkpoint_completion_target (here
    # over a minute): 0 writes each at once. fsync off as on the other
    # throwaway servers: a SIGKILL loses nothing the kernel has.
    autofailover_sql node1 "${ports[0]}" depot \
        "SET password_encryption = 'scram-sha-256'" \
        "CREATE ROLE depot LOGIN CREATEDB PASSWORD '$password'" \
        "ALTER DATABASE depot OWNER TO depot" \
        "ALTER SYSTEM SET checkpoint_completion_target = 0" \
        "ALTER SYSTEM SET fsync = off" || return 1
    autofailover_trusted_hba "$node1/pgdata" "host all depot 127.0.0.1/32 scram-sha-256" || return 1
    autofailover_sql node1 "${ports[0]}" depot "SELECT pg_reload_conf()" > /dev/null || return 1
    # Node 2: registers, copies node 1, and streams from it; node 1 becomes the primary.
    "$node2/start" "${create[@]}" --name node2 --pgdata "$node2/pgdata" --pghost "$node2/run" \
        --pgport "${ports[1]}" --run || return 1
    for n in 1 2; do
        run_as_postgres_user env -i $(autofailover_env "node$n") pg_autoctl config set \
            --pgdata "$DEPOT_AUTOFAILOVER_DIR/node$n/pgdata" timeout.network_partition_timeout 3 > /dev/null || return 1
    done
    local state
    tries=0
    until state=$(psql -X -q -A -t -F ' ' "$DEPOT_AUTOFAILOVER_MONITOR_URL" -c "SELECT string_agg(reportedstate || '/' || goalstate, ' '
            ORDER BY reportedstate::text) FROM pgautofailover.node WHERE formationid = 'default' AND reportedpgisrunning AND health = 1" 2> /dev/null) \
        && [ "$state" = "primary/primary secondary/secondary" ]; do
        if [ $tries -ge 600 ]; then
            echo "the pg_auto_failover formation has no primary and secondary in their goal states:" >&2
            "$DEPOT_AUTOFAILOVER_DIR/state" >&2
            for n in 1 2; do tail -n 20 "$DEPOT_AUTOFAILOVER_DIR/node$n/keeper.log" >&2; done
            return 1
        fi
        tries=$((tries + 1))
        sleep 0.2
    done
    # Synchronous: each commit on the primary waits for the standby's flush.
    local synchronous
    synchronous=$(autofailover_sql node1 "${ports[0]}" depot "SELECT 'synchronous_standby_names '
        || quote_literal(current_setting('synchronous_standby_names')) || ', synchronous_commit '
        || current_setting('synchronous_commit')") || return 1
    case "$synchronous" in
        *"names ''"* | *"commit off" | *"commit local")
            echo "the pg_auto_failover primary does not replicate synchronously: $synchronous" >&2
            return 1 ;;
    esac
    echo "==> pg_auto_failover formation ready in $((SECONDS - started)) s ($synchronous)"
    export DEPOT_AUTOFAILOVER_DIR
    export DEPOT_AUTOFAILOVER_URL="postgres://depot:$password@127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}/depot"
}

# stop_autofailover_member FOLDER: stops the member's keeper (SIGTERM: it stops
# its PostgreSQL, fast mode) or, without one, its postmaster (SIGINT, fast
# shutdown), then SIGKILLs whatever of it is left after 30 s.
stop_autofailover_member() {
    local folder=$1 pids keepers pid
    pids=$(autofailover_pids "$folder")
    [ -n "$pids" ] || return 0
    keepers=$(find /proc -mindepth 2 -maxdepth 2 -name cwd -lname "$folder/run" -printf '%h\n' 2> /dev/null | sed 's|^/proc/||' || true)
    if [ -n "$keepers" ]; then
        kill -TERM $keepers 2> /dev/null || true
    else
        pid=$(head -n 1 "$folder/pgdata/postmaster.pid" 2> /dev/null || true)
        # Only when that pid is one of the member's own.
        if [ -n "$pid" ] && echo "$pids" | grep -qxF -- "$pid"; then
            kill -INT "$pid" 2> /dev/null || true
        fi
    fi
    wait_while 300 autofailover_running "$folder" || true
    local waited=0
    while pids=$(autofailover_pids "$folder") && [ -n "$pids" ] && [ $waited -lt 50 ]; do
        kill -KILL $pids 2> /dev/null || true
        sleep 0.1
        waited=$((waited + 1))
    done
    return 0
}

# stop_throwaway_autofailover [STATUS]: stops both nodes at once, then the
# monitor, and deletes the folder. When the run failed it first prints the
# tail of each keeper's log and each server's FATAL and PANIC lines, the only
# trace of a server-side cause.
stop_throwaway_autofailover() {
    local status=${1:-$?}
    [ -n "${DEPOT_AUTOFAILOVER_DIR:-}" ] && [ -d "$DEPOT_AUTOFAILOVER_DIR" ] || return 0
    local member
    if [ "$status" -ne 0 ]; then
        "$DEPOT_AUTOFAILOVER_DIR/state" >&2 2> /dev/null || true
        for member in monitor node1 node2; do
            [ -f "$DEPOT_AUTOFAILOVER_DIR/$member/keeper.log" ] || continue
            echo "==> the run failed; pg_auto_failover $member's keeper log, last lines:" >&2
            tail -n 30 "$DEPOT_AUTOFAILOVER_DIR/$member/keeper.log" >&2
            echo "==> and its PostgreSQL's FATAL and PANIC lines:" >&2
            cat "$DEPOT_AUTOFAILOVER_DIR/$member/pgdata/log/"*.log 2> /dev/null | grep -E "FATAL|PANIC" | tail -n 20 >&2 || true
        done
    fi
    local stoppers=()
    for member in node1 node2; do
        stop_autofailover_member "$DEPOT_AUTOFAILOVER_DIR/$member" &
        stoppers+=($!)
    done
    wait "${stoppers[@]}" || true
    stop_autofailover_member "$DEPOT_AUTOFAILOVER_DIR/monitor"
    rm -rf "$DEPOT_AUTOFAILOVER_DIR"
    DEPOT_AUTOFAILOVER_DIR=
}
