#!/usr/bin/env bash
# profiler/gpu-check.sh — the profiler's checks that need an NVIDIA GPU (run by
# `make gpu-check`, or alone by `make gpu-check-profiler`):
#   1. the second-stream fixture: CUPTI timing counts a kernel on another stream
#      (build/gpu/prof_streams);
#   2. the timing of the whole CUDA builtin suite: every task's baseline profiled as a
#      candidate against itself (A/A): runs, median, band, "no change" expected;
#   3. the CUPTI hardware metrics of one kernel (matmul), or the reason they are not
#      available.
# Environment: SPECGEN (the binary), BUILD (build folder). Exit 0 when all passed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
SPECGEN=${SPECGEN:-$root/bin/specgen}
BUILD=${BUILD:-$root/build}
fail=0

echo "== profiler: work on a second stream is timed (CUPTI)"
if ! [ -x "$BUILD/gpu/prof_streams" ]; then # else every check below would run and fail
    echo "profiler gpu-check: no fixture $BUILD/gpu/prof_streams (make $BUILD/gpu/prof_streams)"
    exit 1
fi
"$BUILD/gpu/prof_streams"
rc=$?
if [ $rc -eq 77 ]; then
    echo "profiler gpu-check: no usable NVIDIA GPU here (see above); nothing was checked"
    exit 77
fi
[ $rc -eq 0 ] || fail=1

echo "== profiler: the CUDA builtin suite, each baseline against itself"
printf '%-14s %12s %6s %8s %9s %10s %s\n' task median runs band speedup wall_ms verdict
for t in suites/builtin/*/; do
    name=$(basename "$t")
    [ -f "$t/baseline.cu" ] || continue
    out=$("$SPECGEN" profile "$t" "$t/baseline.cu" --device cuda --json --timeout 60s 2>&1)
    line=$(python3 -c '
import json, sys
try:
    j = json.loads(sys.argv[2])
except Exception:
    print("%-14s ERROR %s" % (sys.argv[1], sys.argv[2].strip().replace("\n", " ")[:300])); sys.exit(1)
if j.get("verdict") != "pass" or "candidate" not in j:
    print("%-14s %s: %s" % (sys.argv[1], j.get("verdict"), j.get("message"))); sys.exit(1)
c = j["candidate"]
print("%-14s %10.4fms %6d %7.1f%% %9.3f %10.0f %s" % (sys.argv[1], c["median_ns"] / 1e6, c["runs"],
      100 * j["band"], j["speedup"], j["wall_ms"], j["change"]))
if j["change"] != "no change": sys.exit(2)
' "$name" "$out")
    rc=$?
    echo "$line"
    [ $rc -eq 1 ] && fail=1
    [ $rc -eq 2 ] && echo "  (note: an A/A run outside its band)"
done

echo "== profiler: hardware metrics of one kernel (matmul)"
out=$("$SPECGEN" profile suites/builtin/matmul suites/builtin/matmul/baseline.cu --device cuda 2>&1)
echo "$out" | grep -E '^(facts|metrics) '
echo "$out" | grep -qE '^metrics +' || { echo "no metrics line"; fail=1; }

[ $fail -eq 0 ] && echo "profiler gpu-check: all passed" || echo "profiler gpu-check: FAILED"
exit $fail
