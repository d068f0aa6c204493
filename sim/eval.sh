#!/usr/bin/env bash
# sim/eval.sh OUT.md — writes the evaluation page (docs/eval.md under `make bench-sim`) from
# sim/eval.md.in: `specgen sim --compare --markdown` on the reference and the fitted
# workload fills the @@...@@ lines, and the plots go to $(dirname OUT)/eval/WORKLOAD/.
# Everything written is virtual-time output: the same binary and seeds give the same bytes
# (wall times go to stderr). SIM_SEEDS, SIM_TASKS, SIM_LOAD_TASKS shrink it for tests.
#
# sim/eval.sh --scale — the scale check that ends `make bench-sim` (issue 19: 1,000 tasks on
# 64 GPUs over 24 virtual hours in under 30 s of wall time on one core). Every task runs its
# whole time budget (2 h; target out of reach, iterations and tokens uncapped), 84 at a time,
# so the 1,000 tasks run in 12 rounds of 2 h: 24 virtual hours. 8 LLM instances feed the
# 64 GPUs enough candidates to keep the pool busy. Pinned to one core (taskset -c 0); prints
# the virtual span, the pool's utilisation, wall and CPU seconds (bash's `time`, no
# /usr/bin/time), and OK or OVER against the 30 s goal. SIM_SCALE_TASKS,
# SIM_SCALE_CONCURRENCY, SIM_SCALE_LLM and SIM_SCALE_BUDGET change the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
specgen=${SPECGEN:-$root/bin/specgen}

scale() {
    local tasks=${SIM_SCALE_TASKS:-1000} conc=${SIM_SCALE_CONCURRENCY:-84}
    local llm=${SIM_SCALE_LLM:-8} budget=${SIM_SCALE_BUDGET:-2h} goal=30
    local pin=(taskset -c 0) where="pinned to CPU 0"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    if ! command -v taskset >/dev/null || ! taskset -c 0 true 2>/dev/null; then
        pin=() where="NOT pinned (no taskset, or CPU 0 not allowed)"
    fi
    echo "== scale: $tasks tasks on 64 GPUs, $conc at a time, $llm LLM instances; every task" \
        "runs its whole $budget budget (target out of reach, iterations and tokens uncapped)," \
        "so $(((tasks + conc - 1) / conc)) rounds of $budget of virtual time (goal: 24 h in under ${goal} s on one core)"
    local TIMEFORMAT='%R %U %S'
    { time "${pin[@]}" "$specgen" sim --tasks "$tasks" --devices 64 --seeds 1 --llm-instances "$llm" \
        --concurrency "$conc" --target 10 --iterations 1000 --task-budget-time "$budget" \
        --task-budget-tokens 1000000000 >"$tmp/out" 2>"$tmp/err"; } 2>"$tmp/time"
    cat "$tmp/out"
    local span util utilq feedback wall user sys
    span=$(sed -n 's/.*(\([0-9.]*\) virtual s each).*/\1/p' "$tmp/err" | head -1)
    read -r util utilq feedback < <(awk '$1 == "specgen" { print $7, $8, $5 }' "$tmp/out")
    read -r wall user sys <"$tmp/time"
    awk -v span="$span" -v util="$util" -v utilq="$utilq" -v fb="$feedback" -v wall="$wall" \
        -v user="$user" -v sys="$sys" -v goal="$goal" -v where="$where" 'BEGIN {
        cpu = user + sys
        printf "scale: virtual span %.0f s (%.1f h), pool utilisation %s (%s while work waited), %.0f candidates timed\n", span, span / 3600, util, utilq, fb
        printf "scale: wall %.1f s, CPU %.1f s (%.1f user + %.1f system), %s\n", wall, cpu, user, sys, where
        if (wall < goal) v = "OK: under the " goal " s goal"
        else if (cpu < goal) v = "OVER the " goal " s goal in wall time (CPU " sprintf("%.1f", cpu) " s is under it: the core was shared)"
        else v = "OVER the " goal " s goal (" sprintf("%.1f", wall / goal) "x)"
        print "scale: " v
    }'
}
if [ "${1:-}" = --scale ]; then
    scale
    exit 0
fi

out=${1:?usage: sim/eval.sh OUT.md | sim/eval.sh --scale}
seeds=${SIM_SEEDS:-1-5}
tasks=${SIM_TASKS:-20}
load_tasks=${SIM_LOAD_TASKS:-50}
dir=$(dirname "$out")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # NAME WORKLOAD TASKS [PLOTS]
    local plots=()
    [ -n "${4:-}" ] && plots=(--plots "$dir/eval/$4")
    "$specgen" sim --compare --markdown --seeds "$seeds" --tasks "$3" --workload "$2" \
        "${plots[@]}" >"$tmp/$1"
}
run reference reference "$tasks" reference
run fitted fitted "$tasks" fitted
run load fitted "$load_tasks"

# each "@@NAME@@" line becomes that run's output; the settings fill @SEEDS@ and @TASKS@
awk -v dir="$tmp" -v seeds="$seeds" -v tasks="$tasks" -v load="$load_tasks" '
    /^@@[a-z]+@@$/ { f = dir "/" substr($0, 3, length($0) - 4)
                    while ((getline line < f) > 0) print line
                    close(f); next }
    { gsub(/@SEEDS@/, seeds); gsub(/@TASKS@/, tasks); gsub(/@LOAD_TASKS@/, load); print }
' "$root/sim/eval.md.in" >"$tmp/eval.md"
mv "$tmp/eval.md" "$out"
echo "wrote $out and $dir/eval/{reference,fitted}/{time_to_target,utilisation}.svg" >&2
