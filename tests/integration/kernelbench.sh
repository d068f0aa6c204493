#!/usr/bin/env bash
# KernelBench-format problems as tasks (docs/kernelbench.md), on PoCL with real PyTorch:
# specgen's own problems in tests/fixtures/kernelbench (element-wise, reduction, BatchNorm
# with running statistics, matmul, conv with weights and bias, linear + GELU, a 0-d loss,
# an int64 argmax, a bool input; and one that cannot import) are imported; each reference
# output at a seed equals the original file's own Model(*get_init_inputs())(*get_inputs());
# each torch baseline validates against the torch reference; OpenCL candidates written
# here pass and wrong ones are rejected; a campaign over the folder runs with the replay
# LLM. Skipped when the Python specgen uses has no torch.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
need_opencl "KernelBench problems on PoCL"
py=${SPECGEN_PYTHON:-}
[ -z "$py" ] && [ -x .venv/bin/python ] && py=.venv/bin/python
[ -z "$py" ] && py=python3
if ! "$py" -c 'import torch' 2>/dev/null; then
    skip "KernelBench problems" "no PyTorch for $py (make deps installs it into .venv)"
    finish
fi
f=tests/fixtures/kernelbench
k=tests/fixtures/kernelbench_kernels
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
v() { timeout 300 "$SPECGEN" validate "$@" --device opencl --compile-timeout 120s --run-timeout 120s; }

pairs=()
for p in $f/[1-9]_*.py; do
    n=$(basename "$p" .py)
    check_output "$n: imports" "^wrote $tmp/$n/task.json" "$SPECGEN" task init "$p" --out "$tmp/$n"
    pairs+=("$tmp/$n" "$p")
done
sc=$("$py" torchref/kb_selfcheck.py "${pairs[@]}" --seed 7 2>&1)
for p in $f/[1-9]_*.py; do
    n=$(basename "$p" .py)
    check_output "$n: the reference's output at a seed is the file's own (bytes identical)" \
        "^match: $p at main, seed 7" echo "$sc"
    check_output "$n: the torch baseline validates against the torch reference on PoCL" \
        '^pass: all [0-9]+ checks passed' v "$tmp/$n"
done
check_output "task.json names the origin and its hash" \
    "\"file\": \"$f/6_LinearGELU.py\"" cat "$tmp/6_LinearGELU/task.json"
check_output "task.json: weights and bias are buffers named after the state_dict" \
    '"name": "fc_bias"' cat "$tmp/6_LinearGELU/task.json"
check_output "task.json: BatchNorm's running statistics are buffers" \
    '"name": "norm_running_var"' cat "$tmp/3_BatchNormStats/task.json"
check_output "task.json: the 0-d loss is a 1-element output" \
    '"name": "out",[^}]*"count": "1"' tr -d '\n ' <"$tmp/7_MSELoss/task.json"
check_output "task.json: argmax's output is i64" \
    '"name":"out","type":"i64"' tr -d '\n ' <"$tmp/8_ArgMax/task.json"
check_output "task.json: the bool mask is a u8 input" \
    '"name":"mask","type":"u8"' tr -d '\n ' <"$tmp/9_MaskedScale/task.json"
check_output "task.json: the conv output's spatial sizes follow the shape (extra size names)" \
    '"name":"out","type":"f32","count":"batch_size\*out_channels\*out_2\*out_3"' \
    tr -d '\n ' <"$tmp/5_Conv2dBias/task.json"

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

finish
