#!/usr/bin/env bash
# tests/run.sh — runs every unit test binary ($BUILD/tests/test_*), every cmocka binary
# that starts servers or processes ($BUILD/tests/integration/test_*, from
# tests/integration/c/) and every integration script (tests/integration/*.sh), reads their
# TAP output, prints one line per file as it ends, the logs of failing files, the slowest
# ten files, and ends with one line: "N passed, N failed" (", N skipped" when any were
# skipped).
#
# Files run TEST_JOBS at a time (default 3: they mostly wait on servers, replayed streams
# and workers; with 2 the CPUs were busy 54% of a run). A file whose source holds the line
# "# test-run: serial" (a script) or " * test-run: serial" (a C test) runs alone, after the
# others: it measures time, or holds something only one test may hold at once. The longest
# files (their times from the last run, in $BUILD/test-times) start first.
#
# Environment: SPECGEN (the binary under test), BUILD (build folder), TESTS (optional
# filter: files whose name holds one of its words), TEST_TIMEOUT (seconds a file), TEST_JOBS.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$root/build}
export BUILD
export SPECGEN=${SPECGEN:-$root/bin/specgen}
export SPECGEN_ROOT=$root
logs=$BUILD/test-logs
times=$BUILD/test-times
rm -rf "$logs"; mkdir -p "$logs"
timeout_s=${TEST_TIMEOUT:-600}
filter=${TESTS:-}
jobs=${TEST_JOBS:-3}
case $jobs in '' | *[!0-9]* | 0) echo "tests/run.sh: TEST_JOBS='$jobs' is not a whole number above 0" >&2; exit 2 ;; esac

pass=0 fail=0 skip=0
failed_files=()

# run_one NAME COMMAND...: runs one file, writes "P F S SECONDS NOTE" to $logs/NAME.res.
run_one() {
    local name=$1; shift
    local log="$logs/$name.log" start end rc p=0 f=0 s=0
    start=$(date +%s.%N)
    CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 5 "$timeout_s" "$@" </dev/null >"$log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    p=$(grep -cE '^ok [0-9]+' "$log" | tr -d ' ')
    s=$(grep -ciE '^(not )?ok [0-9]+.*# ?skip' "$log" | tr -d ' ')
    # cmocka's skip() prints "not ok N # SKIP": a skip, not a failure.
    f=$(grep -E '^not ok [0-9]+' "$log" | grep -civE '# ?skip' | tr -d ' ')
    p=$((p - $(grep -ciE '^ok [0-9]+.*# ?skip' "$log" | tr -d ' ')))
    local note=""
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        if [ "$rc" -eq 124 ]; then note=" (timed out after ${timeout_s}s)"; else note=" (exited $rc)"; fi
    fi
    if [ $((p + f + s)) -eq 0 ]; then f=1; note=" (reported no test)"; fi
    printf '%d %d %d %.1f%s\n' "$p" "$f" "$s" "$(echo "$end - $start" | bc)" "$note" >"$logs/$name.res"
}

# report NAME: its line, and the totals.
declare -A secs=()
report() {
    local name=$1 p f s t note
    read -r p f s t note <"$logs/$name.res" || { p=0 f=1 s=0 t=0 note="(no result)"; }
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    secs[$name]=$t
    printf '%-40s %3d passed %3d failed %3d skipped  %5.1fs%s\n' "$name" "$p" "$f" "$s" "$t" \
        "${note:+ $note}"
    if [ "$f" -gt 0 ]; then failed_files+=("$name"); fi
}

