#!/usr/bin/env bash
# specgen validate / task init: the builtin and demo suites with NVRTC (real compiles),
# the compile cache, worker reuse, and clear errors for bad input.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
demo=suites/demo/vector_scale

# The builtin suite on PoCL (every baseline, and wrong candidates caught) and NVRTC sm_90a:
# tests/integration/suite_builtin.sh.
for arch in sm_80 sm_90; do
    out=$(for t in suites/builtin/*/ suites/demo/*/; do
        "$SPECGEN" validate "$t" --device cuda --compile-only --arch $arch --json || echo "FAILED $t"
    done 2>&1)
    check_output "cuda: every builtin and demo source compiles with NVRTC for $arch" \
        "^OK [0-9]+$" bash -c 'c=$(grep -c "\"verdict\":\"compiled\"" <<<"$1"); grep -q FAILED <<<"$1" && echo "$1" || echo "OK $c"' _ "$out"
done

# Hopper-only instructions need the arch-specific target, which a GPU run picks (sm_90a).
wg=tests/fixtures/cuda/vector_scale_wgmma.cu
check_output "a wgmma candidate compiles for sm_90a" '^compiled: compiled for cuda sm_90a' \
    "$SPECGEN" validate $demo $wg --compile-only --arch sm_90a
check_output "and is a compile error for the portable sm_90" '^compile_error' \
    "$SPECGEN" validate $demo $wg --compile-only --arch sm_90

if [ -e /dev/nvidiactl ]; then
    skip "cuda without a GPU explains the alternatives" "this machine has an NVIDIA GPU"
else
    check_output "cuda without a GPU says so and names --device opencl and --compile-only" \
        '^no_device: CUDA execution needs an NVIDIA GPU.*here instead: --compile-only .*--device opencl' \
        bash -c "'$SPECGEN' validate $demo --device cuda | tr '\n' ' '"
    check_fails "cuda without a GPU exits 1" 1 "$SPECGEN" validate $demo --device cuda
fi

# Compile cache and worker reuse: the same kernel reformatted and re-commented is a hit.
sed -e 's/^\/\/ .*//' -e 's/    /\t/' tests/hostile/opencl/good.cl >"$TMPDIR_TEST/same.cl"
out=$("$SPECGEN" validate $demo tests/hostile/opencl/good.cl "$TMPDIR_TEST/same.cl" --json 2>&1)
check_output "a reformatted duplicate is a compile-cache hit" '"cache_hit":true' \
    bash -c 'sed -n 2p <<<"$1"' _ "$out"
check_output "the first compile is not a hit" '"cache_hit":false' bash -c 'sed -n 1p <<<"$1"' _ "$out"
out=$("$SPECGEN" validate $demo tests/hostile/opencl/syntax_error.cl tests/hostile/opencl/syntax_error.cl --json 2>&1)
check_output "a repeated broken candidate costs no compile and keeps its log" \
    '"verdict":"compile_error","message":"[^"]*","detail":"[^"]*expected .;.*"cache_hit":true' bash -c 'sed -n 2p <<<"$1"' _ "$out"
check_output "one worker serves several candidates" 'worker started 1 time' \
    "$SPECGEN" validate $demo tests/hostile/opencl/good.cl tests/hostile/opencl/wrong_result.cl
check_output "a crashed worker is replaced and the next candidate passes" \
    'pass: all 3 checks.*worker started 2 time' bash -c "$SPECGEN validate $demo tests/hostile/opencl/segfault.cl tests/hostile/opencl/good.cl | tr '\n' ' '"

# A candidate without launch lines keeps the baseline's plan.
grep -v '^//@' suites/demo/vector_scale/baseline.cl | sed 's/alpha \* x\[i\]/x[i] * alpha/' >"$TMPDIR_TEST/noplan.cl"
check_output "a candidate without //@launch lines uses the baseline's plan" '^pass' \
    "$SPECGEN" validate $demo "$TMPDIR_TEST/noplan.cl"
