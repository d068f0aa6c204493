#!/usr/bin/env bash
# Remote slots recovering from agents that stall (#18): an agent stopped (SIGSTOP) mid-job
# is found lost within --pool-timeout and its job re-queued on the other agent; when it
# continues (SIGCONT) its late result is ignored and nothing is counted twice. A client
# that missed more events than the agent keeps (> 4096) reads its jobs' state back from
# the agent (or runs them again) instead of waiting forever for an end it will never see.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "pool agents on PoCL"
. "$SPECGEN_ROOT/tests/integration/agent_lib.bash"

# ---- an agent that stops answering ----
start_agent c --token-file "$out/token"
start_agent d --token-file "$out/token"
optimize_bg stop 3 "http://127.0.0.1:$port_c,http://127.0.0.1:$port_d"
# Stop the agent that runs the first job (the baseline: a second or so on a fresh agent),
# once it really runs it.
victim= vport=
for ((i = 0; i < 600 && !victim; i++)); do
    for p in c d; do
        eval "port=\$port_$p"
        if agent_status "$port" | grep -q '"running":1'; then
            eval "victim=\$pid_$p"
            vport=$port
            break
        fi
    done
    [ -n "$victim" ] || sleep 0.05
done
kill -STOP "$victim"
t0=$(date +%s.%N)
wait_for "$out/stop.log" "pool agent 127.0.0.1:$vport lost" 30
lost_s=$(echo "$(date +%s.%N) - $t0" | bc)
kill -CONT "$victim"
wait $opt
# Bounded at 12 s, not 5: a loaded machine delays the client's timer and this script's
# polling of the log, and the check is that the timeout ends the wait, not how precisely.
check_output "an agent stopped mid-job (SIGSTOP) is lost within --pool-timeout (5 s, + slack): ${lost_s} s" \
    '^ok' bash -c "echo '$lost_s' | awk '{ print (\$1 < 12) ? \"ok\" : \"too slow\" }'"
check_output "  ... its running job re-queued" \
    "pool agent 127.0.0.1:$vport lost .*1 running job re-queued" cat "$out/stop.log"
check_output "  ... and run again on the other agent" \
    '"requeued":1,"ev":"job_start"' bash -c "grep '\"requeued\":1' '$out/stop/events.jsonl' |
        grep -v '127.0.0.1:$vport/'"
check_output "  ... it comes back after SIGCONT" "pool agent 127.0.0.1:$vport is back" \
    cat "$out/stop.log"
check_output "  ... and the result it then sent for the job taken back is ignored" \
    "pool agent 127.0.0.1:$vport: job .* ended there after it was taken back.*ignored" \
    cat "$out/stop.log"
check_output "  ... the run ends; every job ended once, every candidate once (events and DB)" \
    "requeued 1, .*problems: none" python3 $client - - check-run "$out/stop/events.jsonl" \
    "$out/stop.db"

# ---- a client that misses more events than the agent keeps ----
# Agent g has two slots. The client's first job runs on one; its worker is stopped to hold
# it there, and the client is stopped. Once the client's pending long-poll has been answered
# (the agent cuts its wait to --max-poll-wait 1s; the answer then lies unread in the stopped
# client's socket), the worker goes on and the job ends; then 4200 other events (jobs of
# another client, queued behind a held job on the other slot and cancelled) push that end
# out of the agent's ring. The client, continued, is told of the gap and must ask for its
# job's state: without that it would wait for the end forever (the run would not end).
start_agent g --token-file "$out/token" --slots-per-device 2 --max-jobs 8 --max-poll-wait 1s
optimize_bg gap 3 "http://127.0.0.1:$port_g" --pool-timeout 120s
wait_running "$port_g" 1
jworker=$(pgrep -P "$pid_g")
kill -STOP $jworker "$opt"
on_exit "kill -CONT $jworker 2>/dev/null"
# the other slot: a job of another client, held by stopping its worker
bslot=$(agent_status "$port_g" | python3 -c 'import json,sys
print([s["slot"] for s in json.load(sys.stdin)["slots"] if not s["busy"]][0])')
python3 $client "http://127.0.0.1:$port_g" "$token" pin $task "$bslot" blocker >/dev/null
wait_running "$port_g" 2
bworker=$(pgrep -P "$pid_g" | grep -vx "$jworker")
kill -STOP $bworker
on_exit "kill -CONT $bworker 2>/dev/null"
# the stopped client has an answer from agent g it has not read: its long-poll's
for ((i = 0; i < 400; i++)); do
    ss -Htnp state established "( dport = :$port_g )" |
        awk -v p="pid=$opt," '$1 > 0 && index($0, p) { f = 1 } END { exit !f }' && break
    sleep 0.05
done
kill -CONT $jworker
for ((i = 0; i < 200; i++)); do
    agent_status "$port_g" | grep -q '"running":1[,}]' && break
    sleep 0.05
done
check_output "4200 events of another client after the client's job ended" '^event_seq' \
    python3 $client "http://127.0.0.1:$port_g" "$token" burst $task "$bslot" 4200
kill -CONT "$opt"
python3 $client "http://127.0.0.1:$port_g" "$token" cancel blocker >/dev/null
kill -CONT $bworker 2>/dev/null
timeout 120 tail --pid="$opt" -f /dev/null
check_output "the client is told of the gap and asks for its running job" \
    "pool agent 127.0.0.1:$port_g dropped events before we read them: asking it for the state of 1 running job" \
    cat "$out/gap.log"
# 4200 jobs ended after it: the agent no longer holds the job (it keeps the last 1024 ended
# jobs), so the job runs again (with fewer, its result would be read from the agent)
check_output "  ... the agent no longer knows the job, whose end was missed: it is re-queued" \
    "no longer knows job .* \(its end was among the missed events\): re-queued" cat "$out/gap.log"
check_output "  ... and the run ends" "== specgen optimize: done" cat "$out/gap.log"
check_output "  ... every job ended once, every candidate once (events and DB)" \
    "requeued 1, .*problems: none" python3 $client - - check-run "$out/gap/events.jsonl" \
    "$out/gap.db"
finish
