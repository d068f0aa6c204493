# Sourced by the agent tests (after tests/lib.sh, in the repository root): `specgen pool`
# agents on loopback. Sets out (the test's folder), task (vector_scale), client (the
# independent protocol client) and token (also in $out/token, mode 600).
out=$TMPDIR_TEST
task=suites/demo/vector_scale
client=tests/integration/agent_client.py
echo "t0ken-$RANDOM-$RANDOM" >"$out/token"
chmod 600 "$out/token"
token=$(cat "$out/token")

# start_agent NAME ARGS...: an agent on a free port; sets port_NAME and pid_NAME.
start_agent() {
    local name=$1 i
    shift
    : >"$out/$name.log"
    "$SPECGEN" pool --listen 127.0.0.1:0 --devices opencl:0 --cache-dir "$out/cache-$name" \
        "$@" >"$out/$name.log" 2>&1 &
    eval "pid_$name=$!"
    on_exit "kill -CONT $! 2>/dev/null; kill $! 2>/dev/null"
    for ((i = 0; i < 100; i++)); do
        grep -q 'serving' "$out/$name.log" && break
        sleep 0.05
    done
    eval "port_$name=$(grep -o '127.0.0.1:[0-9]*' "$out/$name.log" | head -1 | cut -d: -f2)"
}

# agent_status PORT: the agent's /v1/status (with $token).
agent_status() { curl -s -m 5 -H "Authorization: Bearer $token" "http://127.0.0.1:$1/v1/status"; }

# wait_running PORT [N]: until the agent runs N jobs (default 1), up to 30 s.
wait_running() {
    local i
    for ((i = 0; i < 600; i++)); do
        agent_status "$1" | grep -q "\"running\":${2:-1}[,}]" && return 0
        sleep 0.05
    done
    return 1
}

# wait_for FILE PATTERN [SECONDS]: until FILE has a line matching PATTERN (default 30 s).
wait_for() {
    local i
    for ((i = 0; i < ${3:-30} * 20; i++)); do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# optimize_bg NAME SPEED POOL [ARGS...]: `optimize $task` on the agents of POOL alone, in the
# background (opt: its pid), into $out/NAME{,.db,.log}.
optimize_bg() {
    local name=$1 speed=$2 pool=$3
    shift 3
    "$SPECGEN" optimize $task --device opencl --no-local --speed "$speed" --db "$out/$name.db" \
        --out "$out/$name" --pool "$pool" --pool-token-file "$out/token" "$@" \
        >"$out/$name.log" 2>&1 &
    opt=$!
    on_exit "kill -CONT $opt 2>/dev/null; kill $opt 2>/dev/null"
}
