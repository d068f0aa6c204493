#!/usr/bin/env bash
# kvstore: exact reply bytes over a raw socket, pipelining, split bulks, limits — on the
# host backend (zero-copy) and on host-staged, which moves every byte through the
# backend's write/read calls and staging buffers: the I/O path of the cuda backend.
cd "$(dirname "$0")/kv" || exit 1
python3 raw_bytes.py || rc=1
echo "# again with --backend host-staged"
KV_BACKEND=host-staged python3 raw_bytes.py | sed 's/^\(ok [0-9]* - \)/\1[staged] /;s/^\(not ok [0-9]* - \)/\1[staged] /'
[ "${PIPESTATUS[0]}" -eq 0 ] && [ -z "${rc:-}" ]
