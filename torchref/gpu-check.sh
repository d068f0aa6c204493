#!/usr/bin/env bash
# torchref/gpu-check.sh — on a machine with an NVIDIA GPU and PyTorch built for CUDA: the
# KernelBench path of docs/kernelbench.md on CUDA. specgen's own problems
# (tests/fixtures/kernelbench/[1-9]_*.py) imported; each torch baseline validated against
# the torch reference with torch on CUDA at the problem's own sizes; the CUDA candidates of
# tests/fixtures/kernelbench_kernels/*.cu (right ones pass with KernelBench's own check
# beside ours, wrong ones are mismatches); a replayed optimize on CUDA; its best kernel
# exported as a KernelBench ModelNew and, where nvcc and a host compiler are there for
# load_inline, run by torch against Model (tests/integration/kb_export_check.py --cuda).
# Exit 77 (skip) without a GPU or without torch on CUDA. Run through `make gpu-check`;
# record the outcome in docs/gpu-checks.md. The candidates compile here without a GPU too
# (NVRTC, --compile-only), which tests cannot make run.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
SPECGEN=${SPECGEN:-$root/bin/specgen}
. scripts/gpu-check-lib.sh
need_gpu kernelbench
py=${SPECGEN_PYTHON:-}
[ -z "$py" ] && [ -x "$root/.venv/bin/python" ] && py=$root/.venv/bin/python
[ -z "$py" ] && py=python3
if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "gpu-check (kernelbench): no PyTorch with CUDA for $py (make deps, or a system torch); nothing was checked"
    exit 77
fi
export SPECGEN_PYTHON=$py SPECGEN_DATA=$root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f=tests/fixtures/kernelbench
k=tests/fixtures/kernelbench_kernels
fail=0
"$py" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))'

# row NAME WANT OUTPUT: one table line; WANT is the verdict's first word, TEXT in the message
row() {
    local name=$1 want=$2 text=$3 out=$4 got
    got=$(printf '%s\n' "$out" | head -1)
    if [[ $got == "$want:"* && $got == *"$text"* ]]; then
        printf '%-40s ok    %s\n' "$name" "${got:0:100}"
    else
        printf '%-40s FAIL  want %s%s; got %s\n' "$name" "$want" "${text:+ ($text)}" "${got:0:200}"
        fail=1
    fi
}
v() { timeout 300 "$SPECGEN" validate "$@" --device cuda 2>&1; }

printf '\n%-40s %-5s %s\n' "problem / candidate (cuda)" "" "verdict"
for p in $f/[1-9]_*.py; do
    n=$(basename "$p" .py)
    if ! out=$("$SPECGEN" task init "$p" --out "$tmp/$n" 2>&1); then
        printf '%-40s FAIL  import: %s\n' "$n" "$(printf '%s' "$out" | tail -1)"
        fail=1
        continue
    fi
    row "$n (torch baseline)" pass "" "$(v "$tmp/$n")"
done
while read -r n c want text; do
    row "$n/$c" "$want" "$text" "$(v "$tmp/$n" "$k/$c")"
done <<'LIST'
1_ReLUScale relu_scale.cu pass KernelBench's own check: 5 of 5 trials pass
1_ReLUScale relu_scale_tail.cu mismatch
6_LinearGELU linear_gelu.cu pass KernelBench's own check: 5 of 5 trials pass
6_LinearGELU linear_gelu_no_bias.cu mismatch
2_RowSum row_sum.cu pass
2_RowSum row_sum_abs.cu mismatch normal(0,1)
8_ArgMax argmax.cu pass
LIST

# A replayed optimize on CUDA, then its best kernel as a KernelBench ModelNew
out=$(timeout 600 "$SPECGEN" optimize "$tmp/1_ReLUScale" --device cuda --speed 10 \
    --trace tests/fixtures/kernelbench_traces_cuda/relu_scale.jsonl --out "$tmp/run" \
    --db "$tmp/r.db" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '"end": *"target"' "$tmp/run/summary.json" 2>/dev/null; then
    printf '%-40s ok    %s\n' "optimize (replay, cuda)" "$(grep -o '"best_speedup": *[0-9.]*' "$tmp/run/summary.json")"
else
    printf '%-40s FAIL  exit %s: %s\n' "optimize (replay, cuda)" "$rc" "$(printf '%s' "$out" | tail -2 | tr '\n' ' ')"
    fail=1
fi
if out=$("$SPECGEN" results --db "$tmp/r.db" export --kernelbench 1_ReLUScale -o "$tmp/model_new.py" 2>&1) &&
    out=$("$py" tests/integration/kb_export_check.py "$tmp/model_new.py" 2>&1); then
    printf '%-40s ok    %s\n' "export --kernelbench (parsed)" "$(printf '%s' "$out" | tail -1)"
    if command -v nvcc >/dev/null && command -v c++ >/dev/null; then
        out=$("$py" tests/integration/kb_export_check.py "$tmp/model_new.py" --cuda 2>&1)
        case $out in *FAIL*|*Error*) printf '%-40s FAIL  %s\n' "export run by torch (load_inline)" "$(printf '%s' "$out" | tail -3 | tr '\n' ' ')"; fail=1 ;;
            *) printf '%-40s ok    %s\n' "export run by torch (load_inline)" "$(printf '%s' "$out" | tail -1)" ;; esac
    else
        printf '%-40s skip  no nvcc or no host C++ compiler here: load_inline cannot build it\n' "export run by torch (load_inline)"
    fi
else
    printf '%-40s FAIL  %s\n' "export --kernelbench" "$(printf '%s' "$out" | tail -2 | tr '\n' ' ')"
    fail=1
fi
exit $fail
