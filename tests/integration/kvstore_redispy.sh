#!/usr/bin/env bash
# kvstore: redis-py (PyPI, installed into .venv by make deps) with LMCache's key pattern.
root=$(cd "$(dirname "$0")/../.." && pwd)
py=$root/.venv/bin/python
if [ ! -x "$py" ]; then echo "ok 1 - redis-py LMCache pattern # SKIP no .venv (run make deps)"; exit 0; fi
cd "$(dirname "$0")/kv" && exec "$py" lmcache_pattern.py
