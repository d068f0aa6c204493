#!/usr/bin/env bash
# Campaign admission against a server with a modelled KV cache (issue 30): replay-llm
# --kv-tokens 700 (about one task's stream: prompt ~290 tokens + reasoning ~400) serves 12
# copies of the demo tasks run by `campaign --admission auto` (decisions every second). The
# server's /metrics carry vLLM's cache names and it preempts streams; the campaign reads the
# usage, its limit grows while the cache has room, every decision is recorded as an
# "admission" event with its reason, and all tasks end. Whether the limit then falls depends
# on how many preemptions land in one interval: with the demo traces (short streams next to
# OpenCL validation) it did in two of four runs (16 -> 9; 3 back-offs), so it is reported, not asserted
# (the fall itself is tests/unit/test_admit.c's step in load, and docs/eval.md's study).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "admission against replay-llm --kv-tokens"
t=$TMPDIR_TEST
mkdir -p "$t/suite"
for name in relu_bias row_sum vector_scale; do
    for i in 1 2 3 4; do cp -r "suites/demo/$name" "$t/suite/${name}_$i"; done
done
PORT=$(pick_port)
"$SPECGEN" replay-llm --trace prompts/traces --listen 127.0.0.1:"$PORT" --kv-tokens 700 \
    >"$t/replay.log" 2>&1 &
RPID=$!
on_exit "kill $RPID"
wait_port "$PORT" 10 || { not_ok "replay-llm --kv-tokens starts"; finish; }
check_output "replay-llm --kv-tokens reports vLLM's cache usage on /metrics" \
    '^vllm:kv_cache_usage_perc\{model_name="replay"\} 0\.0000$' \
    curl -s "http://127.0.0.1:$PORT/metrics"
check_output "... and its preemptions and waiting requests" \
    '^vllm:num_requests_waiting\{model_name="replay"\} 0$' curl -s "http://127.0.0.1:$PORT/metrics"

db=$t/r.db
timeout 400 "$SPECGEN" campaign "$t/suite" --llm "http://127.0.0.1:$PORT/v1" --model replay \
    --concurrency 12 --admission-interval 1s --device opencl --iterations 2 --db "$db" \
    --out "$t/out" >"$t/c.out" 2>"$t/c.err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "campaign --admission auto runs to its end"; else
    not_ok "campaign --admission auto runs to its end (exit $rc)"
    sed 's/^/#   /' "$t/c.err" | tail -20
fi
check_output "every task ended" '12 tasks: 12 done' cat "$t/c.err"
q() { sqlite3 "$db" "$1" 2>&1; }
ev="json_extract(data,'\$.ev')='admission'"
check_output "decisions are recorded as admission events" '^[1-9][0-9]*$' q "SELECT count(*) FROM event WHERE $ev"
check_output "the limit grew while the cache had room" '^[1-9]' \
    q "SELECT count(*) FROM event WHERE $ev AND json_extract(data,'\$.reason')='grow'"
check_output "the campaign read the cache's usage" '^0*\.[0-9]*[1-9]|^1' \
    q "SELECT max(json_extract(data,'\$.kv_usage')) FROM event WHERE $ev"
fell=$(q "SELECT count(*) FROM event WHERE $ev AND json_extract(data,'\$.limit') < json_extract(data,'\$.previous')")
echo "# back-offs in this run: $fell (reported, not asserted: see the top)"
check_output "the server preempted streams" '^vllm:num_preemptions_total\{model_name="replay"\} [1-9]' \
    curl -s "http://127.0.0.1:$PORT/metrics"
check_output "each move is said on stderr" 'admission: [0-9]+ -> [0-9]+ tasks \((grow|preemptions|queue|throughput)\)' \
    cat "$t/c.err"

check_fails "--admission fixed:0 is a usage error" 2 "$SPECGEN" campaign "$t/suite" --admission fixed:0
check_output "... naming the value" "'fixed:0' is not an admission policy" \
    "$SPECGEN" campaign "$t/suite" --admission fixed:0
finish
