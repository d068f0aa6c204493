#!/usr/bin/env bash
# The command-line surface: help, version, unknown commands and options, bad values.
. "$(dirname "$0")/../lib.sh"

check_output "--help lists every command" \
    'optimize.*campaign.*results.*report.*task.*validate.*profile.*pool.*kvstore.*replay-llm.*llm-check.*sim' \
    bash -c "$SPECGEN --help | tr '\n' ' '"
check_output "--version prints a version" '^specgen [0-9]+\.[0-9]+\.[0-9]+' "$SPECGEN" --version
for cmd in optimize campaign results report task validate profile pool kvstore replay-llm llm-check sim; do
    check_output "$cmd --help explains the command" "^Usage: specgen $cmd" "$SPECGEN" "$cmd" --help
    check_fails "$cmd --bogus exits 2" 2 "$SPECGEN" "$cmd" --bogus
    check_output "$cmd --bogus names the option" "unknown option '--bogus'" "$SPECGEN" "$cmd" --bogus
done
check_fails "an unknown command exits 2" 2 "$SPECGEN" frobnicate
check_output "an unknown command is named" "'frobnicate' is not a command" "$SPECGEN" frobnicate
check_fails "no command exits 2" 2 "$SPECGEN"
check_output "a bad number names option and value" "--target: 'abc' is not a number" \
    "$SPECGEN" optimize x --target abc
check_output "a bad duration names option and value" "--task-budget-time: '5 parsecs' is not a duration" \
    "$SPECGEN" optimize x --task-budget-time '5 parsecs'
check_output "a missing value is reported" "option '--target' needs a value" "$SPECGEN" optimize x --target
check_output "--log-level rejects bad levels" "--log-level: 'loud'" "$SPECGEN" --log-level loud optimize
# short options (sg_opt.short_name): -o VALUE, -oVALUE, -o=VALUE; unknown ones are named
check_output "a short option shows in --help" '^  -o, --out FILE' "$SPECGEN" report --help
for form in "-o $TMPDIR_TEST/a.html" "-o$TMPDIR_TEST/a.html" "-o=$TMPDIR_TEST/a.html"; do
    # shellcheck disable=SC2086 # the form is split on purpose
    check_output "short option form '${form%%$TMPDIR_TEST*}...' is parsed" "no results database at $TMPDIR_TEST/none.db" \
        "$SPECGEN" report --db "$TMPDIR_TEST/none.db" $form
done
check_fails "an unknown short option exits 2" 2 "$SPECGEN" report -x
check_output "an unknown short option is named" "unknown option '-x'" "$SPECGEN" report -x
check_output "a short option needs its value" "option '--out' needs a value" "$SPECGEN" report -o
check_output "help CMD shows the command's help" "^Usage: specgen kvstore" "$SPECGEN" help kvstore
# optimize KERNEL.cu takes task init's hints (--kernel, --size, --count, --launch, --force);
# no device is needed to make the task folder.
k=$SPECGEN_ROOT/tests/fixtures/byok/two_kernels_smem.cu
t=$TMPDIR_TEST
"$SPECGEN" optimize "$k" --kernel row_max --launch "grid=N block=128 smem=128*4" --size N=77 \
    --db none --out "$t/ok" >"$t/ok.log" 2>&1
check_output "optimize KERNEL --kernel/--launch: the task is made with them" \
    '^//@launch row_max grid=N block=128 smem=128\*4' head -1 "$t/ok/task/baseline.cu"
check_output "  ... and --size" '"N": 77' cat "$t/ok/task/task.json"
"$SPECGEN" optimize "$k" --kernel row_max --launch "grid=N block=64 smem=64*4" --db none --out "$t/ok" >"$t/ok2.log" 2>&1
check_output "a second run without --force keeps the folder and says the hints are not applied" \
    'using the task folder made earlier.*pass --force' cat "$t/ok2.log"
check_output "  ... and it is unchanged" 'block=128' head -1 "$t/ok/task/baseline.cu"
"$SPECGEN" optimize "$k" --kernel row_max --launch "grid=N block=64 smem=64*4" --force --db none \
    --out "$t/ok" >/dev/null 2>&1
check_output "--force makes it again with the hints given now" 'block=64' head -1 "$t/ok/task/baseline.cu"
check_fails "the hints with a task folder are a usage error" 2 \
    "$SPECGEN" optimize "$SPECGEN_ROOT/suites/demo/vector_scale" --size N=3
check_output "  ... saying they are for a kernel file" 'are for a kernel file' \
    "$SPECGEN" optimize "$SPECGEN_ROOT/suites/demo/vector_scale" --size N=3
# Without a GPU, a CUDA-only task says so once, with only the alternatives that apply.
if "$SPECGEN" validate "$SPECGEN_ROOT/suites/demo/vector_scale" --device cuda 2>&1 | grep -q '^no_device'; then
    "$SPECGEN" optimize "$SPECGEN_ROOT/tests/fixtures/byok/gelu_bf16.cu" --db none --out "$t/nogpu" >"$t/nogpu.log" 2>&1
    check_output "optimize KERNEL.cu without a GPU: exit 1" '^1$' echo $?
    check_output "  ... says CUDA cannot run here, once" '^1$' grep -c 'NVIDIA GPU' "$t/nogpu.log"
    check_output "  ... and how to check that it compiles" 'validate .*--device cuda --compile-only --arch sm_90a' cat "$t/nogpu.log"
    check "  ... no --device opencl (the task has no OpenCL kernel), no optimize --compile-only" \
        bash -c "! grep -qE -- '--device opencl|Alternatives|--compile-only checks' '$t/nogpu.log'"
    check "  ... and no 'nothing beat the baseline'" bash -c "! grep -q 'nothing beat' '$t/nogpu.log'"
    check_output "validate without a GPU suggests --compile-only, and no --device opencl for a CUDA-only task" \
        '^here instead: --compile-only --arch sm_90a checks that the CUDA sources compile$' \
        "$SPECGEN" validate "$t/nogpu/task" --device cuda
    check_output "  ... and --device opencl for a task that has OpenCL kernels" 'here instead: .*--device opencl runs' \
        "$SPECGEN" validate "$SPECGEN_ROOT/suites/demo/vector_scale" --device cuda
else
    skip "optimize KERNEL.cu without a GPU" "this machine has a GPU"
fi
finish
