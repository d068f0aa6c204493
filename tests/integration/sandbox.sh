#!/usr/bin/env bash
# Candidates cannot read files through the compiler (issue 17, item 1).
#  - Spellings of #include that a naive text check misses (the trigraph ??=, a form feed
#    or a lone carriage return before #) are rejected with a clear message, on PoCL and
#    with NVRTC (compile-only, sm_90).
#  - Beneath the text check, the worker's sandbox (Landlock) refuses to open a file outside
#    the task folder even when the check is satisfied: a task folder holding a symlink to a
#    secret file outside it, a candidate including that name. The secret never shows in
#    the verdict; the compiler cannot open the file (clang says "file not found").
#  - The compile log never quotes another file's text (log scrub; unit-tested in
#    tests/unit/test_dev_log.c).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"

secret_dir=$(mktemp -d /tmp/specgen-secret.XXXXXX)
on_exit "rm -rf $secret_dir"
token=SGSECRETTOKEN$RANDOM$RANDOM
printf '%s\n' "$token" >"$secret_dir/secret.h"
chmod 600 "$secret_dir/secret.h"

body_cl='__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i];
}'
body_cu='extern "C" __global__ void vector_scale(const float *x, float *y, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i];
}'
spellings() { # ext body: writes tri, ff, cr candidates including the secret by absolute path
    printf '??=include "%s"\n%s\n' "$secret_dir/secret.h" "$2" >"$TMPDIR_TEST/tri.$1"
    printf '\f#include "%s"\n%s\n' "$secret_dir/secret.h" "$2" >"$TMPDIR_TEST/ff.$1"
    printf 'int zz;\r#include "%s"\n%s\n' "$secret_dir/secret.h" "$2" >"$TMPDIR_TEST/cr.$1"
}
task=suites/demo/vector_scale
lim=(--run-timeout 5s --compile-timeout 20s --json)

spellings cl "$body_cl"
out=$("$SPECGEN" validate $task "$TMPDIR_TEST"/{tri,ff,cr}.cl "${lim[@]}" 2>&1)
n=$(printf '%s\n' "$out" | grep -c '"verdict":"rejected".*is not allowed: only files inside the task folder')
if [ "$n" -eq 3 ] && ! grep -q "$token" <<<"$out"; then
    ok "opencl: trigraph, form-feed and carriage-return includes are rejected; no secret shown"
else not_ok "opencl: hidden include spellings"; printf '#   %s\n' "${out//$'\n'/$'\n'#   }"; fi
check_output "opencl: the rejection names the include's line" '"candidate":"[^"]*/tri.cl".*line [0-9]+: #include' echo "$out"

spellings cu "$body_cu"
out=$("$SPECGEN" validate $task "$TMPDIR_TEST"/{tri,ff,cr}.cu --device cuda --compile-only --arch sm_90 "${lim[@]}" 2>&1)
if grep -q 'NVRTC\|nvrtc' <<<"$out" && ! grep -q '"verdict"' <<<"$out"; then
    skip "cuda: hidden include spellings" "NVRTC is not available here"
else
    n=$(printf '%s\n' "$out" | grep -c '"verdict":"rejected".*is not allowed')
    if [ "$n" -eq 3 ] && ! grep -q "$token" <<<"$out"; then
        ok "cuda (NVRTC sm_90): trigraph, form-feed and carriage-return includes are rejected"
    else not_ok "cuda: hidden include spellings"; printf '#   %s\n' "${out//$'\n'/$'\n'#   }"; fi
fi

# The sandbox itself: the text check is satisfied (a file of the task folder), the file
# is a symlink leaving it.
tdir="$TMPDIR_TEST/task"
cp -r $task "$tdir"
ln -s "$secret_dir/secret.h" "$tdir/leak.h"
printf '#include "leak.h"\n%s\n' "$body_cl" >"$TMPDIR_TEST/sym.cl"
printf '#include "leak.h"\n%s\n' "$body_cu" >"$TMPDIR_TEST/sym.cu"
denied="Permission denied|cannot open source file" # PoCL's clang, NVRTC
out=$("$SPECGEN" validate "$tdir" "$TMPDIR_TEST/sym.cl" "${lim[@]}" 2>&1)
if grep -qE "$denied" <<<"$out" && ! grep -q "$token" <<<"$out"; then
    ok "opencl: the sandboxed worker cannot open a file outside the task folder"
else not_ok "opencl: sandbox (symlink out of the task folder)"; printf '#   %s\n' "${out//$'\n'/$'\n'#   }"; fi
out=$("$SPECGEN" validate "$tdir" "$TMPDIR_TEST/sym.cu" --device cuda --compile-only --arch sm_90 "${lim[@]}" 2>&1)
if grep -qE "$denied" <<<"$out" && ! grep -q "$token" <<<"$out"; then
    ok "cuda (NVRTC): the sandboxed worker cannot open a file outside the task folder"
elif ! grep -q '"verdict"' <<<"$out"; then
    skip "cuda: sandbox" "NVRTC is not available here"
else not_ok "cuda: sandbox (symlink out of the task folder)"; printf '#   %s\n' "${out//$'\n'/$'\n'#   }"; fi

# Without the sandbox (an explicit opt-out) the log scrub still keeps the secret out.
out=$(SPECGEN_UNSANDBOXED=1 "$SPECGEN" validate "$tdir" "$TMPDIR_TEST/sym.cl" "${lim[@]}" 2>&1)
if grep -q '"verdict":"compile_error"' <<<"$out" && ! grep -q "$token" <<<"$out"; then
    ok "opencl, unsandboxed: the compile log hides the included file's text"
else not_ok "opencl: log scrub"; printf '#   %s\n' "${out//$'\n'/$'\n'#   }"; fi
out=$(SPECGEN_UNSANDBOXED=1 "$SPECGEN" validate "$tdir" "$TMPDIR_TEST/sym.cu" --device cuda --compile-only --arch sm_90 "${lim[@]}" 2>&1)
if ! grep -q '"verdict"' <<<"$out"; then skip "cuda: log scrub" "NVRTC is not available here"
elif grep -q '"verdict":"compile_error"' <<<"$out" && ! grep -q "$token" <<<"$out"; then
    ok "cuda (NVRTC), unsandboxed: the compile log hides the included file's text"
else not_ok "cuda: log scrub"; printf '#   %s\n' "${out//$'\n'/$'\n'#   }"; fi

# A file of the task folder can still be included (OpenCL: it failed before, the -I path
# was quoted and PoCL kept the quotes).
printf '#define SCALE_OF(a, b) ((a) * (b))\n' >"$tdir/helper.h"
printf '#include "helper.h"\n//@launch vector_scale grid=ceil_div(N,256) block=256\n%s\n' \
    "${body_cl/alpha \* x\[i\]/SCALE_OF(alpha, x[i])}" >"$TMPDIR_TEST/helper.cl"
check_output "opencl: a candidate including a file of the task folder passes in the sandbox" \
    '"verdict":"pass"' "$SPECGEN" validate "$tdir" "$TMPDIR_TEST/helper.cl" "${lim[@]}"

# A good candidate still passes in the sandbox (the toolkit, PoCL's cache are reachable).
check_output "opencl: a good candidate passes inside the sandbox" '"verdict":"pass"' \
    "$SPECGEN" validate $task tests/hostile/opencl/good.cl "${lim[@]}"
finish
