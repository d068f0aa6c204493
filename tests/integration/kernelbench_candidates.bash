# tests/integration/kernelbench_candidates.bash — sourced by kernelbench.sh after its imports
# (it reads $f, $k, $tmp/NAME and v from there: the four problems it needs are imported
# once, where a file of its own imported them again, 4 s of CPU each).
# OpenCL candidates for specgen's own KernelBench-format problems (docs/kernelbench.md), on
# PoCL with real PyTorch (tests/fixtures/kernelbench_kernels): right ones pass, with
# KernelBench's own check beside ours; wrong ones are rejected (a tail element dropped, the
# bias ignored, |x| summed: right only on the problem's own inputs); a problem that cannot
# import says why; --precision bf16; without torch, one line saying how to install it.
check_output "an OpenCL candidate passes, with KernelBench's own check beside ours" \
    "^pass: .*KernelBench's own check: 5 of 5 trials pass" v "$tmp/1_ReLUScale" $k/relu_scale.cl
check_output "a candidate off by a tail element is rejected" \
    '^mismatch: wrong result in output out .*1 of [0-9]+ elements differ' \
    v "$tmp/1_ReLUScale" $k/relu_scale_tail.cl
check_output "linear + GELU in OpenCL passes" '^pass: ' v "$tmp/6_LinearGELU" $k/linear_gelu.cl
check_output "a candidate that ignores the bias is rejected" '^mismatch: wrong result in output out' \
    v "$tmp/6_LinearGELU" $k/linear_gelu_no_bias.cl
check_output "row sum in OpenCL passes" '^pass: ' v "$tmp/2_RowSum" $k/row_sum.cl
check_output "a row sum of |x| passes on the problem's own inputs and fails on ours (normal)" \
    '^mismatch: wrong result in output out at shape .* with inputs x=normal\(0,1\)' \
    v "$tmp/2_RowSum" $k/row_sum_abs.cl
check_output "an int64 argmax in OpenCL passes (compared exactly)" '^pass: ' \
    v "$tmp/8_ArgMax" $k/argmax.cl

check_output "a problem returning a tuple stops, naming the construct and what to do" \
    'cannot import .*10_TupleOut.py: forward returns 2 values .*return one tensor' \
    "$SPECGEN" task init $f/10_TupleOut.py --out "$tmp/tuple"
check_output "--precision bf16: inputs, weights and output are bf16" \
    '"name":"fc_weight","type":"bf16"' sh -c "\"$SPECGEN\" task init $f/6_LinearGELU.py --out $tmp/bf16 --precision bf16 >/dev/null && tr -d '\n ' <$tmp/bf16/task.json"
check_output "--precision bf16: the torch baseline validates (tolerance 1e-2)" '^pass: ' v "$tmp/bf16"
check_output "without torch, a torch task stops with one line saying how to install it" \
    'PyTorch is not installed .*make deps' env SPECGEN_PYTHON=/usr/bin/python3 \
    "$SPECGEN" validate "$tmp/1_ReLUScale" --device opencl

# The CUDA candidates torchref/gpu-check.sh runs on a GPU: here NVRTC compiles each for sm_90
# (nothing runs them: no GPU), so the GPU check does not meet a kernel that never compiled.
if "$SPECGEN" validate "$tmp/1_ReLUScale" $k/relu_scale.cu --device cuda --compile-only \
    --arch sm_90 >/dev/null 2>&1; then
    for pair in 1_ReLUScale:relu_scale 1_ReLUScale:relu_scale_tail 6_LinearGELU:linear_gelu \
        6_LinearGELU:linear_gelu_no_bias 2_RowSum:row_sum 2_RowSum:row_sum_abs 8_ArgMax:argmax; do
        check_output "${pair#*:}.cu compiles for sm_90 against ${pair%%:*} (NVRTC)" '^compiled: ' \
            "$SPECGEN" validate "$tmp/${pair%%:*}" "$k/${pair#*:}.cu" --device cuda \
            --compile-only --arch sm_90
    done
else
    skip "the KernelBench CUDA candidates compile (NVRTC)" "NVRTC is not available here"
fi
