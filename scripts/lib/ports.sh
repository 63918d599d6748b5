# Picks TCP ports for the throwaway servers. Sourced by the scripts beside it.

# free_loopback_port FIRST LAST: the first port in FIRST..LAST that no socket on
# this machine uses, in any state. A port nothing listens on is not free enough:
# a client's connection (to another throwaway server, say) may hold it as its
# own local port, and a server then fails to bind it ("Address already in use",
# a CI run did). The ranges callers pass lie below Linux's ephemeral range
# (32768 and up by default), where the kernel hands out no client ports at all.
#
# A port found free is claimed before it is handed out (a folder per port,
# made atomically, naming this run's process), so two test runs at once never
# pick the same port in the moment before either server binds it; two did,
# and one failed. A claim whose process has ended is taken back.
free_loopback_port() {
    local first=${1:-24330} last=${2:-24999} port
    for port in $(seq "$first" "$last"); do
        if command -v ss >/dev/null 2>&1; then
            # -a: listening and connected sockets, and those in TIME-WAIT.
            if [ -z "$(ss -Htan "( sport = :$port )" 2>/dev/null)" ] && claim_port "$port"; then
                echo "$port"
                return 0
            fi
        elif ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && claim_port "$port"; then
            echo "$port"
            return 0
        fi
    done
    echo "no free port between $first and $last" >&2
    return 1
}

# claim_port PORT: claims PORT for this run (its shell's process, $$); fails
# when a run still alive holds it.
claim_port() {
    local claims="${TMPDIR:-/tmp}/depot-port-claims" owner
    mkdir -p "$claims"
    if mkdir "$claims/$1" 2>/dev/null; then
        echo "$$" > "$claims/$1/pid"
        return 0
    fi
    owner=$(cat "$claims/$1/pid" 2>/dev/null || true)
    # No owner written yet: a run is claiming it this moment.
    [ -n "$owner" ] || return 1
    kill -0 "$owner" 2>/dev/null && return 1
    rm -rf "${claims:?}/$1"
    mkdir "$claims/$1" 2>/dev/null || return 1
    echo "$$" > "$claims/$1/pid"
}
