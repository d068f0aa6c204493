#!/usr/bin/env bash
# Every CUDA driver, NVRTC and CUPTI function that specgen dlopens by name exists in the
# installed CUDA toolkit (the driver's stub libcuda, libnvrtc, libcupti). Nothing CUDA
# runs on this machine, so a misspelt or wrongly versioned symbol name (cuMemAlloc vs
# cuMemAlloc_v2) would otherwise first show on a GPU machine.
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
libs=("$cuda/lib64/stubs/libcuda.so" "$cuda/lib64/libnvrtc.so" "$cuda/lib64/libcupti.so")
for l in "${libs[@]}"; do
    [ -e "$l" ] || { skip "CUDA symbol names" "no $l (CUDA toolkit not installed)"; finish; }
done
command -v nm >/dev/null || { skip "CUDA symbol names" "nm missing (binutils)"; finish; }

exported=$(for l in "${libs[@]}"; do nm -D --defined-only "$l" | awk '{print $3}' | sed 's/@.*//'; done | sort -u)
# The symbol tables given to sg_dl_load / sg_cuda_cupti_resolve: {"name", (void **)&...},
# and the lists of common/cuda.h: X(name, member, optional, return type, parameters)
mapfile -t wanted < <({
    grep -rhoE '\{"(cu|nvrtc|cupti)[A-Za-z0-9_]*", *\(void' --include=*.c \
        "$root"/common "$root"/device "$root"/kvstore "$root"/validator "$root"/profiler "$root"/orchestrator |
        sed -E 's/\{"([^"]*)".*/\1/'
    grep -hoE '^ *X\((cu|nvrtc|cupti)[A-Za-z0-9_]*,' "$root"/common/cuda.h | sed -E 's/ *X\(([^,]*),/\1/'
} | sort -u)
if [ "${#wanted[@]}" -ge 40 ]; then ok "found the symbol tables (${#wanted[@]} names)"; else
    not_ok "found the symbol tables (only ${#wanted[@]} names: did their form change?)"; fi
missing=()
for s in "${wanted[@]}"; do grep -qx "$s" <<<"$exported" || missing+=("$s"); done
if [ "${#missing[@]}" -eq 0 ]; then ok "every dlopen'ed CUDA name is exported by $cuda"; else
    not_ok "every dlopen'ed CUDA name is exported by $cuda"; echo "#   missing: ${missing[*]}"; fi
finish
