# Installs Debian packages that are missing. Sourced by the scripts beside it.

# ensure_debian_packages PACKAGE...: installs the ones not installed yet (as root,
# or through sudo). Elsewhere than Debian it only says what it could not check.
ensure_debian_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "note: not a Debian system; make sure these are installed: $*" >&2
        return 0
    fi
    local missing=()
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "==> installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

# chain_exit_trap STOP: makes the EXIT trap run STOP (given the exit status)
# before whatever the trap did already (another throwaway server's STOP,
# chained the same way), keeping the exit status for both; once per STOP.
chain_exit_trap() {
    local stop=$1 existing=""
    if [ -n "$(trap -p EXIT)" ]; then
        eval "set -- $(trap -p EXIT)"
        existing=$3
    fi
    case "$existing" in
        *"$stop"*) return 0 ;;
        "") trap "$stop" EXIT ;;
        *) trap "depot_exit_status=\$?; $stop \$depot_exit_status; set +e; (exit \$depot_exit_status); $existing" EXIT ;;
    esac
}

# wait_while TENTHS COMMAND...: waits while COMMAND succeeds (its output
# dropped), checking every tenth of a second, at most TENTHS times; fails
# when it still succeeds then.
wait_while() {
    local tenths=$1 waited=0
    shift
    while "$@" > /dev/null 2>&1; do
        [ "$waited" -lt "$tenths" ] || return 1
        sleep 0.1
        waited=$((waited + 1))
    done
}
