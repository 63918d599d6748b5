# Starts a throwaway MariaDB server for the tests. Source it, then call
# start_throwaway_mariadb: it exports DEPOT_MARIADB_URL and stops the server
# and deletes its folder when the calling shell exits.

source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# mariadb_set_up_users SOCKET PASSWORD ROOT_PASSWORD: on a new server (or a
# cluster's first node), the database depot, the user depot with every right
# on depot and depot_* from 127.0.0.1 only, and root's password.
mariadb_set_up_users() {
    mariadb --no-defaults --socket="$1" -uroot <<SQL
CREATE DATABASE depot CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
CREATE USER 'depot'@'127.0.0.1' IDENTIFIED BY '$2';
GRANT ALL ON depot.* TO 'depot'@'127.0.0.1';
GRANT ALL ON \`depot\\_%\`.* TO 'depot'@'127.0.0.1';
ALTER USER 'root'@'localhost' IDENTIFIED BY '$3';
SQL
}

# start_throwaway_mariadb: a data folder in a temporary directory, a server on
# a free loopback port with its own socket and pid file, a database `depot` and
# a user `depot` with a random password that may also create and drop the
# databases `depot_*` (one per conformance check); exports
# DEPOT_MARIADB_URL=mariadb://depot:PASSWORD@127.0.0.1:PORT/depot.
start_throwaway_mariadb() {
    # The server and client, and Connector/C for the plug-in's build.
    ensure_debian_packages mariadb-server mariadb-client libmariadb-dev pkg-config || return 1
    local mariadbd installdb
    mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
    installdb=$(command -v mariadb-install-db || echo /usr/bin/mariadb-install-db)
    DEPOT_MARIADB_DIR=$(mktemp -d /tmp/depot-mariadb.XXXXXX)
    chmod 755 "$DEPOT_MARIADB_DIR"
    # A temporary folder of its own: a MariaDB server deletes every #sql file
    # in its tmpdir when it starts, so in a shared /tmp a Galera node restarted
    # by a test would delete this server's temporary tables under a query.
    mkdir "$DEPOT_MARIADB_DIR/data" "$DEPOT_MARIADB_DIR/tmp"
    [ "$(id -u)" -eq 0 ] && chown mysql:mysql "$DEPOT_MARIADB_DIR/data" "$DEPOT_MARIADB_DIR/tmp"
    local port password root_password user_flag=()
    port=$(free_loopback_port 23306 23999) || return 1
    password="depot-$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"
    root_password="root-$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"
    # mariadbd refuses to run as root without --user; as another user it runs as that user.
    [ "$(id -u)" -eq 0 ] && user_flag=(--user=mysql)
    # Stopped at exit, before what the EXIT trap did already.
    chain_exit_trap stop_throwaway_mariadb
    echo "==> starting a throwaway MariaDB ($("$mariadbd" --version | awk '{print $3}')) on 127.0.0.1:$port"
    local started=$SECONDS
    "$installdb" --no-defaults "${user_flag[@]}" --datadir="$DEPOT_MARIADB_DIR/data" \
        --tmpdir="$DEPOT_MARIADB_DIR/tmp" --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
        > "$DEPOT_MARIADB_DIR/install.log" 2>&1 \
        || { cat "$DEPOT_MARIADB_DIR/install.log" >&2; return 1; }
    DEPOT_MARIADB_SOCKET="$DEPOT_MARIADB_DIR/data/mariadb.sock"
    # --no-defaults first: Debian's /etc/mysql stays out. No fsync: a test server.
    "$mariadbd" --no-defaults "${user_flag[@]}" --datadir="$DEPOT_MARIADB_DIR/data" \
        --socket="$DEPOT_MARIADB_SOCKET" --pid-file="$DEPOT_MARIADB_DIR/data/mariadb.pid" \
        --tmpdir="$DEPOT_MARIADB_DIR/tmp" \
        --port="$port" --bind-address=127.0.0.1 --skip-name-resolve \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_nopad_bin \
        --max-allowed-packet=1G --max-connections=500 \
        --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --sync-binlog=0 \
        --log-error="$DEPOT_MARIADB_DIR/data/error.log" > /dev/null 2>&1 &
    DEPOT_MARIADB_PID=$!
    local tries=0
    until mariadb-admin --no-defaults --socket="$DEPOT_MARIADB_SOCKET" -uroot ping > /dev/null 2>&1; do
        if ! kill -0 "$DEPOT_MARIADB_PID" 2> /dev/null || [ $tries -ge 600 ]; then
            echo "MariaDB did not start:" >&2
            tail -n 20 "$DEPOT_MARIADB_DIR/data/error.log" >&2
            return 1
        fi
        tries=$((tries + 1))
        sleep 0.1
    done
    mariadb_set_up_users "$DEPOT_MARIADB_SOCKET" "$password" "$root_password" || return 1
    printf '%s\n' "$root_password" > "$DEPOT_MARIADB_DIR/root-password"
    chmod 600 "$DEPOT_MARIADB_DIR/root-password"
    echo "==> MariaDB ready in $((SECONDS - started)) s"
    export DEPOT_MARIADB_URL="mariadb://depot:$password@127.0.0.1:$port/depot"
}

# stop_throwaway_mariadb [STATUS]: stops the server (SIGTERM, then SIGKILL after
# 30 s) and deletes its folder. When the run failed it first prints the
# server's [ERROR] lines, the only trace of a server-side cause.
stop_throwaway_mariadb() {
    local status=${1:-$?}
    [ -n "${DEPOT_MARIADB_DIR:-}" ] && [ -d "$DEPOT_MARIADB_DIR" ] || return 0
    if [ "$status" -ne 0 ] && [ -f "$DEPOT_MARIADB_DIR/data/error.log" ]; then
        echo "==> the run failed; the test server's [ERROR] lines:" >&2
        grep -F "[ERROR]" "$DEPOT_MARIADB_DIR/data/error.log" | tail -n 40 >&2 || true
    fi
    if [ -n "${DEPOT_MARIADB_PID:-}" ] && kill -0 "$DEPOT_MARIADB_PID" 2> /dev/null; then
        kill -TERM "$DEPOT_MARIADB_PID" 2> /dev/null
        local waited=0
        while kill -0 "$DEPOT_MARIADB_PID" 2> /dev/null && [ $waited -lt 300 ]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        kill -0 "$DEPOT_MARIADB_PID" 2> /dev/null && kill -KILL "$DEPOT_MARIADB_PID" 2> /dev/null
        wait "$DEPOT_MARIADB_PID" 2> /dev/null
    fi
    rm -rf "$DEPOT_MARIADB_DIR"
    DEPOT_MARIADB_DIR=
}
