#!/usr/bin/env bash
# kvstore: a client that announces a huge value and stalls cannot wipe the cache (#17).
command -v redis-cli >/dev/null || { echo "ok 1 - stalled requests # SKIP redis-cli missing (make deps)"; exit 0; }
root=$(cd "$(dirname "$0")/../.." && pwd)
py=python3
[ -x "$root/.venv/bin/python" ] && py=$root/.venv/bin/python
cd "$(dirname "$0")/kv" && exec "$py" stalled_bulk.py