check_output "the seed is reported and reproducible" '"seed":"42"' "$SPECGEN" validate $demo --json --seed 42
check_output "--json prints one object with the verdict and errors" \
    '^\{"verdict":"pass".*"first_bad":-1.*"max_abs":' bash -c "$SPECGEN validate $demo --json | sed 's/\"message\":\"[^\"]*\",//'"

# Bad input gets a clear message.
check_output "a missing task folder names task.json" 'nosuch/task.json' "$SPECGEN" validate nosuch
check_fails "a bad device is a usage error" 2 "$SPECGEN" validate $demo --device tpu
check_output "a bad device is named" "unknown device 'tpu'" "$SPECGEN" validate $demo --device tpu
check_output "a bad arch is named" "--arch: 'ampere'" "$SPECGEN" validate $demo --arch ampere
check_output "an unreadable candidate is named" "candidate nosuch.cl: cannot read" "$SPECGEN" validate $demo nosuch.cl
mkdir -p "$TMPDIR_TEST/bad"
cp $demo/*.cl "$TMPDIR_TEST/bad/"
sed 's/"f32", "count": "N", "role": "in"/"float", "count": "N", "role": "in"/' $demo/task.json >"$TMPDIR_TEST/bad/task.json"
check_output "a bad task.json names file, field and value" 'bad/task.json: field "buffers\[0\]": field "type": unknown type "float"' \
    "$SPECGEN" validate "$TMPDIR_TEST/bad"
# a task folder 700 bytes deep: the message keeps the path's tail, the field and the reason
deep=$TMPDIR_TEST/$(printf 'a-rather-long-folder-name-%02d/' $(seq 26))bad
mkdir -p "$deep" && cp "$TMPDIR_TEST"/bad/* "$deep/"
check_output "  ... a long path keeps its tail, the field and the reason" \
    '^specgen validate: invalid task: …[^ ]*-26/bad/task.json: field "buffers\[0\]": field "type": unknown type "float"' \
    "$SPECGEN" validate "$deep"
printf '//@launch vector_scale grid=ceil_div(M,256) block=256\n__kernel void vector_scale() {}\n' >"$TMPDIR_TEST/plan.cl"
check_output "a bad launch line names file, line and the problem" "plan.cl:1: grid=: size expression \"ceil_div\(M,256\)\": unknown size name 'M'" \
    "$SPECGEN" validate $demo "$TMPDIR_TEST/plan.cl"

# task init: from a bare kernel to a validated task.
cat >"$TMPDIR_TEST/relu.cl" <<'K'
__kernel void relu(__global const float *x, __global float *y, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = fmax(x[i], 0.0f);
}
K
check_output "task init says what it guessed" 'launch: relu grid=ceil_div\(n,256\) block=256: one thread per element.*buffer x: in f32.*buffer y: out f32' \
    bash -c "$SPECGEN task init $TMPDIR_TEST/relu.cl --size n=5000 --out $TMPDIR_TEST/relu | tr '\n' ' '"
check_output "the task it wrote validates on PoCL" '^pass' "$SPECGEN" validate "$TMPDIR_TEST/relu"
check_output "task init refuses to overwrite a task and names --force" 'already exists: pass --force' "$SPECGEN" task init "$TMPDIR_TEST/relu.cl" --out "$TMPDIR_TEST/relu"
check_output "task init names an unknown size" "--size m: kernel relu has no integer parameter" \
    "$SPECGEN" task init "$TMPDIR_TEST/relu.cl" --size m=4 --out "$TMPDIR_TEST/relu2"
check_output "task init rejects a bad --size" "--size: 'n' is not NAME=VALUE" "$SPECGEN" task init "$TMPDIR_TEST/relu.cl" --size n
check_output "task init wants a kernel file" 'expected a .cu or .cl kernel, or a KernelBench-format .py problem' "$SPECGEN" task init README.md --out "$TMPDIR_TEST/x"
finish
