# Starts a throwaway PostgreSQL server for the tests. Sourced by scripts/test.

source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# run_as_postgres_user COMMAND...: PostgreSQL refuses to run as root, so a root
# caller runs the server tools as the unprivileged `postgres` user.
run_as_postgres_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# start_throwaway_postgres: initdb into a temporary folder, start the server on a
# free loopback port with a random password, export DEPOT_POSTGRES_URL, and stop
# and delete it all when the calling script exits, whether the tests pass or fail.
start_throwaway_postgres() {
    local bindir
    bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
        echo "PostgreSQL's server binaries are missing (Debian package postgresql)" >&2
        return 1
    fi
    DEPOT_PG_DIR=$(mktemp -d /tmp/depot-postgres.XXXXXX)
    chmod 755 "$DEPOT_PG_DIR"
    local port password
    port=$(free_loopback_port)
    password="depot-$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"
    printf '%s\n' "$password" > "$DEPOT_PG_DIR/password"
    make_throwaway_certificates "$DEPOT_PG_DIR" || return 1
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$DEPOT_PG_DIR"
    DEPOT_PG_BIN="$bindir"
    trap stop_throwaway_postgres EXIT
    echo "==> starting a throwaway PostgreSQL ($("$bindir/postgres" --version | awk '{print $3}')) on 127.0.0.1:$port"
    run_as_postgres_user "$bindir/initdb" -D "$DEPOT_PG_DIR/data" -U depot --pwfile="$DEPOT_PG_DIR/password" \
        -A scram-sha-256 -E UTF8 --locale=C.UTF-8 > "$DEPOT_PG_DIR/initdb.log" 2>&1 \
        || { cat "$DEPOT_PG_DIR/initdb.log" >&2; return 1; }
    run_as_postgres_user "$bindir/pg_ctl" -D "$DEPOT_PG_DIR/data" -l "$DEPOT_PG_DIR/server.log" -w -t 60 \
        -o "-p $port -k $DEPOT_PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c ssl=on -c ssl_cert_file=$DEPOT_PG_DIR/server.crt -c ssl_key_file=$DEPOT_PG_DIR/server.key" \
        start > /dev/null \
        || { cat "$DEPOT_PG_DIR/server.log" >&2; return 1; }
    export DEPOT_POSTGRES_URL="postgres://depot:$password@127.0.0.1:$port/postgres"
    export DEPOT_POSTGRES_TLS_CA="$DEPOT_PG_DIR/ca.crt" DEPOT_POSTGRES_TLS_OTHER_CA="$DEPOT_PG_DIR/other-ca.crt"
}

# make_throwaway_certificates FOLDER: a throwaway certificate authority, a
# server certificate it signs for the address 127.0.0.1 only (so "localhost"
# is a wrong host name), and a second authority that signed nothing, for the
# TLS tests: verify-full succeeds with the first, fails with the second.
make_throwaway_certificates() {
    local folder=$1
    command -v openssl > /dev/null || { echo "openssl is missing (Debian package openssl)" >&2; return 1; }
    (
        set -e
        cd "$folder"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3 \
            -subj "/CN=Depot throwaway CA" -keyout ca.key -out ca.crt
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3 \
            -subj "/CN=Depot unknown CA" -keyout other-ca.key -out other-ca.crt
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=127.0.0.1" -keyout server.key -out server.csr
        printf 'subjectAltName=IP:127.0.0.1\n' > server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 \
            -extfile server.ext -out server.crt
        chmod 600 server.key ca.key other-ca.key
        chmod 644 ca.crt other-ca.crt server.crt
    ) > "$folder/certificates.log" 2>&1 || { cat "$folder/certificates.log" >&2; return 1; }
}

# stop_throwaway_postgres [STATUS]: stops the server and deletes its folder. When
# the run failed (STATUS, or the exit status, not 0), it first prints the
# server's serious log lines, the only trace of a server-side cause once the
# folder is gone.
stop_throwaway_postgres() {
    local status=${1:-$?}
    if [ "$status" -ne 0 ] && [ -n "${DEPOT_PG_DIR:-}" ] && [ -f "$DEPOT_PG_DIR/server.log" ]; then
        echo "==> the run failed; the test server's FATAL, PANIC and process lines:" >&2
        grep -E "FATAL|PANIC|could not fork|terminated by signal|was terminated|server process" "$DEPOT_PG_DIR/server.log" \
            | grep -v "terminating connection due to administrator command" | tail -n 40 >&2 || true
    fi
    if [ -n "${DEPOT_PG_DIR:-}" ] && [ -d "$DEPOT_PG_DIR/data" ]; then
        run_as_postgres_user "$DEPOT_PG_BIN/pg_ctl" -D "$DEPOT_PG_DIR/data" -m immediate stop > /dev/null 2>&1 || true
        rm -rf "$DEPOT_PG_DIR"
    fi
}
