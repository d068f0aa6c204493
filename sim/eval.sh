#!/usr/bin/env bash
# sim/eval.sh OUT.md — writes the evaluation page (docs/eval.md under `make bench-sim`) from
# sim/eval.md.in: `specgen sim --compare --markdown` on the reference and the fitted
# workload fills the @@...@@ lines, and the plots go to $(dirname OUT)/eval/WORKLOAD/.
# Everything written is virtual-time output: the same binary and seeds give the same bytes
# (wall times go to stderr). SIM_SEEDS, SIM_TASKS, SIM_LOAD_TASKS shrink it for tests.
set -euo pipefail
out=${1:?usage: sim/eval.sh OUT.md}
root=$(cd "$(dirname "$0")/.." && pwd)
specgen=${SPECGEN:-$root/bin/specgen}
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
