#!/usr/bin/env bash
# The hostile set: every candidate in tests/hostile/ gets its expected verdict from one
# pool (one worker, replaced after crashes and hangs), and a good candidate still passes
# afterwards. OpenCL runs for real on PoCL; CUDA is compile-only here unless a GPU exists.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
task=suites/demo/vector_scale
# --run-timeout 2s: the hanging candidates each cost it; the others run in milliseconds
limits=(--run-timeout 2s --compile-timeout 8s --seed 7)

mapfile -t cl < <(ls tests/hostile/opencl/*.cl | grep -v /good.cl)
out=$("$SPECGEN" validate $task "${cl[@]}" tests/hostile/opencl/good.cl --json "${limits[@]}" 2>&1)
table=$(printf '%s\n' "$out" | python3 tests/hostile/check_verdicts.py "${cl[@]}" tests/hostile/opencl/good.cl)
rc=$?
printf '%s\n' "$table" | sed 's/^/# /'
if [ $rc -eq 0 ]; then ok "opencl: ${#cl[@]} hostile candidates get their verdicts, then good.cl passes"; else
    not_ok "opencl: hostile verdicts"; fi
check_output "opencl: at least 15 hostile candidates" '^1[5-9]|^[2-9][0-9]' echo "${#cl[@]}"
check_output "opencl: every verdict has a message" '"message":"[^"]' bash -c "printf '%s\n' \"\$1\" | head -1" _ "$out"

mapfile -t cu < <(ls tests/hostile/cuda/*.cu)
out=$("$SPECGEN" validate $task "${cu[@]}" --device cuda --compile-only --arch sm_90 --json "${limits[@]}" 2>&1)
table=$(printf '%s\n' "$out" | python3 tests/hostile/check_verdicts.py --compile-only "${cu[@]}")
rc=$?
printf '%s\n' "$table" | sed 's/^/# /'
if [ $rc -eq 0 ]; then ok "cuda (compile-only, NVRTC sm_90): compile-phase verdicts as expected"; else
    not_ok "cuda compile-only hostile verdicts"; fi
if [ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ]; then
    out=$("$SPECGEN" validate $task "${cu[@]}" --device cuda --json "${limits[@]}" 2>&1)
    if printf '%s\n' "$out" | python3 tests/hostile/check_verdicts.py "${cu[@]}" >/dev/null; then
        ok "cuda (GPU): hostile verdicts"; else not_ok "cuda (GPU): hostile verdicts"; fi
else
    skip "cuda (GPU): hostile verdicts on a real run" "no NVIDIA GPU on this machine"
fi
finish
