#!/usr/bin/env bash
# kvstore: exact reply bytes over a raw socket, pipelining, split bulks, limits.
cd "$(dirname "$0")/kv" && exec python3 raw_bytes.py
