#!/usr/bin/env bash
# kvstore: LRU eviction within the budget, elastic maxmemory, noeviction.
cd "$(dirname "$0")/kv" && exec python3 eviction.py
