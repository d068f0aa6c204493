#!/usr/bin/env bash
# specgen replay-llm served in every dialect, read by specgen llm-check (chat and
# completions); forks answered by reasoning prefix; faults and the client's retries,
# timeouts and error messages; trace errors.
. "$(dirname "$0")/../lib.sh"
TRACE=$SPECGEN_ROOT/prompts/traces/vector_scale.jsonl

start_replay() { # dialect [extra args...]
    local d=$1; shift
    PORT=$(pick_port)
    "$SPECGEN" replay-llm --trace "$TRACE" --listen 127.0.0.1:"$PORT" --speed 20 --dialect "$d" "$@" \
        >"$TMPDIR_TEST/replay.log" 2>&1 &
    RPID=$!
    on_exit "kill $RPID"
    wait_port "$PORT" 10
}
stop_replay() { kill "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null; }
json_field() { python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(json.dumps(v))' "$1"; }

declare -A WANT=([vllm]=vllm [sglang]=sglang [deepseek]=deepseek [llamacpp]=llamacpp [raw]=vllm)
for d in vllm sglang deepseek llamacpp raw; do
    start_replay "$d"
    for api in chat completions; do
        flag=; [ "$api" = completions ] && flag=--completions
        out=$("$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 40 $flag --json 2>&1)
        got=$(printf '%s' "$out" | json_field dialect 2>/dev/null)
        if [ "$api" = chat ]; then want="\"${WANT[$d]}\""; else want=$got; fi
        if [ "$(printf '%s' "$out" | json_field ok 2>/dev/null)" = true ] && [ "$got" = "$want" ]; then
            ok "llm-check reads $d ($api): dialect $got"
        else not_ok "llm-check reads $d ($api)"; printf '#   %s\n' "$out"; fi
        r=$(printf '%s' "$out" | json_field reasoning_chunks 2>/dev/null)
        if [ "${r:-0}" -ge 30 ]; then ok "$d $api: reasoning arrives as reasoning ($r chunks)"; else
            not_ok "$d $api: reasoning arrives as reasoning"; printf '#   %s\n' "$out"; fi
        u=$(printf '%s' "$out" | json_field usage_reported 2>/dev/null)
        if [ "$u" = true ]; then ok "$d $api: usage reported"; else not_ok "$d $api: usage reported"; printf '#   %s\n' "$out"; fi
        s=$(printf '%s' "$out" | json_field server_stopped 2>/dev/null)
        if [ "$d" = deepseek ]; then want_s=null; else want_s=true; fi
        if [ "$s" = "$want_s" ]; then ok "$d $api: abort stops the server's stream (server_stopped $s)"; else
            not_ok "$d $api: abort stops the stream"; printf '#   %s\n' "$out"; fi
    done
    stop_replay
done

# Forks: the answer recorded at the largest offset <= the prefix's length.
start_replay vllm
fork() { # reasoning prefix -> streamed text
    python3 - "$PORT" "$1" <<'PY'
import json, sys, urllib.request
port, prefix = sys.argv[1], sys.argv[2]
body = json.dumps({"model": "replay", "stream": True, "prompt": "Task vector_scale\n<think>\n" + prefix + "\n</think>\n\n"}).encode()
req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body, {"Content-Type": "application/json"})
text = ""
for line in urllib.request.urlopen(req):
    line = line.decode().strip()
    if line.startswith("data: {"):
        text += json.loads(line[6:])["choices"][0]["text"]
print(text)
PY
}
R=$(python3 -c 'import json,sys; print("".join(json.loads(l).get("reasoning","") for l in open(sys.argv[1])))' "$TRACE")
check_output "a fork with no reasoning gets the offset-0 answer" "not decided" fork ""
check_output "a fork early in the reasoning gets no kernel yet" "not decided" fork "${R:0:100}"
upto() { printf '%s' "${R%%"$1"*}$1"; } # the reasoning up to and including $1
check_output "a fork just before the first code block closes gets no kernel" "not decided" fork "$(upto 'no bounds check:')"
check_output "a fork after the first code block gets the 256 kernel" "vector_scale256" \
    fork "$(upto '    y[i] = alpha * x[i];')"$'\n}\n```\n'
check_output "a fork after the float4 code gets the float4 kernel" "vector_scale4\(" fork "$(upto 'stops at n.')"
check_output "a fork with the whole reasoning gets the float16 kernel" "vector_scale16" fork "$R"
check_output "stats count the forks" '"forks":6' curl -s "http://127.0.0.1:$PORT/v1/replay/stats"
check_output "/v1/models lists the trace's model" '"id":"replay"' curl -s "http://127.0.0.1:$PORT/v1/models"
check_output "a non-streaming request is refused clearly" 'streams only' \
    curl -s "http://127.0.0.1:$PORT/v1/chat/completions" -d '{"model":"replay","messages":[]}'
check_output "a bad body is named" 'request body' curl -s "http://127.0.0.1:$PORT/v1/completions" -d '{oops'
stop_replay

# Faults and the client's reaction.
# one run for both checks: its result (--json, stdout) and its log (stderr)
start_replay vllm --fault 429:retry_after=1:times=2
"$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 5 --abort-after 0 --json \
    >"$TMPDIR_TEST/429.out" 2>&1
check_output "429 with Retry-After: retried, then served" '"ok": true' cat "$TMPDIR_TEST/429.out"
check_output "the retries are logged" 'HTTP 429.*retry 2 of 2' cat "$TMPDIR_TEST/429.out"
stop_replay
start_replay vllm --fault 503:times=1
check_output "503 before the first token is retried" '"ok": true' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 5 --abort-after 0 --json
stop_replay
start_replay vllm --fault 503
check_output "persistent 503: a clear error after the retries" 'HTTP 503 \(3 attempts\).*service unavailable' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 5 --abort-after 0
stop_replay
start_replay sglang --fault drop:after=3
check_output "a dropped stream is an error naming the tokens received" 'after 3 tokens' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 20 --abort-after 0
stop_replay
start_replay deepseek --fault malformed:after=4
check_output "a malformed chunk is an error naming the tokens received" 'malformed stream chunk.*after 4 tokens' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 20 --abort-after 0
stop_replay
start_replay vllm --fault stall:after=2:ms=3000
check_output "a stall past the idle timeout is an error" 'idle timeout after 2 tokens' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 20 --abort-after 0 --first-token-timeout 1s
stop_replay
# The idle timeout holds once tokens flow, not only at the first-token deadline (issue 17,
# item 7): a 30 s stall with a 1 s idle and a 40 s first-token timeout ends in about 1 s
# (asserted: before 20 s, so that a loaded machine cannot fail it, and a stall that ran its
# course could not pass; the stall's length costs nothing, the client leaves at 1 s).
start_replay vllm --fault stall:after=2:ms=30000
t0=$(date +%s%N)
check_output "a mid-stream stall ends at the idle timeout, not the first-token one" 'idle timeout after 2 tokens' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 20 --abort-after 0 --first-token-timeout 40s --idle-timeout 1s
check_output "and well before the stall's end" '^(1?[0-9])$' echo $((($(date +%s%N) - t0) / 1000000000))
stop_replay
start_replay vllm --fault stall:after=0:ms=3000
check_output "no first token within the timeout is an error" 'no token within the first-token timeout of 1 s \(--first-token-timeout\)' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 20 --abort-after 0 --first-token-timeout 1s
stop_replay
start_replay sglang --fault abort:after=3
check_output "a server-side abort ends the stream with finish_reason abort" 'finish +abort' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 20 --abort-after 0
stop_replay
# A server that answers a stream request with one JSON object (issue 17, item 14): the
# error names the Content-Type it got and shows the answer's start.
start_replay vllm --fault no_stream
for api in chat completions; do
    flag=; [ "$api" = completions ] && flag=--completions
    check_output "a non-stream answer ($api) names its Content-Type and shows its start" \
        'answered with Content-Type application/json, not text/event-stream .*the answer begins: \{"id":"replay-no-stream"' \
        "$SPECGEN" llm-check --llm "http://127.0.0.1:$PORT" --max-tokens 20 $flag
done
stop_replay
DEAD=$(pick_port)
check_output "nothing listening: retries, then connection refused" "Couldn't connect.*3 attempts" \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$DEAD" --model m --abort-after 0
check_output "the API key is never printed" '^0$' \
    bash -c "SPECGEN_API_KEY=sk-secret-123 $SPECGEN llm-check --llm http://127.0.0.1:$DEAD --model m --abort-after 0 2>&1 | grep -c sk-secret; true"

# Bad inputs.
printf '{"trace": 1}\n{"reasoning": 5}\n' >"$TMPDIR_TEST/bad.jsonl"
check_output "a bad trace line is named with file:line" 'bad.jsonl:2.*reasoning' \
    "$SPECGEN" replay-llm --trace "$TMPDIR_TEST/bad.jsonl" --listen 127.0.0.1:0
printf '{"trace": 1}\n{"answer": "x"}\n{"fork_after": "nowhere", "answer": "y"}\n' >"$TMPDIR_TEST/bad2.jsonl"
check_output "a fork_after text that is not in the reasoning is named" 'bad2.jsonl:3.*nowhere' \
    "$SPECGEN" replay-llm --trace "$TMPDIR_TEST/bad2.jsonl" --listen 127.0.0.1:0
# Found by fuzz_replay_trace: a second header leaked the first's model; a time past the
# 32-bit microseconds of a token delay was undefined behaviour (now refused by name).
printf '{"trace": 1, "model": "a"}\n{"trace": 1, "model": "b"}\n{"answer": "x"}\n' >"$TMPDIR_TEST/two.jsonl"
check_output "a second header line is refused, naming its line" 'two.jsonl:2: a second header line' \
    timeout 5 "$SPECGEN" replay-llm --trace "$TMPDIR_TEST/two.jsonl" --listen 127.0.0.1:0
printf '{"trace": 1}\n{"reasoning": "a b", "ms_per_token": 1e300}\n{"answer": "x"}\n' >"$TMPDIR_TEST/slow.jsonl"
check_output "a time past an hour is refused, naming its line" 'slow.jsonl:2: times must be from 0 to 3600000 ms' \
    timeout 5 "$SPECGEN" replay-llm --trace "$TMPDIR_TEST/slow.jsonl" --listen 127.0.0.1:0
check_fails "an unknown dialect exits 2" 2 "$SPECGEN" replay-llm --trace "$TRACE" --dialect tgi
check_output "a bad fault is explained" 'kind must be drop' "$SPECGEN" replay-llm --trace "$TRACE" --fault boom
check_output "llm-check needs --llm" '--llm URL is required' "$SPECGEN" llm-check
finish
