#!/usr/bin/env bash
# KernelBench-format problems as tasks (docs/kernelbench.md), on PoCL with real PyTorch:
# specgen's own problems in tests/fixtures/kernelbench (element-wise, reduction, BatchNorm
# with running statistics, matmul, conv with weights and bias, linear + GELU, a 0-d loss,
# an int64 argmax, a bool input; and one that cannot import) are imported; each reference
# output at a seed equals the original file's own Model(*get_init_inputs())(*get_inputs());
# each torch baseline validates against the torch reference; then, on the same imports,
# kernelbench_candidates.bash: OpenCL candidates (kernelbench_campaign.sh: a campaign over
# the folder). Skipped when the Python specgen uses has no torch.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
need_opencl "KernelBench problems on PoCL"
need_torch "KernelBench problems"
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
sc=$("$TORCH_PY" torchref/kb_selfcheck.py "${pairs[@]}" --seed 7 2>&1)
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
    '"name":"out",[^}]*"count":"1"' tr -d '\n ' <"$tmp/7_MSELoss/task.json"
check_output "task.json: argmax's output is i64" \
    '"name":"out","type":"i64"' tr -d '\n ' <"$tmp/8_ArgMax/task.json"
check_output "task.json: the bool mask is a u8 input" \
    '"name":"mask","type":"u8"' tr -d '\n ' <"$tmp/9_MaskedScale/task.json"
check_output "task.json: the conv output's spatial sizes follow the shape (extra size names)" \
    '"name":"out","type":"f32","count":"batch_size\*out_channels\*out_2\*out_3"' \
    tr -d '\n ' <"$tmp/5_Conv2dBias/task.json"

# A literal million-wide row: cpu_sizes shrink the batch to fit 32 MB, and the odd "medium"
# check shape (batch 33, 264 MB) is halved until it costs no more than cpu_sizes.
check_output "20_WideRows: a check shape costlier than cpu_sizes is halved, and said" \
    '^check_sizes: batch_size=3 \(halved from batch_size=33' \
    "$SPECGEN" task init $f/20_WideRows.py --out "$tmp/wide"
check_output "20_WideRows: no check shape has more bytes than cpu_sizes" '^ok [0-9]+ [0-9]+$' \
    "$TORCH_PY" -c '
import json, sys
t = json.load(open(sys.argv[1]))
def nbytes(s):
    s = dict(t["sizes"], **s)
    return sum(eval(b["count"], {}, dict(s)) for b in t["buffers"])
cpu = nbytes(t["cpu_sizes"])
worst = max(nbytes(c) for c in t["check_sizes"])
print("ok" if worst <= cpu else "over", worst, cpu)' "$tmp/wide/task.json"
check_output "20_WideRows: its torch baseline validates on PoCL" '^pass: ' v "$tmp/wide"
# A constructor that reads a value back (.item()): built again with its small tensors on the
# CPU, then moved to the meta device (kbmodel.py); the meta device alone cannot answer it.
check_output "21_ItemInInit: a constructor calling .item() imports" "^wrote $tmp/item/task.json" \
    "$SPECGEN" task init $f/21_ItemInInit.py --out "$tmp/item"
check_output "21_ItemInInit: the reference's output at a seed is the file's own" '^match: ' \
    "$TORCH_PY" torchref/kb_selfcheck.py "$tmp/item" $f/21_ItemInInit.py --seed 7
check_output "21_ItemInInit: its torch baseline validates on PoCL" '^pass: ' v "$tmp/item"
check_output "optimize TASK_DIR --precision at another precision than the folder's says so" \
    "--precision and --baseline shape .* imported from $f/20_WideRows.py .*task init $f/20_WideRows.py -o $tmp/wide --force" \
    "$SPECGEN" optimize "$tmp/wide" --precision bf16
check_fails "  ... and exits 2" 2 "$SPECGEN" optimize "$tmp/wide" --precision bf16
check_output "optimize KERNEL_TASK_DIR --baseline: a kernel task, not imported" \
    '--precision and --baseline are for a KernelBench problem .* is a kernel task' \
    "$SPECGEN" optimize suites/demo/vector_scale --baseline torch-compile

. "$(dirname "$0")/kernelbench_candidates.bash"
finish
