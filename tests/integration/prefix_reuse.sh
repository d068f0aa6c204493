#!/usr/bin/env bash
# Prefix reuse end to end (#18): `specgen replay-llm --cached-prefix` reports, in each
# stream's usage, the leading prompt tokens a request shares with one served before (as
# vLLM does with --enable-prompt-tokens-details when its prefix cache hits); `specgen
# optimize --llm` on it prints a positive fork prefix reuse in its summary, and
# summary.json and the generation_done events carry the same counts. Without the option
# the same run says the server did not report it.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
out=$TMPDIR_TEST
task=suites/demo/vector_scale

start_replay() { # args...: sets port
    port=$(pick_port)
    "$SPECGEN" replay-llm --trace prompts/traces --listen "127.0.0.1:$port" --speed 20 "$@" \
        >"$out/replay-$port.log" 2>&1 &
    local pid=$!
    on_exit "kill $pid"
    wait_port "$port" 10
}
# usage DIALECT_PORT PROMPT: the usage object of a completions stream, as JSON
usage() {
    curl -s "http://127.0.0.1:$1/v1/completions" -d "{\"model\":\"replay\",\"prompt\":\"$2\",
        \"stream\":true,\"stream_options\":{\"include_usage\":true},\"max_tokens\":2}" |
        python3 -c 'import json,sys
for l in sys.stdin:
    if l.startswith("data: {"):
        u = json.loads(l[6:]).get("usage")
        if u: print(json.dumps(u))'
}

# The count itself: 40 bytes in common with the first prompt = 10 prompt tokens (bytes / 4).
start_replay --cached-prefix
a="The first forty bytes of this prompt ..."
check_output "replay-llm --cached-prefix: a first prompt has nothing cached (vLLM leaves the field out)" \
    '^\{"prompt_tokens": 10, "total_tokens": 12, "completion_tokens": 2\}$' usage "$port" "$a"
check_output "  ... a second one sharing its first 40 bytes: cached_tokens 10" \
    '"prompt_tokens": 15, .*"prompt_tokens_details": \{"cached_tokens": 10\}' \
    usage "$port" "${a}and twenty more bytes"
check_output "  ... the same prompt again: all but the last prompt token" \
    '"prompt_tokens_details": \{"cached_tokens": 9\}' usage "$port" "$a"
check_output "  ... and /v1/replay/stats sums them" '"cached_tokens":19' \
    curl -s "http://127.0.0.1:$port/v1/replay/stats"
for d in sglang deepseek; do
    start_replay --cached-prefix --dialect "$d"
    usage "$port" "$a" >/dev/null
    check_output "  ... in the $d dialect too" '"prompt_tokens_details": \{"cached_tokens": 10\}' \
        usage "$port" "${a}and twenty more bytes"
done
start_replay
usage "$port" "$a" >/dev/null
usage "$port" "${a}and twenty more bytes" >"$out/plain-usage.json"
check_output "without --cached-prefix: no cached_tokens" '^\{"prompt_tokens": 15, [^{]*\}$' \
    cat "$out/plain-usage.json"

need_opencl "optimize --llm replay-llm --cached-prefix"
start_replay --cached-prefix
"$SPECGEN" optimize $task --device opencl --llm "http://127.0.0.1:$port" --model replay \
    --db none --out "$out/opt" >"$out/opt.log" 2>&1
check_output "optimize --llm on replay-llm --cached-prefix runs to the end" \
    '^== specgen optimize: done' cat "$out/opt.log"
check_output "  ... its summary prints a positive fork prefix reuse" \
    "^prefix reuse: [1-9][0-9]*% of the forks' prompt tokens came from the server's prefix cache \([1-9][0-9]* of [0-9]+; [1-9][0-9]* of [0-9]+ forks reported\)$" \
    cat "$out/opt.log"
check_output "  ... summary.json and the fork events carry the same counts" '^consistent' \
    python3 - "$out/opt/summary.json" "$out/opt/events.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["prefix_reuse"]
forks = [e for e in map(json.loads, open(sys.argv[2]))
         if e.get("ev") == "generation_done" and e.get("kind") == "fork" and not e["estimated"]]
cached = sum(e.get("cached_tokens", 0) for e in forks)
prompt = sum(e["prompt_tokens"] for e in forks)
reported = sum("cached_tokens" in e for e in forks)
good = (r["fork_cached_tokens"] > 0 and r["cached_share"] > 0 and r["forks_reported"] >= 1
        and (cached, prompt, reported) == (r["fork_cached_tokens"], r["fork_prompt_tokens"],
                                           r["forks_reported"])
        and abs(r["cached_share"] - cached / prompt) < 1e-9)
print("consistent" if good else "inconsistent", r, "events:", cached, prompt, reported)
PY
start_replay
"$SPECGEN" optimize $task --device opencl --llm "http://127.0.0.1:$port" --model replay \
    --db none --out "$out/plain" >"$out/plain.log" 2>&1
check_output "the same run without --cached-prefix: not reported by the server" \
    '^prefix reuse: not reported by the server' cat "$out/plain.log"
finish
