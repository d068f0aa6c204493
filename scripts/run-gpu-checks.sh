#!/usr/bin/env bash
# scripts/run-gpu-checks.sh — the one loop behind `make gpu-check` and
# scripts/gpu-check-device.sh: runs every */gpu-check.sh, then one summary line per
# script (pass, FAIL, or skip when it exited 77: no usable GPU) with its seconds.
# Environment: SPECGEN (the binary, default bin/specgen), BUILD (the build folder holding
# gpu/prof_streams, default ./build), GPU_CHECKS (optional: module names to run, e.g.
# "validator profiler"; default every */gpu-check.sh).
# Exit: 0 when all that ran passed, 1 on a failure, 2 when nothing passed and nothing
# failed ("nothing was checked"), so a machine without a GPU never looks green.
# Needs bash, python3 and coreutils; no make, no compiler.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
SPECGEN=$(realpath "${SPECGEN:-$root/bin/specgen}")
BUILD=$(realpath -m "${BUILD:-$root/build}")
export SPECGEN BUILD
scripts=()
if [ -n "${GPU_CHECKS:-}" ]; then
    for m in $GPU_CHECKS; do
        [ -f "$m/gpu-check.sh" ] || { echo "gpu-check: no $m/gpu-check.sh (GPU_CHECKS=$GPU_CHECKS)"; exit 1; }
        scripts+=("$m/gpu-check.sh")
    done
else
    scripts=(*/gpu-check.sh) # one per module folder; this file's name keeps it out
fi
rc=0
checked=0
summary=
for s in "${scripts[@]}"; do
    echo "==== $s"
    t0=$SECONDS
    bash "$s" "$SPECGEN"
    r=$?
    case $r in
    0) st=pass; checked=1 ;;
    77) st=skip ;;
    *) st=FAIL; rc=1 ;;
    esac
    summary+=$(printf '%-4s  %-24s %5d s' "$st" "$s" $((SECONDS - t0)))$'\n'
done
printf '==== gpu-check summary\n%s' "$summary"
if [ $checked -eq 0 ] && [ $rc -eq 0 ]; then
    echo "nothing was checked: no NVIDIA GPU here"
    exit 2
fi
exit $rc
