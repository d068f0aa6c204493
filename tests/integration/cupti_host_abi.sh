#!/usr/bin/env bash
# The CUPTI Profiler Host API types that device/cupti_host.h declares by hand (C cannot
# include the toolkit's C++-only header) have the toolkit header's layout: compiles
# tests/integration/cupti_host_abi.cpp, whose static_asserts compare every size, offset,
# structSize and the enum value. A wrong layout would first show on a GPU, as CUPTI
# rejecting or misreading a call. Skips without the header or a C++ compiler.
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
cxx=${CXX:-g++}
if ! [ -e "$cuda/include/cupti_profiler_host.h" ]; then
    skip "CUPTI host API layout" "no $cuda/include/cupti_profiler_host.h (CUDA 12.6+ toolkit)"
elif ! command -v "$cxx" >/dev/null; then
    skip "CUPTI host API layout" "no C++ compiler ($cxx) to compile the toolkit's C++ header"
else
    check "device/cupti_host.h matches cupti_profiler_host.h (sizes, offsets, structSize)" \
        "$cxx" -std=c++17 -fsyntax-only -Wall -Werror -I"$root" -isystem "$cuda/include" \
        "$root/tests/integration/cupti_host_abi.cpp"
fi
finish
