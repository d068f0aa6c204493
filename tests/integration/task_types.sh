#!/usr/bin/env bash
# Task features for real kernels (tests/fixtures/types, real PoCL runs and NVRTC compiles):
# f16 and bf16 storage, inout buffers, several input distributions, special values, fp8
# (CUDA only), a task whose reference leaves NaN, and the precision-loss hint. Each
# fixture's baseline passes and each of its wrong candidates is caught.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
need_opencl "task types on PoCL"
f=tests/fixtures/types
v() { "$SPECGEN" validate "$@" --device opencl; }

for t in f16_axpb bf16_rmsnorm inout_axpy special_relu; do
    check_output "$t: the baseline validates against its reference on PoCL" \
        '^pass: all [0-9]+ checks passed \(shapes: 3, input distributions: [23]\)' v $f/$t
done

check_output "f16: a kernel right only on uniform(-1,1) inputs fails on another distribution" \
    '^mismatch: wrong result in output y at shape N=[0-9]+ with inputs x=(normal\(0,1\)|outliers)' \
    v $f/f16_axpb $f/f16_axpb/uniform_only.cl
check_output "f16: reading the halves as integers is caught" '^mismatch: .*output y' \
    v $f/f16_axpb $f/f16_axpb/raw_bits.cl
out=$(v $f/bf16_rmsnorm $f/bf16_rmsnorm/bf16_accumulate.cl 2>&1)
check_output "bf16: accumulating in bf16 fails at the larger shape" \
    '^mismatch: wrong result in output y at shape B=3 N=1001' echo "$out"
check_output "bf16: and the message says it looks like bf16 accumulation and to use f32" \
    'looks like precision loss, not a logic error.*at B=1 N=1 it passed.*accumulating in bf16 gives: accumulate in f32' \
    echo "$out"
out=$(v $f/bf16_rmsnorm $f/bf16_rmsnorm/hardcoded_size.cl 2>&1)
check_output "bf16: a logic error (hard-coded size) is caught" '^mismatch: .*[0-9]+ of 3003 elements differ' echo "$out"
check_fails "bf16: and gets no precision-loss hint" 1 grep -q 'precision loss' <<<"$out"
out=$(v $f/f16_axpb $f/f16_axpb/uniform_only.cl 2>&1)
check_fails "f16: a clamp (other elements exact) gets no precision-loss hint" 1 grep -q 'precision loss' <<<"$out"

check_output "inout: a kernel that overwrites y instead of updating it is caught" \
    '^mismatch: wrong result in output y at shape N=1 with inputs x=uniform\(-1,1\), y=normal\(0,1\)' \
    v $f/inout_axpy $f/inout_axpy/overwrite.cl
check_output "inout: a kernel that updates y twice is caught" '^mismatch: .*output y' \
    v $f/inout_axpy $f/inout_axpy/twice.cl
out=$("$SPECGEN" profile $f/inout_axpy $f/inout_axpy/baseline.cl --max-runs 12 --warmup 1 2>&1)
check_output "inout: timing restores y before every run, so the checks after timing pass" \
    '^speedup ' echo "$out"
check_fails "inout: and nothing is reported wrong" 1 grep -q 'WRONG\|mismatch' <<<"$out"
check_output "special: a relu that overflows near the float max is caught on special inputs" \
    '^mismatch: .*with inputs x=special: .*got inf, expected 3.40282347e\+38' \
    v $f/special_relu $f/special_relu/half_sum.cl
check_output "a reference leaving NaN (an output read before written) makes the task invalid, pointing at inout" \
    '^rejected: the task is invalid: its reference wrote -?nan to output y .*its role should be "inout"' \
    v $f/out_read

check_output "u8/i8: the baseline (uchar/char buffers, a uchar scalar) validates on PoCL" \
    '^pass: all 6 checks passed' v $f/u8_brighten
check_output "u8: a kernel whose 8-bit arithmetic wraps instead of saturating is caught" \
    '^mismatch: wrong result in output y .*atol 0, rtol 0' v $f/u8_brighten $f/u8_brighten/wraps.cl
check_output "u8: reading unsigned pixels as signed bytes is caught" '^mismatch: .*output y' \
    v $f/u8_brighten $f/u8_brighten/signed_x.cl

check_output "fp8: an OpenCL device is refused with the reason" \
    'has no opencl reference \(its fp8 buffers need CUDA: OpenCL has no fp8 type\)' v $f/fp8_quant
out=$(for t in $f/*/; do
    for k in "$t"*.cu; do
        "$SPECGEN" validate "$t" "$k" --device cuda --compile-only --arch sm_90a --json || echo "FAILED $k"
    done
done 2>&1)
check_output "cuda: every fixture source (f16, bf16, fp8, u8/i8, inout) compiles with NVRTC for sm_90a" \
    "^OK [0-9]+$" bash -c 'c=$(grep -c "\"verdict\":\"compiled\"" <<<"$1"); grep -q "FAILED\|rejected" <<<"$1" && echo "$1" || echo "OK $c"' _ "$out"

# Roofline: every builtin declares bytes and flops; on a memory-bound one (a dot product
# per row: 1 flop per 4 bytes) the feedback carries the roofline diagnosis. PoCL's peak
# bandwidth is measured (device fills), so the share of it is what this machine gives.
n=$(grep -L '"flops"' suites/builtin/*/task.json | wc -l)
check_output "every builtin task declares bytes and flops" '^0$' echo "$n"
out=$("$SPECGEN" profile suites/builtin/batched_dot suites/builtin/batched_dot/baseline.cl --max-runs 12 --warmup 1 2>&1)
check_output "a memory-bound builtin (batched_dot) gets the roofline diagnosis in its feedback" \
    '^Diagnosis: (memory-bound at|latency-bound: only) [0-9]+% of peak bandwidth' echo "$out"
check_output "timed at its cpu_sizes on PoCL (B=256: 2 MiB moved per run)" \
    '^roofline .*task: 2.1e\+06 bytes, 5.24e\+05 flops per run' echo "$out"

# task.json hygiene: unknown fields and sources that leave the folder.
cp -r $f/inout_axpy "$TMPDIR_TEST/typo"
sed -i 's/"check_sizes"/"check_size"/' "$TMPDIR_TEST/typo/task.json"
check_output "an unknown field is refused with the nearest known name" \
    'typo/task.json: unknown field "check_size" \(did you mean "check_sizes"\?\)' v "$TMPDIR_TEST/typo"
cp -r $f/inout_axpy "$TMPDIR_TEST/link"
ln -sf /etc/hostname "$TMPDIR_TEST/link/reference.cl"
check_output "a reference that is a symbolic link out of the task folder is refused" \
    'field "reference": "reference.cl" is a symbolic link that leads out of the task folder' v "$TMPDIR_TEST/link"
finish
