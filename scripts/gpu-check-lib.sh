# scripts/gpu-check-lib.sh — sourced by the */gpu-check.sh scripts.
# need_gpu NAME: exit 77 (skip) with one line when there is no NVIDIA GPU here.
need_gpu() {
    if ! [ -e /dev/nvidiactl ] && ! command -v nvidia-smi >/dev/null; then
        echo "gpu-check ($1): no NVIDIA GPU here (no /dev/nvidiactl, no nvidia-smi); nothing was checked"
        exit 77
    fi
}
