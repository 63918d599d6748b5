# Stress mode of scripts/test: the main package's suite, again and again,
# beside a CPU hog on every core, as a shared CI runner is.

# start_cpu_hogs: one busy loop per core, stopped at exit (before whatever the
# EXIT trap did already, keeping the exit status). DEPOT_STRESS_HOG, when set,
# is a command each hog runs instead, again whenever it ends (with
# DEPOT_STRESS_HOG_INDEX set to the hog's number): useful work that keeps a
# core busy, such as a soak of more sync histories.
start_cpu_hogs() {
    depot_cpu_hogs=()
    local cores index
    cores=$(nproc)
    for index in $(seq "$cores"); do
        if [ -n "${DEPOT_STRESS_HOG:-}" ]; then
            # In a session of its own, so stopping it stops what it started.
            DEPOT_STRESS_HOG_INDEX=$index setsid bash -c 'while :; do eval "$DEPOT_STRESS_HOG" || true; done' &
        else
            ( while :; do :; done ) &
        fi
        depot_cpu_hogs+=($!)
    done
    echo "==> $cores CPU hogs running (${DEPOT_STRESS_HOG:+running \"$DEPOT_STRESS_HOG\", }one per core)"
    local existing=""
    if [ -n "$(trap -p EXIT)" ]; then
        eval "set -- $(trap -p EXIT)"
        existing=$3
    fi
    trap "depot_exit_status=\$?; stop_cpu_hogs; set +e; (exit \$depot_exit_status); $existing" EXIT
}

stop_cpu_hogs() {
    [ "${#depot_cpu_hogs[@]}" -gt 0 ] || return 0
    local hog
    for hog in "${depot_cpu_hogs[@]}"; do kill -- "-$hog" 2>/dev/null || kill "$hog" 2>/dev/null || true; done
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
