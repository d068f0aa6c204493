#!/usr/bin/env bash
# The torch reference engine runs without the OpenCL worker's address-space cap (8 GiB,
# RLIMIT_AS, device/procpool.c): torch maps about 5 GB before its first tensor, and under the
# cap KernelBench level 2's transposed convolutions failed with "can't allocate 876879108
# bytes". A problem of our own (1_ReLUScale's model) writes, at module level, the address-space
# limit of the process that loads it next to its file; after `specgen validate` on PoCL the
# engine's line must say "unlimited" (with the cap it read 8589934592); the worker itself keeps
# the cap as its soft limit (device/worker.c).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "the torch engine's memory limit on PoCL"
need_torch "the torch engine's memory limit"
d=$TMPDIR_TEST
export SPECGEN_DATA=$SPECGEN_ROOT
{
    cat <<'PY'
import os
import resource

_soft = resource.getrlimit(resource.RLIMIT_AS)[0]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "as_limit.txt"), "a") as _f:
    _f.write("unlimited\n" if _soft == resource.RLIM_INFINITY else "%d\n" % _soft)
PY
    cat tests/fixtures/kernelbench/1_ReLUScale.py
} >"$d/1_ReLUScaleLimit.py"
check "the problem imports" "$SPECGEN" task init "$d/1_ReLUScaleLimit.py" --out "$d/t"
rm -f "$d/t/as_limit.txt"
check "its torch baseline validates on PoCL" "$SPECGEN" validate "$d/t" --device opencl
check_output "the engine (started by the worker) ran without the worker's 8 GiB cap" '^unlimited$' \
    sort -u "$d/t/as_limit.txt"
finish
