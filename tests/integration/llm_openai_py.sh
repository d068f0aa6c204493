#!/usr/bin/env bash
# Real peer: the official `openai` Python package streams from specgen replay-llm
# through /v1/chat/completions and /v1/completions in every dialect.
. "$(dirname "$0")/../lib.sh"
PY=$SPECGEN_ROOT/.venv/bin/python
TRACE=$SPECGEN_ROOT/prompts/traces/vector_scale.jsonl
if ! "$PY" -c 'import openai' 2>/dev/null; then
    skip "openai package streams from replay-llm" "the openai package is not installed in .venv (run make deps)"
    finish
fi
for d in vllm sglang deepseek llamacpp raw; do
    PORT=$(pick_port)
    "$SPECGEN" replay-llm --trace "$TRACE" --listen 127.0.0.1:"$PORT" --speed 50 --dialect "$d" \
        >"$TMPDIR_TEST/replay-$d.log" 2>&1 &
    pid=$!
    on_exit "kill $pid"
    if ! wait_port "$PORT" 10; then not_ok "replay-llm ($d) starts"; continue; fi
    # The script numbers its own TAP lines; renumber them into this file's sequence.
    while IFS= read -r line; do
        case "$line" in
        "ok "*) ok "${line#ok * - }" ;;
        "not ok "*) not_ok "${line#not ok * - }" ;;
        *) echo "$line" ;;
        esac
    done < <("$PY" "$SPECGEN_ROOT/tests/integration/openai_stream.py" "$PORT" "$TRACE" "$d" 2>&1 || echo "not ok 0 - openai $d: the script failed")
    kill "$pid"; wait "$pid" 2>/dev/null
done
finish
