#!/usr/bin/env bash
# pool/gpu-check.sh — on a machine with an NVIDIA GPU: two slots on one GPU, one validating
# and one profiling (--pools static:1/1), through `specgen optimize` on the demo task; then
# the events show that every profile job had the GPU to itself (no job of the other slot
# overlapped it) and that both kinds of job ran. Run through `make gpu-check`; record the
# outcome in docs/gpu-checks.md. Exit 0 when all is as expected, 77 without a GPU.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. scripts/gpu-check-lib.sh
need_gpu pool
SPECGEN=${SPECGEN:-$root/bin/specgen}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
"$SPECGEN" optimize suites/demo/vector_scale --device cuda --devices 1 --slots-per-device 2 \
    --pools static:1/1 --task-budget-time 120s --out "$out/run" >"$out/log" 2>&1
rc=$?
grep -E '^(end|pools|  validate|  profile|feedback):' "$out/log"
[ $rc -eq 0 ] || { echo "optimize exited $rc:"; tail -n 20 "$out/log"; fail=1; }
python3 tests/integration/pool_events.py "$out/run/events.jsonl" --min-jobs 2 || fail=1
grep -q '"kind":"profile"' "$out/run/events.jsonl" || { echo "no profile job ran"; fail=1; }
if [ $fail -eq 0 ]; then echo "gpu-check (pool): all as expected"; else echo "gpu-check (pool): FAILURES above"; fi
exit $fail
