#!/usr/bin/env bash
# Device workers are exec'd afresh (device/worker_exec.c), not only forked: a worker maps
# none of its parent's memory. The check reads a running worker's whole address space
# (/proc/PID/mem, as root) for the API key that the LLM client holds in its Authorization
# header: a forked worker (SPECGEN_WORKER_FORK=1, the control that shows the check can see
# it) holds the key; an exec'd one does not.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "worker_exec: the demo's jobs need OpenCL"
out=$TMPDIR_TEST
key="sk-specgen-exec-test-$RANDOM$RANDOM"

port=$(pick_port)
"$SPECGEN" replay-llm --trace prompts/traces --listen "127.0.0.1:$port" >"$out/replay.log" 2>&1 &
replay=$!
on_exit "kill $replay"
wait_port "$port" 10

# scan PID: "found" or "absent" (the key's bytes anywhere in its readable memory)
scan() {
    python3 - "$1" "$key" <<'PY'
import re, sys
pid, key = sys.argv[1], sys.argv[2].encode()
found = False
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
        if not m or "[vvar" in line or "[vsyscall" in line:
            continue
        a, b = int(m.group(1), 16), int(m.group(2), 16)
        if b - a > 1 << 32:  # a sanitizer's shadow (terabytes, mostly unmapped): no heap
            continue
        try:  # in 64 MiB pieces that overlap by the key's length
            tail = b""
            for at in range(a, b, 1 << 26):
                mem.seek(at)
                piece = tail + mem.read(min(1 << 26, b - at))
                if key in piece:
                    found = True
                    break
                tail = piece[-len(key):]
        except (OSError, ValueError, OverflowError):
            pass
        if found:
            break
print("found" if found else "absent")
PY
}

# run MODE: optimize the demo against the replay server with the key set; while its first
# worker runs, scan that worker. Prints the worker's cmdline, then found/absent.
run() {
    local mode=$1 opt pid w=""
    rm -rf "$out/$mode"
    if [ "$mode" = fork ]; then
        SPECGEN_WORKER_FORK=1 SPECGEN_API_KEY=$key "$SPECGEN" optimize suites/demo/vector_scale \
            --llm "http://127.0.0.1:$port" --model replay --db none --out "$out/$mode" \
            >"$out/$mode.log" 2>&1 &
    else
        SPECGEN_API_KEY=$key "$SPECGEN" optimize suites/demo/vector_scale \
            --llm "http://127.0.0.1:$port" --model replay --db none --out "$out/$mode" \
            >"$out/$mode.log" 2>&1 &
    fi
    opt=$!
    for _ in $(seq 150); do
        w=$(pgrep -P "$opt" | head -1)
        [ -n "$w" ] && grep -q candidate "$out/$mode/events.jsonl" 2>/dev/null && break
        sleep 0.1
    done
    if [ -z "$w" ]; then
        echo "no worker"
    else
        tr '\0' ' ' <"/proc/$w/cmdline" | cut -c1-60
        echo
        scan "$w"
    fi
    wait "$opt"
}

if [ "$(id -u)" != 0 ]; then
    skip "an exec'd worker holds none of the parent's memory" "reading another process's memory needs root"
    finish
fi
fork=$(run fork 2>&1)
echo "$fork" | sed 's/^/#   fork: /'
check_output "control: a forked worker holds the API key (the scan can see it)" '^found$' echo "$fork"
exec_out=$(run exec 2>&1)
echo "$exec_out" | sed 's/^/#   exec: /'
check_output "a worker is a fresh program: specgen __dev-worker" '__dev-worker' echo "$exec_out"
check_output "  ... whose memory holds no trace of the API key" '^absent$' echo "$exec_out"
check_output "  ... and the run still meets its target" '^target$' \
    python3 -c "import json; print(json.load(open('$out/exec/summary.json'))['end'])"
finish
