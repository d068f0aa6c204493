#!/usr/bin/env bash
# Campaign admission against a server with a modelled KV cache (issue 30): replay-llm
# --kv-tokens 700 (about one task's stream: prompt ~290 tokens + reasoning ~400) serves 9
# copies of the demo tasks run by `campaign --admission auto` (decisions every second). The
# server's /metrics carry vLLM's cache names and it preempts streams; the campaign reads the
# usage, its limit grows while the cache has room (9 tasks: one more than the first limit,
# 8, so that it binds), every decision is recorded as an "admission" event with its reason,
# all tasks end, and the limit falls under the cache's pressure: with 9 tasks active, one
# preemption in an interval is more than preempt_share (0.1) x active, so the first
# preemption a decision sees backs off (with 12 tasks it took two in one second, and the
# fall came in half the runs only). One iteration a task: admission acts at iteration
# boundaries and at the tasks' starts, and every job costs a worker start (each task's
# folder has its own sandboxed worker), so the second iteration only made the run longer.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "admission against replay-llm --kv-tokens"
t=$TMPDIR_TEST
mkdir -p "$t/suite"
for name in relu_bias row_sum vector_scale; do
    for i in 1 2 3; do cp -r "suites/demo/$name" "$t/suite/${name}_$i"; done
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
    --concurrency 9 --admission-interval 1s --device opencl --iterations 1 --db "$db" \
    --out "$t/out" >"$t/c.out" 2>"$t/c.err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "campaign --admission auto runs to its end"; else
    not_ok "campaign --admission auto runs to its end (exit $rc)"
    sed 's/^/#   /' "$t/c.err" | tail -20
fi
check_output "every task ended" '9 tasks: 9 done' cat "$t/c.err"
q() { sqlite3 "$db" "$1" 2>&1; }
ev="json_extract(data,'\$.ev')='admission'"
check_output "decisions are recorded as admission events" '^[1-9][0-9]*$' q "SELECT count(*) FROM event WHERE $ev"
check_output "the limit grew while the cache had room" '^[1-9]' \
    q "SELECT count(*) FROM event WHERE $ev AND json_extract(data,'\$.reason')='grow'"
check_output "the campaign read the cache's usage" '^0*\.[0-9]*[1-9]|^1' \
    q "SELECT max(json_extract(data,'\$.kv_usage')) FROM event WHERE $ev"
# a fall: a decision whose limit is below the one before it, for the cache's pressure
# (preemptions or the waiting queue), not for the token rate
check_output "the limit fell under the cache's pressure (preemptions or the waiting queue)" '^[1-9]' \
    q "SELECT count(*) FROM event WHERE $ev AND json_extract(data,'\$.limit') < json_extract(data,'\$.previous')
       AND json_extract(data,'\$.reason') IN ('preemptions','queue')"
# the moves, for the log: previous->limit reason active preempted kv_usage
j() { printf "json_extract(data,'\$.%s')" "$1"; }
echo "# decisions:" $(q "SELECT $(j previous)||'->'||$(j limit)||' '||$(j reason)||' '||$(j active)||' '||
    $(j preempted)||' '||$(j kv_usage)||';' FROM event WHERE $ev AND $(j reason) NOT IN
    ('no_demand','draining','cache_full')")
check_output "the server preempted streams" '^vllm:num_preemptions_total\{model_name="replay"\} [1-9]' \
    curl -s "http://127.0.0.1:$PORT/metrics"
check_output "each move is said on stderr" 'admission: [0-9]+ -> [0-9]+ tasks \((grow|preemptions|queue|throughput)\)' \
    cat "$t/c.err"

check_fails "--admission fixed:0 is a usage error" 2 "$SPECGEN" campaign "$t/suite" --admission fixed:0
check_output "... naming the value" "'fixed:0' is not an admission policy" \
    "$SPECGEN" campaign "$t/suite" --admission fixed:0
finish
