#!/usr/bin/env bash
# scripts/gpu-check-device.sh — `make gpu-check` on the lent device machine, from the
# bundle that `make gpu-bundle` staged in .gpu/ (that machine is offline and bare: no
# -dev libraries, no redis, perhaps no make; see docs/gpu-checks.md). Needs only bash,
# python3, coreutils and ldd there; builds nothing.
#   device tool: carry [".gpu"], command `bash scripts/gpu-check-device.sh`
# Prints the machine, checks the bundle's libraries resolve, finds CUDA's NVRTC/CUPTI/
# driver, then runs scripts/run-gpu-checks.sh with SPECGEN=.gpu/specgen BUILD=.gpu/build
# (GPU_CHECKS="validator profiler" runs a subset). The whole log also goes to
# $OUT/gpu-check.log when OUT is set. Exit status: scripts/run-gpu-checks.sh's (0 all passed,
# 1 a failure, 2 nothing was checked: no GPU), or 1 when the bundle is missing or broken.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
bundle=$(realpath -m "${GPU_BUNDLE:-$root/.gpu}") # GPU_BUNDLE: another bundle folder (tests)

# first FILE found in the folders given: the loader path first, then the others.
find_lib() {
    local name=$1 d
    shift
    local dirs
    IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
    for d in "${dirs[@]}" "$@"; do
        [ -n "$d" ] && [ -e "$d/$name" ] && { echo "$d/$name"; return 0; }
    done
    ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n { print $NF; f = 1; exit } END { exit !f }'
}

# CUDA_HOME for specgen's fallbacks: /usr/local/cuda, else the toolkit around nvcc.
cuda_setup() {
    if [ -z "${CUDA_HOME:-}" ]; then
        CUDA_HOME=/usr/local/cuda
        if ! [ -d "$CUDA_HOME/lib64" ] && command -v nvcc >/dev/null; then
            CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
        fi
    fi
    export CUDA_HOME
    local cu=("$CUDA_HOME/lib64" "$CUDA_HOME/targets/x86_64-linux/lib")
    echo "CUDA_HOME  $CUDA_HOME"
    echo "libcuda    $(find_lib libcuda.so.1 /usr/local/nvidia/lib64 /usr/lib64 || echo 'NOT FOUND (the driver provides it)')"
    echo "libnvrtc   $(find_lib libnvrtc.so "${cu[@]}" || find_lib libnvrtc.so.13 "${cu[@]}" || echo 'NOT FOUND')"
    echo "libcupti   $(find_lib libcupti.so "${cu[@]}" "$CUDA_HOME/extras/CUPTI/lib64" ||
        find_lib libcupti.so.13 "${cu[@]}" "$CUDA_HOME/extras/CUPTI/lib64" || echo 'NOT FOUND')"
    # The driver's folder, when the loader does not know it (specgen dlopens libcuda.so.1).
    if ! find_lib libcuda.so.1 >/dev/null && [ -e /usr/local/nvidia/lib64/libcuda.so.1 ]; then
        export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/nvidia/lib64
        echo "           (added /usr/local/nvidia/lib64 to LD_LIBRARY_PATH)"
    fi
}

main() {
    echo "==== gpu-check-device $(date -u +%FT%TZ)"
    # (a transfer that dropped the execute bits must not look like a missing bundle)
    chmod +x "$bundle/specgen" "$bundle/build/gpu/prof_streams" "$bundle"/bin/* "$bundle"/libexec/* 2>/dev/null
    if ! [ -x "$bundle/specgen" ] || ! [ -x "$bundle/build/gpu/prof_streams" ] || ! [ -d "$bundle/lib" ]; then
        echo "gpu-check-device: no bundle in $bundle: run make gpu-bundle first (in the" \
            "checkout the device tool sends) and carry .gpu (run's carry: [\".gpu\"])"
        return 1
    fi
    echo "machine    $(uname -srm), $(nproc) CPUs, $(ldd --version | head -n 1)"
    echo "python3    $(command -v python3) $(python3 -c 'import sys; print(sys.version.split()[0])' 2>&1)"
    echo "make       $(command -v make || echo 'none (not needed)')"
    if command -v nvidia-smi >/dev/null; then
        echo "gpu        $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)"
    else
        echo "gpu        no nvidia-smi"
    fi
    sed -n '1,2p' "$bundle/MANIFEST" | sed 's/^/bundle     /'
    local head
    head=$(git rev-parse HEAD 2>/dev/null) && ! grep -q "^commit $head" "$bundle/MANIFEST" &&
        echo "bundle     WARNING: built from another commit than this tree's $head (rerun make gpu-bundle)"
    bash scripts/gpu-bundle.sh --check "$bundle" || {
        echo "gpu-check-device: the bundle's libraries do not resolve (above): rerun make gpu-bundle"
        return 1
    }
    local v
    v=$("$bundle/specgen" --version 2>&1) || {
        echo "gpu-check-device: .gpu/specgen does not start here: $v"
        return 1
    }
    echo "specgen    $v (.gpu/specgen)"
    cuda_setup
    export PATH=$bundle/bin:$PATH SPECGEN=$bundle/specgen BUILD=$bundle/build SPECGEN_DATA=$root
    echo "redis      $(redis-server --version 2>&1 | cut -d' ' -f1-3) ($(command -v redis-server))"
    bash scripts/run-gpu-checks.sh
}

if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    main "$@" 2>&1 | tee "$OUT/gpu-check.log"
    rc=${PIPESTATUS[0]}
    echo "gpu-check-device: exit $rc; log in \$OUT/gpu-check.log" | tee -a "$OUT/gpu-check.log"
else
    main "$@"
    rc=$?
    echo "gpu-check-device: exit $rc"
fi
exit "$rc"
