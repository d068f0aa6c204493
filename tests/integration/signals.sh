#!/usr/bin/env bash
# A second SIGTERM forces an exit while a job hangs (issue 17, item 12): the scripted
# model answers with a kernel that passes validation (outputs poisoned with NaN before
# each run) and hangs in profiling (outputs not poisoned). The first SIGTERM waits for the
# running job; the second kills the workers and exits 130 at once, for optimize and
# campaign.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "second signal on PoCL"
t=$TMPDIR_TEST
python3 - "$t/hang.jsonl" <<'PY'
import json, sys
k = """```opencl
//@launch vector_scale grid=ceil_div(N,256) block=256
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    if (!isnan(y[i])) /* validation poisons outputs with NaN before each run; profiling does not */
        while (alpha > -1.0f) { y[i] = y[i] + 0.0f * x[i]; if (y[0] == 12345.0f) break; }
    y[i] = alpha * x[i];
}
```"""
lines = [{"trace": 1, "model": "replay", "ms_per_token": 1, "first_token_ms": 50},
         {"reasoning": "Use work-groups of 256."}, {"answer": "Here it is.\n\n" + k + "\n"}]
open(sys.argv[1], "w").write("".join(json.dumps(l) + "\n" for l in lines))
PY
printf '{"tasks": ["%s"]}\n' "$SPECGEN_ROOT/suites/demo/vector_scale" >"$t/suite.json"

# NAME OUT: after the first SIGTERM it still runs (the job hangs); after the second it
# exits 130 within 5 s and leaves no process with OUT on its command line.
two_signals() {
    local name=$1 out=$2 pid=$3 n
    for _ in $(seq 300); do
        grep -qs '"kind":"profile".*"name":"Candidate 1",.*"ev":"job_start"' "$out"/events.jsonl \
            "$out"/*/events.jsonl && break
        sleep 0.1
    done
    sleep 0.5
    kill -TERM "$pid"
    sleep 2
    if kill -0 "$pid" 2>/dev/null; then ok "$name: the first SIGTERM waits for the hanging job"; else
        not_ok "$name: the first SIGTERM waits for the hanging job (it exited)"; fi
    local t0=$SECONDS
    kill -TERM "$pid"
    wait "$pid"
    local rc=$?
    if [ $rc -eq 130 ] && [ $((SECONDS - t0)) -le 5 ]; then ok "$name: the second SIGTERM exits 130 at once"; else
        not_ok "$name: the second SIGTERM exits 130 at once (rc $rc after $((SECONDS - t0)) s)"; fi
    sleep 0.5
    n=$(pgrep -fc -- "$out" || true)
    if [ "$n" = 0 ]; then ok "$name: no worker is left"; else not_ok "$name: no worker is left ($n)"; fi
}

"$SPECGEN" optimize suites/demo/vector_scale --device opencl --policy sequential \
    --trace "$t/hang.jsonl" --out "$t/opt" >"$t/opt.log" 2>&1 &
two_signals optimize "$t/opt" $!
check_output "optimize: the second signal is said" "Terminated again — killing the workers" cat "$t/opt.log"
check "optimize: best.cl (the baseline) was kept" test -s "$t/opt/best.cl"

"$SPECGEN" campaign "$t/suite.json" --device opencl --policy sequential --concurrency 1 \
    --trace "$t/hang.jsonl" --db "$t/c.db" --out "$t/camp" >"$t/camp.log" 2>&1 &
two_signals campaign "$t/camp" $!
check_output "campaign: the second signal is said" "Terminated again — killing the workers" cat "$t/camp.log"
finish
