#!/usr/bin/env bash
# specgen pool with its kvstore: the budget shrinks while a job that needs the memory runs
# and grows back after, with redis-cli clients connected throughout (#18).
command -v redis-cli >/dev/null || { echo "ok 1 - pool kvstore # SKIP redis-cli missing (make deps)"; exit 0; }
root=$(cd "$(dirname "$0")/../.." && pwd)
py=python3
[ -x "$root/.venv/bin/python" ] && py=$root/.venv/bin/python
cd "$(dirname "$0")/kv" && exec "$py" agent_budget.py
