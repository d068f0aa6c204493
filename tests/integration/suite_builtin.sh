#!/usr/bin/env bash
# The builtin suite (suites/builtin, written by gen.py and gen_real.py): at least 30 tasks
# with the kinds issue #15 names, each declaring bytes and flops; the files are what the
# generators write; every OpenCL baseline validates against its reference on PoCL (at the
# tasks' cpu_sizes) and every wrong candidate in tests/fixtures/builtin_wrong/<task>/ is
# caught there; every CUDA source (baselines, references, wrong candidates) compiles with
# NVRTC for sm_90a. validator/gpu-check.sh runs the CUDA side on a GPU.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
suite=suites/builtin
wrongs=tests/fixtures/builtin_wrong

check_output "the suite has at least 30 tasks, the kinds of issue #15, bytes and flops on each, a wrong candidate for each" \
    '^ok [0-9]+ tasks' python3 - "$suite" "$wrongs" <<'EOF'
import json, os, sys
suite, wrongs = sys.argv[1:3]
names = sorted(d for d in os.listdir(suite) if os.path.isfile(os.path.join(suite, d, "task.json")))
bad = []
for n in names:
    t = json.load(open(os.path.join(suite, n, "task.json")))
    fp8 = any(b["type"].startswith("fp8") for b in t["buffers"])
    langs = ["cuda"] if fp8 else ["cuda", "opencl"]
    if sorted(t["baseline"]) != sorted(langs) or sorted(t["reference"]) != sorted(langs):
        bad.append(f"{n}: languages {sorted(t['baseline'])}, expected {langs}")
    for k in ("bytes", "flops", "check_sizes"):
        if k not in t:
            bad.append(f"{n}: no {k}")
    exts = {"cu"} if fp8 else {"cu", "cl"}
    got = {f.rsplit(".", 1)[1] for f in os.listdir(os.path.join(wrongs, n))} if os.path.isdir(os.path.join(wrongs, n)) else set()
    if not exts <= got:
        bad.append(f"{n}: wrong candidates in {sorted(got)}, expected {sorted(exts)}")
kinds = ["gemm_bias_gelu_f16", "softmax_bf16", "layernorm_bf16", "rmsnorm_bf16", "add_rmsnorm_bf16",
         "attention_causal_f16", "quant_fp8_rowwise", "dequant_fp8_e5m2", "topk_f32", "embedding_bf16",
         "conv2d", "silu_mul_bf16", "gelu_erf_f16", "rope_neox_f16", "cross_entropy_bf16", "adamw_f32",
         "cast_f32_bf16", "cast_f32_f16", "gemm_bf16_nt"]
bad += [f"missing task {k}" for k in kinds if k not in names]
bad += [f"wrong candidates for no task: {w}" for w in os.listdir(wrongs) if w not in names]
if len(names) < 30:
    bad.append(f"only {len(names)} tasks")
print("\n".join(bad) if bad else f"ok {len(names)} tasks")
EOF

# The committed files are what the generators write (nobody edits a generated file by hand).
mkdir -p "$TMPDIR_TEST/gen/suites/builtin"
cp $suite/*.py "$TMPDIR_TEST/gen/suites/builtin/"
check "suites/builtin and tests/fixtures/builtin_wrong are what gen.py writes" \
    bash -c "cd '$TMPDIR_TEST/gen' && python3 suites/builtin/gen.py >/dev/null &&
        diff -r --exclude='*.py' --exclude=__pycache__ '$SPECGEN_ROOT/$suite' suites/builtin &&
        diff -r '$SPECGEN_ROOT/$wrongs' tests/fixtures/builtin_wrong"

# NVRTC: per task one worker compiles the baseline, the reference and the wrong candidates.
out=$(for t in $suite/*/; do
    n=$(basename "$t")
    "$SPECGEN" validate "$t" "$t/reference.cu" $wrongs/"$n"/*.cu --device cuda --compile-only \
        --arch sm_90a --json || echo "FAILED $n"
done 2>&1)
want=$(($(ls $suite/*/reference.cu | wc -l) + $(ls $wrongs/*/*.cu | wc -l)))
check_output "cuda: every baseline, reference and wrong candidate compiles with NVRTC for sm_90a ($want sources + baselines)" \
    "^OK $want$" bash -c 'c=$(grep -c "\"verdict\":\"compiled\"" <<<"$1"); grep -q "FAILED\|rejected\|compile_error" <<<"$1" && echo "$1" || echo "OK $c"' _ "$out"

need_opencl "the builtin suite on PoCL"
# PoCL: per task one worker runs the wrong candidates, then the baseline (the JSON lines are
# kept for the checks on what the messages say).
mkdir -p "$TMPDIR_TEST/pocl"
for t in $suite/*/; do
    n=$(basename "$t")
    [ -f "$t/baseline.cl" ] || continue
    j="$TMPDIR_TEST/pocl/$n.json"
    "$SPECGEN" validate "$t" $wrongs/"$n"/*.cl "$t/baseline.cl" --device opencl --json >"$j" 2>&1
    check_output "opencl: $n: the baseline passes and every wrong candidate is caught" '^ok' \
        python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
base = [l for l in lines if l["candidate"].endswith("/baseline.cl")]
wrong = [l for l in lines if "/builtin_wrong/" in l["candidate"]]
bad = ["%s: %s: %s" % (l["candidate"], l["verdict"], l["message"][:300]) for l in wrong if l["verdict"] != "mismatch"]
if not base or base[0]["verdict"] != "pass":
    bad.append("baseline: " + (base[0]["verdict"] + ": " + base[0]["message"][:300] if base else open(sys.argv[1]).read()[:500]))
if not wrong:
    bad.append("no wrong candidate ran")
print("\n".join(bad) if bad else "ok %d caught" % len(wrong))
' "$j"
done

msg() { python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{") and json.loads(l)["candidate"].endswith(sys.argv[2]): print(json.loads(l)["message"])' \
    "$TMPDIR_TEST/pocl/$1.json" "$2"; }
for t in rmsnorm_bf16 bias_grad_bf16; do
    check_output "opencl: $t: accumulating in bf16 is named as such, with the fix" \
        'looks like precision loss.*accumulating in bf16 gives: accumulate in f32' msg $t bf16_accumulate.cl
done
for tc in attention_causal_f16/no_max_subtraction cross_entropy_bf16/no_max_subtraction silu_mul_bf16/clamped_gate; do
    check_output "opencl: ${tc%/*}: ${tc#*/} (right on uniform and normal inputs) is caught on outliers" \
        'with inputs [a-z]+=outliers' msg "${tc%/*}" "${tc#*/}.cl"
done
check_output "opencl: layernorm_bf16: a one-pass variance is caught on inputs with a large mean" \
    'with inputs x=normal\(300,1\)' msg layernorm_bf16 one_pass_variance.cl
check_output "opencl: add_rmsnorm_bf16: not storing the in-place residual is caught on it" \
    'wrong result in output res ' msg add_rmsnorm_bf16 residual_not_stored.cl
finish
