#!/usr/bin/env bash
# What optimize and campaign show: stdout carries the result (a table of task, best speedup,
# target, met, time, tokens, end; or --json), stderr the log. Off a terminal a plain
# "progress:" line every --progress-interval (with done/running/left, the best so far and an
# ETA), none with 0; on a terminal (script(1) gives one) a status line rewritten in place.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
out=$TMPDIR_TEST
need_opencl "runs on PoCL"

# ---- off a terminal: a pipe ----
# --speed 1: about 4 s here, so at least two lines even on a machine twice as fast (at
# --speed 3 a fast CI machine ended it in under 2 s: one line).
"$SPECGEN" campaign suites/demo --tasks 'row*' --device opencl --speed 1 --db none \
    --out "$out/c" --progress-interval 1s 2>"$out/c.err" | cat >"$out/c.out"
check_output "stderr: a plain progress line every second" \
    '^\[ *[0-9.]+s\] progress: tasks 0 done, 1 running, 0 left; best .*; [0-9]+ tokens; pools [0-9]+% busy; ETA ' \
    cat "$out/c.err"
check "  ... more than one (the run lasts some seconds)" \
    test "$(grep -c 'progress:' "$out/c.err")" -ge 2
check_output "  ... no status line's escape codes in a pipe" '^none$' \
    bash -c "grep -c \$'\\033' '$out/c.err' >/dev/null && echo some || echo none"
check_output "stdout: the result table's header" \
    '^task +best speedup +target +met +time +tokens +end$' cat "$out/c.out"
check_output "  ... a row for the task: best, target, met, time, tokens, end" \
    '^row_sum +[0-9.]+x +2\.00x +yes +[0-9.]+ s +[0-9]+ +target$' cat "$out/c.out"
check_output "  ... and nothing of the log" '^2$' \
    bash -c "grep -vc '^\$' '$out/c.out'"
check_output "the log stays on stderr" 'row_sum: started' cat "$out/c.err"

"$SPECGEN" campaign suites/demo --tasks 'row*' --device opencl --speed 10 --db none \
    --out "$out/z" --progress-interval 0 >"$out/z.out" 2>"$out/z.err"
check_output "--progress-interval 0: no progress lines" '^0$' \
    bash -c "grep -c 'progress:' '$out/z.err'"

# ---- --json ----
"$SPECGEN" campaign suites/demo --tasks 'row*' --device opencl --speed 10 --db none \
    --out "$out/j" --json >"$out/j.out" 2>"$out/j.err"
check_output "campaign --json: one JSON object on stdout with the rows" '^ok row_sum True$' \
    python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); r=o["rows"][0];
print("ok", r["task"], r["met"] and r["best_speedup"] > 1 and r["tokens"] > 0 and o["done"] == 1)' \
    "$out/j.out"
"$SPECGEN" optimize suites/demo/row_sum --device opencl --speed 10 --db none --out "$out/oj" \
    --json >"$out/oj.out" 2>"$out/oj.err"
check_output "optimize --json: summary.json's object on stdout" '^same$' \
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]));
print("same" if a == b else "differs")' "$out/oj.out" "$out/oj/summary.json"

# ---- on a terminal ----
if command -v script >/dev/null; then
    script -qec "$SPECGEN campaign suites/demo --tasks 'row*' --device opencl --speed 3 --db none \
        --out $out/t" "$out/t.typescript" >/dev/null 2>&1 </dev/null
    check_output "a terminal: the status line is rewritten in place, with an ETA" \
        $'\r\033\\[K\\[[^]]+\\] tasks [0-9]+ done, [0-9]+ running, [0-9]+ left; .*ETA ' \
        cat "$out/t.typescript"
    check_output "  ... no plain progress lines there" '^0$' \
        bash -c "grep -c 'progress:' '$out/t.typescript'"
    check_output "  ... and the table at the end" 'row_sum +[0-9.]+x' cat "$out/t.typescript"
    script -qec "$SPECGEN optimize suites/demo/row_sum --device opencl --speed 3 --db none \
        --out $out/to" "$out/to.typescript" >/dev/null 2>&1 </dev/null
    check_output "optimize on a terminal: a status line with an ETA" \
        $'\r\033\\[Kiteration [0-9]+ \\|.*\\| ETA ' cat "$out/to.typescript"
else
    skip "the terminal checks" "no script(1) (util-linux)"
fi
finish
