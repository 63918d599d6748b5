# Stress mode of scripts/test: the main package's suite, again and again,
# beside a CPU hog on every core, as a shared CI runner is.

# start_cpu_hogs: one busy loop per core, stopped at exit (before whatever the
# EXIT trap did already, keeping the exit status).
start_cpu_hogs() {
    depot_cpu_hogs=()
    local cores
    cores=$(nproc)
    for _ in $(seq "$cores"); do
        ( while :; do :; done ) &
        depot_cpu_hogs+=($!)
    done
    echo "==> $cores CPU hogs running (one busy loop per core)"
    local existing=""
    if [ -n "$(trap -p EXIT)" ]; then
        eval "set -- $(trap -p EXIT)"
        existing=$3
    fi
    trap "depot_exit_status=\$?; stop_cpu_hogs; set +e; (exit \$depot_exit_status); $existing" EXIT
}

stop_cpu_hogs() {
    [ "${#depot_cpu_hogs[@]}" -gt 0 ] || return 0
    kill "${depot_cpu_hogs[@]}" 2>/dev/null || true
    wait "${depot_cpu_hogs[@]}" 2>/dev/null || true
    depot_cpu_hogs=()
}

# run_stress_rounds ROUNDS [SWIFT TEST ARGUMENTS...]: the built suite ROUNDS
# times beside the hogs, each with new random seeds (and, before each round but
# the first, whatever `stress_between_rounds` does, if defined); prints each round's time
# and result, keeps each failed round's output in .build/stress/, and fails
# when any round failed.
run_stress_rounds() {
    local rounds=$1
    shift
    mkdir -p .build/stress
    start_cpu_hogs
    local passed=0 failed=0 started
    started=$(date +%s)
    for round in $(seq "$rounds"); do
        local log=".build/stress/round-$round.log" begun
        if [ "$round" -gt 1 ] && declare -F stress_between_rounds > /dev/null; then stress_between_rounds; fi
        begun=$(date +%s)
        if swift test --skip-build --disable-xctest "$@" > "$log" 2>&1; then
            passed=$((passed + 1))
            echo "==> round $round of $rounds passed after $(( $(date +%s) - begun )) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
            rm -f "$log"
        else
            failed=$((failed + 1))
            echo "==> round $round of $rounds FAILED after $(( $(date +%s) - begun )) s; its failures ($log):"
            grep -a -E "✘ Test .*(recorded an issue|failed)|^ *seed [0-9]+:" "$log" | head -n 20 || true
        fi
    done
    stop_cpu_hogs
    echo "==> stress: $passed of $rounds rounds passed beside $(nproc) CPU hogs, in $(( $(date +%s) - started )) s"
    [ "$failed" -eq 0 ]
}
