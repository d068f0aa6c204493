#!/usr/bin/env bash
# optimize's output files under faults (issue 17, items 2, 4, 5):
#  - a full disk: the run ends non-zero naming the file, and no empty best.cl or
#    summary.json is left looking complete (a 32 KiB tmpfs, in a private mount namespace;
#    needs root, skipped otherwise);
#  - killed (SIGKILL) after its first new best, the run going on (an unreachable target):
#    OUT/best.cl already holds that kernel;
#  - a second run into the same --out is refused while the first runs, and the first
#    one's events.jsonl stays whole;
#  - a baseline that is not UTF-8 is refused at load, naming the file (item 3; the request
#    body's own refusal is unit-tested in test_llm).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
if ! command -v clinfo >/dev/null || ! clinfo -l 2>/dev/null | grep -q Platform; then
    skip "optimize outputs on PoCL" "no OpenCL platform"
    finish
fi
task=suites/demo/vector_scale
out=$TMPDIR_TEST
spec_bin=$(cd "$(dirname "$SPECGEN")" && pwd)/$(basename "$SPECGEN")

# ---- full disk ----
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    mnt=$out/small
    mkdir -p "$mnt"
    # Only a few KiB stay free: events.jsonl fills them part way through the run.
    log=$(unshare -m bash -c '
        mount -t tmpfs -o size=32k tmpfs "$1" || exit 99
        head -c 24576 /dev/zero >"$1/filler"
        "$2" optimize "$3" --device opencl --out "$1/run"
        rc=$?
        echo "exit=$rc"
        for f in best.cl summary.json; do
            [ -e "$1/run/$f" ] && echo "$f: $(stat -c %s "$1/run/$f") bytes"
        done
        ls "$1/run"' _ "$mnt" "$spec_bin" "$task" 2>&1)
    if grep -q '^exit=99' <<<"$log"; then
        skip "a full disk ends the run with an error" "cannot mount a tmpfs here"
    else
        printf '%s\n' "$log" | grep -E 'exit=|cannot write|bytes' | sed 's/^/# /'
        if grep -q '^exit=[1-9]' <<<"$log"; then ok "a full disk: optimize exits non-zero"; else
            not_ok "a full disk: optimize exits non-zero"; fi
        check_output "a full disk: the message names the file and the reason" \
            "cannot write [^ ]*/small/run/[a-z.]+: No space left on device" echo "$log"
        if grep -qE '^(best.cl|summary.json): 0 bytes' <<<"$log" || grep -q '\.tmp\.' <<<"$log"; then
            not_ok "a full disk: no empty output file, no temporary left"
        else ok "a full disk: no empty output file, no temporary left"; fi
    fi
else
    skip "a full disk ends the run with an error" "needs root and unshare -m for a small tmpfs"
fi

# ---- killed after the first new best: best.cl holds it ----
"$SPECGEN" optimize $task --device opencl --target 100 --iterations 3 --speed 3 --out "$out/kill" \
    >"$out/kill.log" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
for _ in $(seq 600); do
    grep -q '"ev":"new_best"' "$out/kill/events.jsonl" 2>/dev/null && break
    sleep 0.05
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if grep -q '"ev":"new_best"' "$out/kill/events.jsonl" && [ -s "$out/kill/best.cl" ] &&
    ! cmp -s "$out/kill/best.cl" $task/baseline.cl; then
    ok "killed after a new best: best.cl already holds the new best kernel"
else not_ok "killed after a new best: best.cl holds it"; ls -la "$out/kill" | sed 's/^/# /'; fi
check_output "the kept best.cl validates" '"verdict":"pass"' \
    "$SPECGEN" validate $task "$out/kill/best.cl" --json

# ---- a second run into the same folder ----
# One second run, checked twice: the first run (speed 1: about 9 s) is still going when it
# starts, right after the first run's events.jsonl appears; a third run could start after the
# first had ended (CI's faster machine: a speed-3 first run was over by then) and run.
"$SPECGEN" optimize $task --device opencl --speed 1 --out "$out/two" >"$out/two1.log" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
for _ in $(seq 200); do [ -s "$out/two/events.jsonl" ] && break; sleep 0.05; done
second=$("$SPECGEN" optimize $task --device opencl --out "$out/two" 2>&1)
rc2=$?
check "a second run into the same --out is refused (exit 1)" test "$rc2" = 1
check_output "the refusal says why" 'in use by another specgen run' echo "$second"
wait $pid
rc=$?
if [ $rc -eq 0 ] && python3 -c '
import json, sys
for line in open(sys.argv[1]): json.loads(line)
' "$out/two/events.jsonl"; then ok "the first run ends well and its events.jsonl is whole"; else
    not_ok "the first run ends well (exit $rc) and its events.jsonl is whole"; fi

# ---- a baseline that is not UTF-8 ----
cp -r $task "$out/latin1"
printf '// caf\xe9\n' >>"$out/latin1/baseline.cl"
check_fails "a non-UTF-8 baseline stops optimize" 1 \
    "$SPECGEN" optimize "$out/latin1" --device opencl --out "$out/latin1-out"
check_output "the refusal names the file and the byte" 'baseline.cl: not valid UTF-8 \(byte 0xe9' \
    "$SPECGEN" optimize "$out/latin1" --device opencl --out "$out/latin1-out"
finish
