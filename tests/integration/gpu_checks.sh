#!/usr/bin/env bash
# The GPU-check plumbing on a machine without a GPU: the one loop (scripts/run-gpu-checks.sh,
# behind make gpu-check and the device script) must say "nothing was checked" and exit 2;
# the device script must refuse a missing bundle clearly and log under $OUT; the bundle
# checker must reject a program whose libraries resolve outside the bundle.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
if [ -e /dev/nvidiactl ] || command -v nvidia-smi >/dev/null; then
    skip "no-GPU semantics of the GPU-check loop" "this machine has an NVIDIA GPU: run make gpu-check"
else
    check_fails "the loop exits 2 when every script skipped" 2 \
        env SPECGEN="$SPECGEN" BUILD="$BUILD" scripts/run-gpu-checks.sh
    check_output "and says nothing was checked, one skip line per script" \
        'skip +kvstore/gpu-check.sh.*skip +profiler/gpu-check.sh.*skip +validator/gpu-check.sh.*nothing was checked' \
        bash -c "SPECGEN='$SPECGEN' BUILD='$BUILD' scripts/run-gpu-checks.sh | tr '\n' ' '"
fi
# Without a GPU each script stops at need_gpu, so bash has not read the rest: parse it all.
check "every */gpu-check.sh and the loop parse (bash -n)" \
    bash -c 'for f in */gpu-check.sh scripts/run-gpu-checks.sh; do bash -n "$f" || exit 1; done'
check_fails "GPU_CHECKS naming no module exits 1" 1 \
    env SPECGEN="$SPECGEN" GPU_CHECKS=nosuchmodule scripts/run-gpu-checks.sh
check_output "and names it" 'no nosuchmodule/gpu-check.sh' \
    env SPECGEN="$SPECGEN" GPU_CHECKS=nosuchmodule scripts/run-gpu-checks.sh

out=$TMPDIR_TEST/out
check_fails "the device script without a bundle exits 1" 1 \
    env GPU_BUNDLE="$TMPDIR_TEST/none" OUT="$out" bash scripts/gpu-check-device.sh
check_output "and says to run make gpu-bundle and carry .gpu, in \$OUT/gpu-check.log too" \
    'run make gpu-bundle first.*carry .gpu' cat "$out/gpu-check.log"

fake=$TMPDIR_TEST/bundle
mkdir -p "$fake/lib" "$fake/build/gpu"
cp "$SPECGEN" "$fake/specgen"
check_fails "the bundle check rejects a specgen whose libraries come from the system" 1 \
    scripts/gpu-bundle.sh --check "$fake"
check_output "and names the library" 'specgen needs libjansson.so.4.*not in' \
    scripts/gpu-bundle.sh --check "$fake"
finish
