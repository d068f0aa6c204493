#!/usr/bin/env bash
# --baseline torch-compile (docs/kernelbench.md): a problem with weights (6_LinearGELU: a linear
# layer with weight and bias, then GELU) imported with torch.compile as its baseline. Its
# baseline validates against the torch reference on PoCL (inductor compiling for the CPU with
# the system's C++ compiler) at every check shape and input distribution, each drawing its own
# weights (a compiled module reused with the first draw's weights fails them), the compile
# running under the compile deadline; then an OpenCL candidate is timed against it. One
# compile costs about 10-20 s of CPU (more under load): the deadlines are raised here. The
# inductor cache lives in the test's temp folder (TMPDIR). Skipped without torch.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
need_opencl "a torch.compile baseline on PoCL"
need_torch "a torch.compile baseline"
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
export SPECGEN_DATA=$SPECGEN_ROOT TMPDIR=$tmp
t0=$(date +%s)
check "task init --baseline torch-compile: imported" "$SPECGEN" task init \
    tests/fixtures/kernelbench/6_LinearGELU.py --baseline torch-compile --out "$tmp/t"
check "task.json: the baseline is torch.compile" python3 -c "
import json
t = json.load(open('$tmp/t/task.json'))
assert t['baseline'] == {'torch': 'compile'}, t['baseline']
"
t1=$(date +%s)
check_output "validate: the torch.compile baseline passes every check against the torch reference" \
    'pass: all 6 checks passed' "$SPECGEN" validate "$tmp/t" --device opencl \
    --compile-timeout 10m --run-timeout 5m
t2=$(date +%s)
"$SPECGEN" profile "$tmp/t" tests/fixtures/kernelbench_kernels/linear_gelu.cl --device opencl \
    --compile-timeout 10m --run-timeout 5m --min-runs 3 --max-runs 5 --json >"$tmp/prof.json" \
    2>"$tmp/prof.err"
rc=$?
check "profile: exit 0" test "$rc" = 0
check "profile: the candidate passed and was timed against the torch.compile baseline" \
    python3 -c "
import json
p = json.load(open('$tmp/prof.json'))
assert p['verdict'] == 'pass', p
assert p['baseline']['median_ns'] > 0 and p['candidate']['median_ns'] > 0 and p['speedup'] > 0, p
print('# baseline (torch.compile) %.0f us, candidate %.0f us' % (p['baseline']['median_ns'] / 1e3,
      p['candidate']['median_ns'] / 1e3))
"
t3=$(date +%s)
echo "# wall: import $((t1 - t0)) s, validate $((t2 - t1)) s, profile $((t3 - t2)) s"
finish
