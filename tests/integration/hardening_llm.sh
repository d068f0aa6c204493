#!/usr/bin/env bash
# Issue 24, items 4 and part of 9: a stalled LLM server is said (a warning while the first
# token is late, an error naming --first-token-timeout and its value, a count in the
# summaries); one rule for 0 in numeric options; usage errors for --policy probe:0,
# --workload /nonexistent and a malformed --llm URL.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
t=$TMPDIR_TEST
task=suites/demo/vector_scale

# ---- 24.4: a server that accepts and never answers ----
need_opencl "a stalled LLM server (the task's baseline runs on OpenCL)"
# A listener on loopback that accepts every connection and never writes a byte.
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
' >"$t/stall.port" &
STALL=$!
on_exit "kill $STALL"
for _ in $(seq 100); do [ -s "$t/stall.port" ] && break; sleep 0.05; done
SPORT=$(cat "$t/stall.port")
URL="http://user:s3cret@127.0.0.1:$SPORT"

t0=$(date +%s%N)
"$SPECGEN" optimize $task --device opencl --llm "$URL" --model m --first-token-timeout 2s \
    --out "$t/o" --db none >"$t/opt.log" 2>&1
rc=$?
secs=$((($(date +%s%N) - t0) / 1000000000))
check_output "optimize: a late first token is warned about, naming the URL and the timeout" \
    "warn +llm: http://127\.0\.0\.1:$SPORT/v1/chat/completions: no token yet after 1 s .*first-token timeout of 2 s \(--first-token-timeout\)" \
    cat "$t/opt.log"
check_output "optimize: the error names the first-token timeout's value and option" \
    'error: .*no token within the first-token timeout of 2 s \(--first-token-timeout\)' cat "$t/opt.log"
check_output "optimize: the console summary counts the stalls" \
    '^llm stalls: +2 generations got no first token in time' cat "$t/opt.log"
check_output "optimize: summary.json counts the stalls" '"first_token_timeouts": 2,' cat "$t/o/summary.json"
check_output "optimize: summary.json gives the timeout" '"first_token_timeout_s": 2\.0' cat "$t/o/summary.json"
if grep -q s3cret "$t/opt.log" "$t/o/summary.json" "$t/o/events.jsonl"; then
    not_ok "optimize: the URL's password appears in no message, event or summary"
    grep -n s3cret "$t/opt.log" "$t/o/summary.json" "$t/o/events.jsonl" | sed 's/^/#   /'
else ok "optimize: the URL's password appears in no message, event or summary"; fi
if [ "$rc" -eq 1 ] && [ "$secs" -lt 15 ]; then ok "optimize: ends on the error (exit 1) in ${secs} s"; else
    not_ok "optimize: ends on the error (exit 1) within 15 s (exit $rc, ${secs} s)"; fi

"$SPECGEN" campaign suites/demo --tasks vector_scale --device opencl --llm "$URL" --model m \
    --first-token-timeout 2s --out "$t/c" --db "$t/c.db" >"$t/camp.log" 2>&1
check_output "campaign: a late first token is warned about" \
    'warn +llm: .*no token yet after 1 s .*\(--first-token-timeout\)' cat "$t/camp.log"
check_output "campaign: its summary counts the stalls, with the timeout" \
    '^llm stalls: 2 generations got no token within the first-token timeout of 2 s \(--first-token-timeout\)' \
    cat "$t/camp.log"
check_output "campaign: the task's summary.json counts them" '"first_token_timeouts": 2,' \
    cat "$t/c/vector_scale/summary.json"
check_fails "optimize: --first-token-timeout 500ms is a usage error" 2 \
    "$SPECGEN" optimize $task --first-token-timeout 500ms
check_output "optimize --help documents --first-token-timeout and its default" \
    '--first-token-timeout T .*\(default: 300s\)' "$SPECGEN" optimize --help
finish
