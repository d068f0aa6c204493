#!/usr/bin/env bash
# kvstore part of `make gpu-check`: the cuda backend on a real GPU.
#  1. `specgen kvstore --self-test 1G --backend cuda:N`: 1 GiB written to device memory
#     through the driver API, read back, compared bit for bit; host<->device copy rates.
#  2. A kvstore serving from GPU memory: 1 GiB of 16 MiB values stored over RESP, read
#     back bit-exact (the staged socket path), with the end-to-end rates.
# Exits 0 when both pass, 1 on a failure, 77 (SKIP) when there is no NVIDIA driver/GPU.
# Usage: kvstore/gpu-check.sh [SPECGEN]   (GPU=N picks the device, default 0)
set -u
SPECGEN=$(realpath "${1:-./bin/specgen}")
GPU=${GPU:-0}
here=$(cd "$(dirname "$0")" && pwd)
out=$("$SPECGEN" kvstore --backend "cuda:$GPU" --memory 2G --self-test 1G 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then
    if grep -qE "no NVIDIA driver|no usable NVIDIA GPU|there is no GPU" <<<"$out"; then
        echo "gpu-check kvstore: SKIP (no NVIDIA driver or GPU on this machine)"
        exit 77
    fi
    echo "gpu-check kvstore: FAIL (self-test)"
    exit 1
fi
cd "$here/../tests/integration/kv" || exit 1
if SPECGEN=$SPECGEN KV_BACKEND="cuda:$GPU" KV_MEMORY=2G python3 roundtrip_1g.py; then
    echo "gpu-check kvstore: PASS"
else
    echo "gpu-check kvstore: FAIL (1 GiB over RESP from GPU memory)"
    exit 1
fi
