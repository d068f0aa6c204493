#!/usr/bin/env bash
# validator/gpu-check.sh — on a machine with an NVIDIA GPU: validate every builtin and
# demo CUDA task (baseline against reference, real runs) and the CUDA hostile set, and
# print a table. Run through `make gpu-check` (which builds first). Record the outcome in
# docs/gpu-checks.md. Exit status 0 only when everything is as expected.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
SPECGEN=${SPECGEN:-$root/bin/specgen}
. scripts/gpu-check-lib.sh
need_gpu validator
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
fail=0
printf '\n%-32s %-10s %10s %10s  %s\n' "task (cuda)" "verdict" "compile ms" "run ms" "message"
for t in suites/builtin/*/ suites/demo/*/; do
    j=$("$SPECGEN" validate "$t" --device cuda --json --timeout 60s 2>&1 | tail -n 1)
    row=$(python3 -c '
import json, sys
try:
    j = json.loads(sys.argv[1])
    print("%-10s %10.1f %10.1f  %s" % (j["verdict"], j["compile_ms"], j["run_ms"], j["message"][:80]))
except Exception:
    print("%-10s %10s %10s  %s" % ("error", "-", "-", sys.argv[1][:80]))
' "$j")
    printf '%-32s %s\n' "${t%/}" "$row"
    case $row in pass*) ;; *) fail=1 ;; esac
done
echo
mapfile -t cu < <(ls tests/hostile/cuda/*.cu)
"$SPECGEN" validate suites/demo/vector_scale "${cu[@]}" --device cuda --json --timeout 3s \
    --compile-timeout 8s --seed 7 2>&1 | python3 tests/hostile/check_verdicts.py "${cu[@]}" || fail=1
echo
if [ $fail -eq 0 ]; then echo "gpu-check (validator): all as expected"; else echo "gpu-check (validator): FAILURES above"; fi
exit $fail
