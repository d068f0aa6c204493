#!/usr/bin/env bash
# validator/gpu-check.sh — on a machine with an NVIDIA GPU: validate every builtin and
# demo CUDA task and the task-type fixtures (f16, bf16, fp8, inout; baseline against
# reference, real runs), their CUDA candidates, the builtin suite's wrong CUDA candidates
# (each must be a mismatch), the CUDA hostile set, and the own-kernel fixtures
# (tests/fixtures/byok/*.cu: task init with the README's hint, validate, profile the
# baseline against itself), and print a table. Run through `make gpu-check` (which
# builds first). Record the outcome in docs/gpu-checks.md. Exit status 0 only when
# everything is as expected.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
SPECGEN=${SPECGEN:-$root/bin/specgen}
. scripts/gpu-check-lib.sh
need_gpu validator
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
fail=0
printf '\n%-32s %-10s %10s %10s  %s\n' "task (cuda)" "verdict" "compile ms" "run ms" "message"
types=$(ls -d tests/fixtures/types/*/ | grep -v out_read) # out_read is invalid on purpose
for t in suites/builtin/*/ suites/demo/*/ $types; do
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
# Candidates of the type fixtures: TASK CANDIDATE VERDICT [TEXT the message must hold].
while read -r t c want text; do
    j=$("$SPECGEN" validate tests/fixtures/types/$t tests/fixtures/types/$t/$c --device cuda --json \
        --timeout 60s 2>&1 | tail -n 1)
    ok=$(python3 -c '
import json, sys
j = json.loads(sys.argv[1])
print("ok" if j["verdict"] == sys.argv[2] and sys.argv[3] in j["message"] else "NOT " + j["verdict"] + ": " + j["message"][:100])
' "$j" "$want" "${text:-}" 2>&1)
    printf '%-32s %-10s %s\n' "$t/$c" "$want" "$ok"
    [ "$ok" = ok ] || fail=1
done <<'EOF'
f16_axpb half_math.cu pass
bf16_rmsnorm bf16_accumulate.cu mismatch accumulating in bf16
fp8_quant no_scale.cu mismatch
inout_axpy baseline.cu pass
EOF
# The builtin suite's wrong candidates (tests/fixtures/builtin_wrong/<task>/*.cu, one worker
# per task): each must be a mismatch on the GPU as it is on PoCL (fp8 ones only run here).
for d in tests/fixtures/builtin_wrong/*/; do
    t=$(basename "$d")
    mapfile -t cands < <(ls "$d"*.cu)
    "$SPECGEN" validate "suites/builtin/$t" "${cands[@]}" --device cuda --json --timeout 60s 2>&1 |
        python3 -c '
import json, sys
bad = 0
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    j = json.loads(line)
    ok = j["verdict"] == "mismatch"
    bad |= not ok
    print("%-32s %-10s %s" % (j["candidate"].split("builtin_wrong/")[-1], "mismatch",
          "ok" if ok else "NOT " + j["verdict"] + ": " + j["message"][:100]))
sys.exit(bad)
' || fail=1
done
echo
mapfile -t cu < <(ls tests/hostile/cuda/*.cu)
"$SPECGEN" validate suites/demo/vector_scale "${cu[@]}" --device cuda --json --timeout 3s \
    --compile-timeout 8s --seed 7 2>&1 | python3 tests/hostile/check_verdicts.py "${cu[@]}" || fail=1
echo
# The own kernels (tests/fixtures/byok/*.cu): init with the README table's hint, then
# validate (baseline against reference) and time the baseline against itself.
. tests/integration/byok_lib.bash
byok_tmp=$(mktemp -d)
trap 'rm -rf "$byok_tmp"' EXIT
printf '%-32s %-6s %-10s %12s %9s  %s\n' "own kernel (cuda)" "init" "validate" "median ms" "speedup" "result"
byok_n=0 byok_ok=0
for f in "$byok_fx"/*.cu; do
    b=$(basename "$f")
    d=$byok_tmp/${b%.cu}
    byok_n=$((byok_n + 1))
    if ! out=$(byok_init "$f" "$d" 2>&1); then
        printf '%-32s %-6s %-10s %12s %9s  %s\n' "$b" FAIL - - - "FAIL: init: $(echo "$out" | tail -n 1 | cut -c1-100)"
        fail=1
        continue
    fi
    v=$("$SPECGEN" validate "$d" --device cuda --json --timeout 60s 2>&1 | tail -n 1)
    p=$("$SPECGEN" profile "$d" "$d/baseline.cu" --device cuda --json --timeout 60s 2>&1 | tail -n 1)
    row=$(python3 -c '
import json, sys
def load(s):
    try:
        return json.loads(s)
    except Exception:
        return {"verdict": "error", "message": s}
v, p = load(sys.argv[2]), load(sys.argv[3])
c = p.get("candidate") if isinstance(p.get("candidate"), dict) else {}
ok = v.get("verdict") == "pass" and p.get("verdict") == "pass" and "median_ns" in c
why = "" if ok else (v if v.get("verdict") != "pass" else p).get("message", "")[:90]
med = "%.4f" % (c["median_ns"] / 1e6) if "median_ns" in c else "-"
spd = "%.3f" % p["speedup"] if "speedup" in p else "-"
print("%-32s %-6s %-10s %12s %9s  %s" % (sys.argv[1], "ok", v.get("verdict"), med, spd,
      "pass" if ok else "FAIL: " + why))
sys.exit(0 if ok else 1)
' "$b" "$v" "$p") || fail=1
    echo "$row"
    case $row in *"  pass") byok_ok=$((byok_ok + 1)) ;; esac
done
echo "own kernels: $byok_ok of $byok_n passed init + validate + profile"
echo
if [ $fail -eq 0 ]; then echo "gpu-check (validator): all as expected"; else echo "gpu-check (validator): FAILURES above"; fi
exit $fail
