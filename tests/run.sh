#!/usr/bin/env bash
# tests/run.sh — runs every unit test binary ($BUILD/tests/test_*) and every
# integration script (tests/integration/*.sh), reads their TAP output, and ends with
# one line: "N passed, N failed" (", N skipped" when any were skipped).
#
# Environment: SPECGEN (the binary under test), BUILD (build folder),
# TESTS (optional substring filter on test file names), TEST_TIMEOUT (seconds a file).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$root/build}
export SPECGEN=${SPECGEN:-$root/bin/specgen}
export SPECGEN_ROOT=$root
logs=$BUILD/test-logs
rm -rf "$logs"; mkdir -p "$logs"
timeout_s=${TEST_TIMEOUT:-600}
filter=${TESTS:-}

pass=0 fail=0 skip=0
failed_files=()

run_one() { # name, command...
    local name=$1; shift
    [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && return
    local log="$logs/$name.log" start end rc p=0 f=0 s=0
    mkdir -p "$(dirname "$log")"
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
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    printf '%-40s %3d passed %3d failed %3d skipped  %5.1fs%s\n' "$name" "$p" "$f" "$s" \
        "$(echo "$end - $start" | bc)" "$note"
    if [ "$f" -gt 0 ]; then failed_files+=("$name"); fi
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "unit/$(basename "$t")" "$t"
done
for t in "$here"/integration/*.sh; do
    [ -f "$t" ] || continue
    run_one "integration/$(basename "$t" .sh)" bash "$t"
done

for name in "${failed_files[@]}"; do
    echo
    echo "---- $name (log: $logs/$name.log) ----"
    grep -vE '^ok [0-9]+' "$logs/$name.log" | tail -n 40
done
echo
if [ "$skip" -gt 0 ]; then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
