#!/usr/bin/env bash
# specgen profile: the feedback a person or model reads for a compile error, a wrong
# result and a slow-but-correct kernel (real PoCL runs), JSON output, usage errors, and
# CUDA without a GPU. The timing method itself is tested in tests/integration/c/test_profiler_time.c.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
task=tests/fixtures/profiler/busy
c=tests/fixtures/profiler/cands
quick=(--max-runs 12 --warmup 1)

check_output "--help teaches the method" 'interleaved' "$SPECGEN" profile --help
check_fails "a missing CANDIDATE is a usage error" 2 "$SPECGEN" profile $task
check_output "a bad --input-sets value is named" '--input-sets 0: 0 is not accepted here' \
    "$SPECGEN" profile $task $c/slow4x.cl --input-sets 0
check_output "a bad --tol value is named" "--tol: '2' must be 1e-06\.\.0\.999" \
    "$SPECGEN" profile $task $c/slow4x.cl --tol 2
check_output "an unreadable candidate is named" 'candidate /nonexistent.cl: cannot read' \
    "$SPECGEN" profile $task /nonexistent.cl

out=$("$SPECGEN" profile $task $c/compile_error.cl 2>&1)
check_output "compile error: says it did not compile, with the count" \
    'compile_error.cl did not compile \(1 error\)\. Line numbers refer to your kernel:' echo "$out"
check_output "compile error: the compiler's message at the kernel's own line" \
    "^kernel.cl:4:37: error: use of undeclared identifier 'undefined_offset'" echo "$out"
check_fails "compile error: exit 1" 1 "$SPECGEN" profile $task $c/compile_error.cl

out=$("$SPECGEN" profile $task $c/wrong.cl 2>&1)
check_output "mismatch: the feedback template names the output, shape, index and values" \
    'wrong.cl compiled but gives WRONG results for output `y` at sizes N=1001: at index 700 it wrote [-0-9.e]+, the reference is [-0-9.e]+ \(max abs error [0-9.e-]+, max rel error [0-9.e-]+\)\.' \
    echo "$out"

out=$("$SPECGEN" profile $task $c/slow4x.cl --max-runs 40 2>&1)
# Four times the work: 0.17 to 0.25 measured here on PoCL, and 0.41 once on a loaded
# machine. The check asserts the direction with a wide margin (a speedup below 0.6, and the
# verdict "slower"); the figure belongs to `make bench-profile`.
check_output "slow but correct: timing with speedup, noise and verdict (clearly slower)" \
    'slow4x.cl is correct\. Time .* vs baseline .* \(medians of [0-9]+ runs, noise ±[0-9.]+%\): speedup 0\.[0-5][0-9]x, slower than the baseline\.' \
    echo "$out"
check_output "slow but correct: a roofline diagnosis from the task's bytes and flops" \
    '^Diagnosis: latency-bound: only [0-9]+% of peak bandwidth and [0-9]+% of peak arithmetic' \
    echo "$out"
check_output "slow but correct: the roofline line shows achieved vs peak" \
    '^roofline +[0-9.]+ GB/s of [0-9]+ peak, [0-9.]+ GFLOP/s of [0-9]+ peak' echo "$out"
check_output "slow but correct: static facts of the kernel (work-group limit, private memory)" \
    '^facts +busy: block 64 of at most [0-9]+, [0-9]+ B private' echo "$out"
check_output "slow but correct: the method line names the rotation and the flush" \
    '3 input sets rotated, [0-9]+ MiB flush before each run' echo "$out"

json=$("$SPECGEN" profile $task $task/baseline.cl "${quick[@]}" --json 2>&1)
check_output "--json: one object with both timings, speedup, band and change" \
    '^ok$' python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["verdict"] == "pass", j
for k in ("baseline", "candidate"):
    assert j[k]["runs"] >= 10 and j[k]["median_ns"] > 0, j[k]
assert j["change"] in ("faster", "slower", "no change") and j["band"] >= 0, j
assert (j["change"] == "no change") == (1 / (1 + j["band"]) <= j["speedup"] <= 1 + j["band"]), j
assert j["flush_bytes"] > 0 and j["input_sets"] == 3 and j["wall_ms"] > j["device_ms"] > 0
print("ok")' "$json"

# Racing through the worker (the rule itself: tests/unit/test_profiler_race.c): four times
# the work against a best of 1 stops as clearly slower, before the stability minimum.
out=$("$SPECGEN" profile $task $c/slow4x.cl --race-best 1 --max-runs 40 2>&1)
check_output "racing: a clearly slower candidate stops early, with its interval" \
    '^racing +stopped after [3-9] runs: 0\.[0-9]+x \.\. 0\.[0-9]+x \(99%\), clearly below the best so far \(1\.00x\)' \
    echo "$out"
check_output "racing: the feedback says why the timing stopped" \
    'Timing stopped early after [3-9] runs: .*clearly below the best so far \(1\.00x\)\.' echo "$out"

cp -r $task "$TMPDIR_TEST/badroof"
sed -i 's/"8\*N"/"8*M"/' "$TMPDIR_TEST/badroof/task.json"
check_output "a bad bytes expression names the file and the field" \
    'badroof/task.json: field "bytes": .*M' \
    "$SPECGEN" profile "$TMPDIR_TEST/badroof" $task/baseline.cl "${quick[@]}"

out=$("$SPECGEN" profile $task $c/memo_out.cl "${quick[@]}" 2>&1)
check_output "a kernel that keeps old outputs is reported wrong after timing" \
    'memo_out.cl is WRONG: wrong result after timing: on input set [23] of 3' echo "$out"

# Validation passes both (their outputs start poisoned); once launched again they write
# out of bounds / into an input: the guards and inputs are checked after timing too.
out=$("$SPECGEN" profile $task $c/oob_rerun.cl "${quick[@]}" 2>&1)
check_output "a kernel that writes out of bounds only while being timed is caught" \
    'oob_rerun.cl is WRONG: out-of-bounds write while being timed: the guard bytes after buffer y were overwritten at shape N=16384' \
    echo "$out"
check_fails "  ... and exits 1" 1 "$SPECGEN" profile $task $c/oob_rerun.cl "${quick[@]}"
out=$("$SPECGEN" profile $task $c/input_rerun.cl "${quick[@]}" 2>&1)
check_output "a kernel that changes its input only when launched again is caught" \
    'input_rerun.cl is WRONG: the kernel wrote to input buffer x \(input set [0-9], first changed element [0-9]+\) at shape N=16384' \
    echo "$out"

check_output "a kernel that hangs while being timed is killed at the run deadline" \
    'passed validation but could not be timed: .*did not finish within 2000 ms.*the worker was killed' \
    "$SPECGEN" profile $task $c/hang_second.cl --run-timeout 2s

if [ -e /dev/nvidiactl ]; then
    skip "cuda without a GPU explains itself" "this machine has an NVIDIA GPU"
else
    check_multi "cuda without a GPU says so and names --device opencl" \
        'CUDA execution needs an NVIDIA GPU.*--device opencl' \
        "$SPECGEN" profile suites/builtin/gelu suites/builtin/gelu/baseline.cu
fi
finish