# The files: NAME, its command and whether it runs alone.
names=() serial=()
declare -A cmd=()
add() { # name serial command...
    local name=$1 alone=$2; shift 2
    if [ -n "$filter" ]; then
        local w hit=0
        for w in $filter; do [[ "$name" == *"$w"* ]] && hit=1; done
        [ "$hit" = 1 ] || return
    fi
    mkdir -p "$(dirname "$logs/$name")"
    cmd[$name]=$(printf '%q ' "$@")
    if [ "$alone" = 1 ]; then serial+=("$name"); else names+=("$name"); fi
}
is_serial() { grep -qE '^(#| \*) test-run: serial' "$1" 2>/dev/null && echo 1 || echo 0; }
for t in "$BUILD"/tests/test_*; do
    [ -f "$t" ] && [ -x "$t" ] || continue
    add "unit/$(basename "$t")" "$(is_serial "$root/tests/unit/$(basename "$t").c")" "$t"
done
for t in "$BUILD"/tests/integration/test_*; do
    [ -f "$t" ] && [ -x "$t" ] || continue
    add "integration/$(basename "$t")" "$(is_serial "$here/integration/c/$(basename "$t").c")" "$t"
done
for t in "$here"/integration/*.sh; do
    [ -f "$t" ] || continue
    add "integration/$(basename "$t" .sh)" "$(is_serial "$t")" bash "$t"
done

# Longest first: times of the last run ($times). Without them (a fresh clone, as in CI), the
# seconds below: CI's ten slowest files of its last run, then others known to be long (the
# order is what counts: a long file started last is the run's tail); then the other
# scripts, then the binaries.
first_run_secs=" admission=79 kernelbench=97 optimize=45 sim_fit=40
    calibrate=34 report_compare=30 campaign=27 byok=26 llm_replay=25 kernelbench_campaign=20
    agent=20 validator=20 hardening_campaign=20 suite_builtin=20 slurm=20 agent_recovery=20
    validator_hostile=20 agent_campaign=20 kvstore_raw=20 "
order() {
    local n t
    for n in "$@"; do
        t=$(awk -v n="$n" '$2 == n { print $1 }' "$times" 2>/dev/null)
        if [ -z "$t" ]; then
            case $n in
            integration/test_* | unit/*) t=0 ;;
            *) t=${first_run_secs#* "${n#integration/}="}
               if [ "$t" = "$first_run_secs" ]; then t=1; else t=${t%%[!0-9]*}; fi ;;
            esac
        fi
        echo "$t $n"
    done | sort -s -k1,1 -rn | cut -d' ' -f2
}

declare -A running=()
stop_all() {
    local pid
    for pid in "${!running[@]}"; do pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
    exit 130
}
trap stop_all INT TERM
reap() {
    local pid=
    wait -n -p pid
    [ -n "$pid" ] || return
    report "${running[$pid]}"
    unset "running[$pid]"
}
start() {
    eval "run_one \"\$1\" ${cmd[$1]}" &
    running[$!]=$1
}
mapfile -t names < <(order "${names[@]+"${names[@]}"}")
for name in "${names[@]+"${names[@]}"}"; do
    while [ "${#running[@]}" -ge "$jobs" ]; do reap; done
    start "$name"
done
while [ "${#running[@]}" -gt 0 ]; do reap; done
for name in "${serial[@]+"${serial[@]}"}"; do
    start "$name"
    reap
done

for name in "${failed_files[@]+"${failed_files[@]}"}"; do
    echo
    echo "---- $name (log: $logs/$name.log) ----"
    grep -vE '^ok [0-9]+' "$logs/$name.log" | tail -n 40
done
if [ "${#secs[@]}" -gt 0 ]; then
    # keep the times of files this run did not run (a TESTS filter)
    { for name in "${!secs[@]}"; do echo "${secs[$name]} $name"; done
      [ -f "$times" ] && awk 'NR == FNR { seen[$2] = 1; next } !($2 in seen)' \
          <(for name in "${!secs[@]}"; do echo "0 $name"; done) "$times"
    } | sort -rn >"$times.new" && mv "$times.new" "$times"
    echo
    echo "slowest files:"
    for name in "${!secs[@]}"; do echo "${secs[$name]} $name"; done | sort -rn | head -n 10 |
        while read -r t name; do printf '  %6.1fs  %s\n' "$t" "$name"; done
fi
echo
if [ "$skip" -gt 0 ]; then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
