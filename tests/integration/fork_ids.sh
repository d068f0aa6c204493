#!/usr/bin/env bash
# Forks as token ids (issue 29): the reasoning stream asks for vLLM's return_token_ids, and a
# fork goes as a completions prompt of ids (the stream's prompt and generated ids, then the
# ids of the end of thinking + answer prefix from /tokenize), so the server's prefix cache
# holds ALL of the fork's reasoning prefix. replay-llm plays vLLM's shapes (ids with every
# chunk, a prompt given as ids, /tokenize, cached tokens counted by ids) and SGLang's refusal
# of return_token_ids on a streamed chat; against that, and with --fork-ids off, forks go as
# text and still work. (llm_llamacpp.sh checks text forks against a real text-only server.)
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
out=$TMPDIR_TEST
task=suites/demo/vector_scale

start_replay() { # NAME args...: sets port; requests logged to $out/NAME.jsonl
    local name=$1
    shift
    port=$(pick_port)
    "$SPECGEN" replay-llm --trace prompts/traces --listen "127.0.0.1:$port" --speed 20 \
        --cached-prefix --log-requests "$out/$name.jsonl" "$@" >"$out/replay-$name.log" 2>&1 &
    local pid=$!
    on_exit "kill $pid"
    wait_port "$port" 10
}

# ---- replay-llm alone: vLLM's fields ----
start_replay plain
check_output "replay-llm /tokenize answers vLLM's shape" \
    '^\{"count":3,"max_model_len":32768,"tokens":\[[0-9]+(,[0-9]+){2}\],"token_strs":null\}$' \
    curl -s "http://127.0.0.1:$port/tokenize" -d '{"model":"replay","prompt":"\n</think>\n\nHello"}'
chat_ids() { # the chat stream with return_token_ids: prompt ids on the first chunk, ids on each
    curl -s "http://127.0.0.1:$port/v1/chat/completions" -d '{"model":"replay","messages":[{"role":
        "user","content":"hi"}],"stream":true,"return_token_ids":true,"max_tokens":6}' |
        python3 -c 'import json,sys
ev = [json.loads(l[6:]) for l in sys.stdin if l.startswith("data: {")]
p = ev[0].get("prompt_token_ids")
g = [i for e in ev for c in e["choices"] for i in c.get("token_ids", [])]
hidden = sum(1 for e in ev for c in e["choices"] if c.get("token_ids") and c["delta"] == {})
print("prompt", len(p or []), "generated", len(g), "ids-only chunks", hidden)'
}
check_output "  ... a chat stream with return_token_ids: prompt_token_ids first, token_ids on each chunk" \
    '^prompt [1-9][0-9]* generated [1-9][0-9]* ids-only chunks [1-9]' chat_ids
check_output "  ... a prompt given as an id it never gave out is refused (400)" \
    'token id 999999 is not one this server gave out' \
    curl -s "http://127.0.0.1:$port/v1/completions" -d '{"model":"replay","prompt":[999999],"stream":true}'

need_opencl "optimize --llm replay-llm: forks as token ids"

# FILE EVENTS: per fork, its prompt form and whether it reused the whole reasoning prefix
forks() {
    python3 - "$1" "$2" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
ids = sum(1 for r in reqs if r["path"] == "/v1/completions" and isinstance(r["request"]["prompt"], list))
text = sum(1 for r in reqs if r["path"] == "/v1/completions" and isinstance(r["request"]["prompt"], str))
ev = [e for e in map(json.loads, open(sys.argv[2]))
      if e.get("ev") == "generation_done" and e.get("kind") == "fork"]
whole = sum(1 for e in ev if e.get("prompt") == "ids" and e.get("prefix_ids", 0) > 0
            and e.get("cached_tokens") == e["prefix_ids"])
forms = ",".join(sorted({e.get("prompt", "?") for e in ev}))
share = sum(e.get("cached_tokens", 0) for e in ev) / max(1, sum(e.get("prompt_tokens", 0) for e in ev))
why = "; ".join(sorted({e["prompt_why"] for e in ev if "prompt_why" in e}))
print(f"sent ids={ids} text={text} events={len(ev)} forms={forms} whole_prefix={whole} "
      f"cached_share={share:.2f} why={why}")
PY
}

start_replay vllm
"$SPECGEN" optimize $task --device opencl --llm "http://127.0.0.1:$port" --model replay \
    --db none --out "$out/ids" >"$out/ids.log" 2>&1
check_output "optimize --llm on replay-llm (vllm): runs to the end" '^== specgen optimize: done' \
    cat "$out/ids.log"
check_output "  ... every fork went as token ids, and each reused its WHOLE reasoning prefix (cached_tokens = prefix_ids)" \
    '^sent ids=([1-9][0-9]*) text=0 events=\1 forms=ids whole_prefix=\1 ' \
    forks "$out/vllm.jsonl" "$out/ids/events.jsonl"
echo "# ids:  $(forks "$out/vllm.jsonl" "$out/ids/events.jsonl")"

start_replay off
"$SPECGEN" optimize $task --device opencl --llm "http://127.0.0.1:$port" --model replay \
    --fork-ids off --db none --out "$out/text" >"$out/text.log" 2>&1
check_output "--fork-ids off: the same run sends text forks, and they work" \
    '^sent ids=0 text=([1-9][0-9]*) events=\1 forms=text whole_prefix=0 .*why=--fork-ids off$' \
    forks "$out/off.jsonl" "$out/text/events.jsonl"
echo "# text: $(forks "$out/off.jsonl" "$out/text/events.jsonl")"
check_output "  ... the run still ends done" '^== specgen optimize: done' cat "$out/text.log"

start_replay sglang --dialect sglang
"$SPECGEN" optimize $task --device opencl --llm "http://127.0.0.1:$port" --model replay \
    --db none --out "$out/sgl" >"$out/sgl.log" 2>&1
check_output "sglang dialect (refuses return_token_ids on a streamed chat): forks go as text, and say why" \
    '^sent ids=0 text=([1-9][0-9]*) events=\1 forms=text whole_prefix=0 .*why=the server refused return_token_ids' \
    forks "$out/sglang.jsonl" "$out/sgl/events.jsonl"
check_output "  ... the reasoning request was sent again without the field, and the run ends done" \
    '^== specgen optimize: done' cat "$out/sgl.log"
check_output "specgen llm-check says which: text against the sglang dialect, and why" \
    '^forks +text: the server refused return_token_ids' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$port" --model replay
start_replay check
check_output "  ... token ids against the vllm dialect" \
    '^forks +token ids \(the stream returned [1-9][0-9]* prompt and [1-9][0-9]* generated ids' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$port" --model replay
check_output "  ... and in --json" '"fork_prompt": "ids"' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$port" --model replay --json
finish
