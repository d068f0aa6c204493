#!/usr/bin/env bash
# kb-trial.sh LEVEL_DIR OUT_DIR [NAME_GLOB]
# The KernelBench trial of docs/kernelbench.md "Trial on public KernelBench": every problem
# of a level folder (a checkout of KernelBench, never committed here) through the three
# steps a user takes, each timed on its own as wall time:
#   1. specgen task init PROBLEM.py -o OUT_DIR/NAME      (the importer)
#   2. torchref/kb_selfcheck.py --seed 7 --at auto        (the engine's reference = the file's own)
#   3. specgen validate OUT_DIR/NAME --device opencl      (torch baseline vs torch reference, PoCL)
# One TSV row per problem on stdout (name, import, import_s, selfcheck, validate, validate_s,
# why), a summary on stderr. Each step has its own limit (KB_TRIAL_LIMIT, default 240 s) so
# one slow problem cannot stop the trial; a step past it is reported as "timeout".
set -u
level=${1:?usage: kb-trial.sh LEVEL_DIR OUT_DIR [NAME_GLOB]}
out=${2:?usage: kb-trial.sh LEVEL_DIR OUT_DIR [NAME_GLOB]}
glob=${3:-*}
root=$(cd "$(dirname "$0")/.." && pwd)
specgen=${SPECGEN:-$root/bin/specgen}
python=${SPECGEN_PYTHON:-$root/.venv/bin/python}
limit=${KB_TRIAL_LIMIT:-240}
[ -d "$level" ] || { echo "kb-trial: $level: not a folder" >&2; exit 2; }
[ -x "$specgen" ] || { echo "kb-trial: $specgen: not built (make bin/specgen)" >&2; exit 2; }
[ -x "$python" ] || { echo "kb-trial: $python: no Python with torch (make deps)" >&2; exit 2; }
mkdir -p "$out" || exit 2
export SPECGEN_PYTHON=$python SPECGEN_DATA=${SPECGEN_DATA:-$root}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
first_line() { tr '\t' ' ' | grep -v '^$' | head -1 | cut -c1-240; }

printf 'name\timport\timport_s\tselfcheck\tvalidate\tvalidate_s\twhy\n'
n=0 imported=0 same=0 valid=0 fast=0
for p in "$level"/$glob.py; do
    [ -f "$p" ] || continue
    name=$(basename "$p" .py)
    task=$out/$name
    n=$((n + 1))
    t=$(now)
    msg=$(timeout "$limit" "$specgen" task init "$p" -o "$task" --force 2>&1)
    rc=$? imp_s=$(since "$t")
    if [ $rc -ne 0 ]; then
        [ $rc -eq 124 ] && why="import past ${limit} s" || why=$(echo "$msg" | grep -i 'error\|stop\|cannot\|not supported' | first_line)
        [ -n "$why" ] || why=$(echo "$msg" | first_line)
        printf '%s\tstopped\t%s\t-\t-\t-\t%s\n' "$name" "$imp_s" "$why"
        continue
    fi
    imported=$((imported + 1))
    sc=$(timeout "$limit" "$python" "$root/torchref/kb_selfcheck.py" "$task" "$p" --seed 7 --at auto 2>&1 | tail -1 | first_line)
    case $sc in match*) same=$((same + 1)) ;; esac
    t=$(now)
    msg=$(timeout "$limit" "$specgen" validate "$task" --device opencl 2>&1)
    rc=$? val_s=$(since "$t")
    if [ $rc -eq 0 ]; then
        verdict=pass valid=$((valid + 1)) why=""
        awk -v s="$val_s" 'BEGIN { exit !(s < 30) }' && fast=$((fast + 1))
    else
        [ $rc -eq 124 ] && verdict=timeout || verdict=fail
        why=$(echo "$msg" | first_line)
    fi
    printf '%s\timported\t%s\t%s\t%s\t%s\t%s\n' "$name" "$imp_s" "${sc%%[: ]*}" "$verdict" "$val_s" "$why"
done
echo "kb-trial: $n problems, $imported imported, $same reference = file's own output," \
    "$valid baselines validated on PoCL, $fast of them in under 30 s" >&2
