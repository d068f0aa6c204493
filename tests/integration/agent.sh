#!/usr/bin/env bash
# `specgen pool` agents and remote slots on loopback (PoCL): the agent's refusals (no token
# beyond loopback, 401 without the token, 413, 429), TLS with a self-signed certificate,
# `optimize --pool` spreading jobs over two agents, and an agent killed mid-job whose job
# is re-queued on the other, every job and candidate counted once (events and results DB).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "pool agents on PoCL"
. "$SPECGEN_ROOT/tests/integration/agent_lib.bash"

check_fails "beyond loopback without a token: refused, exit 2" 2 \
    "$SPECGEN" pool --listen 0.0.0.0:0 --devices opencl:0
check_output "  ... and says why" "refusing to listen beyond loopback without --token-file" \
    "$SPECGEN" pool --listen 0.0.0.0:0 --devices opencl:0
check_output "a bad --devices names it" "--devices: unknown device 'gpu'" \
    "$SPECGEN" pool --devices gpu:x

start_agent a --token-file "$out/token" --max-body 64k --max-jobs 2
start_agent b --token-file "$out/token" --max-body 64k
check "agent a answers its status with the token" \
    curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$port_a/v1/status"
check_multi "no token: 401 with a message" 'needs its token.*status 401' \
    curl -s -w 'status %{http_code}' "http://127.0.0.1:$port_a/v1/status"
check_output "/metrics needs it too" '^401' \
    curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_a/metrics"
check_output "a wrong token: 401" '^401' \
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer x$token" \
    "http://127.0.0.1:$port_a/v1/status"
check_output "an unauthenticated job changes nothing" '"queued":0,"running":0' \
    bash -c "curl -s -X POST -d '{\"kind\":\"validate\"}' http://127.0.0.1:$port_a/v1/jobs >/dev/null;
             curl -s -H 'Authorization: Bearer $token' http://127.0.0.1:$port_a/v1/status"
check_output "a body over --max-body: 413 with a message" '^413 .*--max-body' \
    python3 $client "http://127.0.0.1:$port_a" "$token" big 100000
check_output "jobs beyond --max-jobs: 429 with a message" '^as expected' \
    bash -c "python3 $client http://127.0.0.1:$port_a $token submit $task 3 | awk '
        NR <= 2 && \$1 != 202 { bad = 1 }
        NR == 3 && \$1 == 429 && /too many jobs in flight/ { ok = 1 }
        END { print (ok && !bad) ? \"as expected\" : \"unexpected\" }'"
python3 $client "http://127.0.0.1:$port_a" "$token" cancel t-0 t-1 >/dev/null
check_output "/metrics: slot roles, busy time, jobs by verdict, queue-wait histogram" \
    'specgen_agent_queue_wait_seconds_bucket\{role="validate",le="\+Inf"\} [1-9]' \
    curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port_a/metrics"

check "optimize --pool with two agents (and no local slots)" \
    "$SPECGEN" optimize $task --device opencl --no-local --speed 10 --db none --out "$out/spread" \
    --pool "http://127.0.0.1:$port_a,http://127.0.0.1:$port_b" --pool-token-file "$out/token"
check_output "  ... ran jobs on both agents, each job once" \
    "agents 127.0.0.1:$port_a 127.0.0.1:$port_b|agents 127.0.0.1:$port_b 127.0.0.1:$port_a" \
    python3 $client - - check-run "$out/spread/events.jsonl"
check_output "  ... and names their slots in the summary's events" \
    "\"slot_name\":\"127.0.0.1:$port_b/opencl:0/0\"" cat "$out/spread/events.jsonl"
check_output "  ... /metrics per slot: one role each, busy seconds > 0 where jobs ended, a pass" \
    '^per-slot series as expected' python3 tests/integration/agent_metrics.py "$out/token" \
    "http://127.0.0.1:$port_a" "http://127.0.0.1:$port_b"
printf 'http://127.0.0.1:%s\n# a comment\nhttp://127.0.0.1:%s/\n' "$port_a" "$port_b" \
    >"$out/agents.txt"
check_output "--pool @FILE reads the URLs" "pools: +3 slots" \
    "$SPECGEN" optimize $task --device opencl --speed 10 --db none --out "$out/file" \
    --pool "@$out/agents.txt" --pool-token-file "$out/token"
check_output "--no-local without --pool is a usage error" "--no-local needs --pool" \
    "$SPECGEN" optimize $task --no-local
check_output "--pool without the token says the agent wants one" "the agent wants a token" \
    "$SPECGEN" optimize $task --device opencl --db none --out "$out/notoken" \
    --pool "http://127.0.0.1:$port_a"

# Kill the agent that runs the first job (the baseline, seconds on a fresh agent's PoCL):
# that job must run again on the other agent, and nothing may be counted twice.
start_agent c --token-file "$out/token"
start_agent d --token-file "$out/token"
optimize_bg kill 3 "http://127.0.0.1:$port_c,http://127.0.0.1:$port_d"
for ((i = 0; i < 200; i++)); do
    grep -q '"job_start"' "$out/kill/events.jsonl" 2>/dev/null && break
    sleep 0.05
done
first=$(grep -m1 -o '"slot_name":"127.0.0.1:[0-9]*' "$out/kill/events.jsonl" | grep -o '[0-9]*$')
victim=$([ "$first" = "$port_c" ] && echo "$pid_c" || echo "$pid_d")
kill -9 "$victim"
wait $opt
check_output "killing an agent mid-job: the run still ends" "== specgen optimize: done" \
    cat "$out/kill.log"
check_output "  ... the client says the agent was lost and its job re-queued" \
    "pool agent 127.0.0.1:$first lost .*1 running job re-queued" cat "$out/kill.log"
check_output "  ... the job ran again on the other agent" \
    '"requeued":1,"ev":"job_start"' bash -c "grep '\"requeued\":1' '$out/kill/events.jsonl' |
        grep -v '127.0.0.1:$first/'"
check_output "  ... every job ended once, every candidate counted once (events and DB)" \
    "requeued 1, .*problems: none" python3 $client - - check-run "$out/kill/events.jsonl" \
    "$out/kill.db"

# TLS: a self-signed certificate for 127.0.0.1, made here.
if openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$out/key.pem" -out "$out/cert.pem" \
    >/dev/null 2>&1; then
    start_agent tls --token-file "$out/token" --tls-cert "$out/cert.pem" --tls-key "$out/key.pem"
    check_output "TLS: the agent answers over https (curl --cacert)" '"lang":"opencl"' \
        curl -s --cacert "$out/cert.pem" -H "Authorization: Bearer $token" \
        "https://127.0.0.1:$port_tls/v1/status"
    check_output "  ... and not over plain http" '^000' \
        curl -s -o /dev/null -w '%{http_code}' -m 2 "http://127.0.0.1:$port_tls/v1/status"
    check_output "  ... optimize --pool https:// with --pool-cacert" "pools: +1 slot" \
        "$SPECGEN" optimize $task --device opencl --no-local --speed 10 --db none \
        --out "$out/tls" --pool "https://127.0.0.1:$port_tls" --pool-token-file "$out/token" \
        --pool-cacert "$out/cert.pem"
else
    skip "TLS" "openssl could not make a certificate"
fi
finish
