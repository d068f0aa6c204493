#!/usr/bin/env bash
# Issue 24 (items 6, 7 and part of 9): a task's own fault is no candidate verdict; what
# `task init` guesses is shown as a guess; task init's input paths and texts are checked
# before anything is written; __has_include probes follow the #include rules; a candidate
# that borrows the baseline's launch plan is told so. Kernels: tests/fixtures/hardening_task.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
fx=tests/fixtures/hardening_task
task=suites/demo/vector_scale
t=$TMPDIR_TEST
have_cl=0
command -v clinfo >/dev/null && clinfo -l 2>/dev/null | grep -q Platform && have_cl=1
have_nvrtc=0
"$SPECGEN" validate $task --device cuda --compile-only --arch sm_90a >/dev/null 2>&1 && have_nvrtc=1

# ---- 24.6: an unknown field in task.json: "invalid task", exit 2 (bad input) ----
cp -r $task "$t/lang"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["lang"]="cuda"; json.dump(d,open(sys.argv[1],"w"))' "$t/lang/task.json"
check_output "validate: a task.json with an unknown field says the task is invalid" \
    '^specgen validate: invalid task: .*lang/task.json: unknown field "lang"' \
    "$SPECGEN" validate "$t/lang" --device opencl
check_fails "  ... and exits 2 (bad input), not 1 (a verdict)" 2 "$SPECGEN" validate "$t/lang" --device opencl
check_output "  ... with a candidate too, and no verdict is printed" '^specgen validate: invalid task:' \
    bash -c "$SPECGEN validate $t/lang $task/baseline.cl 2>&1 | grep -v '^rejected'"
check_output "profile: the same, exit 2" '^specgen profile: invalid task: .*unknown field "lang".*rc=2$' \
    bash -c "$SPECGEN profile $t/lang $task/baseline.cl 2>&1 | tr '\n' ' '; echo rc=\${PIPESTATUS[0]}"
check_output "validate --help documents exit 2 for an invalid task" '2 usage error or an invalid task' \
    bash -c "$SPECGEN validate --help | tr '\n' ' '"
# Every task.json example of docs/architecture.md and docs/task-format.md loads.
mkdir -p "$t/docs"
python3 $fx/doc_tasks.py "$t/docs" docs/architecture.md docs/task-format.md >"$t/docs.list"
n=0 good=0
while read -r d; do
    n=$((n + 1))
    out=$("$SPECGEN" validate "$d" --device opencl --compile-only 2>&1)
    if [ $? -ne 2 ] && ! grep -q 'invalid task' <<<"$out"; then good=$((good + 1)); else echo "# $d: $out"; fi
done <"$t/docs.list"
check_output "every task.json example in docs/ loads ($good of $n; at least 6)" '^([6-9]|[1-9][0-9]) \1$' echo "$n $good"

# ---- 24.9: task init's kernel path and text are checked before anything is written ----
mkfifo "$t/fifo.cu"
check_output "task init: a FIFO kernel path is refused at once, not waited on" \
    'fifo.cu: cannot read: it is a FIFO \(named pipe\), not a file' \
    timeout 5 "$SPECGEN" task init "$t/fifo.cu" --out "$t/fifo"
check_output "validate: a FIFO candidate is refused at once" 'candidate .*fifo.cu: cannot read: it is a FIFO' \
    timeout 5 "$SPECGEN" validate $task "$t/fifo.cu" --device opencl
check_output "profile: a FIFO candidate is refused at once" 'candidate .*fifo.cu: cannot read: it is a FIFO' \
    timeout 5 "$SPECGEN" profile $task "$t/fifo.cu" --device opencl
check_output "validate -: a candidate from stdin is still read" '^compiled' \
    bash -c "$SPECGEN validate $task - --device opencl --compile-only <$task/baseline.cl 2>&1 | head -1"
{ head -c 60 $fx/scale.cl; printf '\0'; tail -c +61 $fx/scale.cl; } >"$t/nul.cl"
check_output "task init: a NUL byte is named with its line and offset" \
    'nul.cl: the source holds a NUL byte \(line 2, offset 60\)' \
    "$SPECGEN" task init "$t/nul.cl" --out "$t/nul"
check_output "  ... and writes no folder" '^absent$' bash -c "test -e $t/nul && echo present || echo absent"
{ cat $fx/scale.cl; printf '// caf\xe9\n'; } >"$t/latin1.cl"
check_output "task init: a non-UTF-8 kernel is refused, naming the byte" \
    'latin1.cl: the source is not valid UTF-8 \(byte 0xe9 at line [0-9]+, offset [0-9]+\)' \
    "$SPECGEN" task init "$t/latin1.cl" --out "$t/latin1"
check_output "  ... before anything is written: no folder" '^absent$' bash -c "test -e $t/latin1 && echo present || echo absent"

# ---- 24.9: __has_include probes follow the #include rules ----
probe() { # NAME LANG: a candidate of the task (vector_scale) that probes NAME
    { printf '#if __has_include(%s)\n#error found\n#endif\n' "$1"; grep -v '^//@' $task/baseline.$2; } >"$t/probe.$2"
}
for lang in cl cu; do
    dev=opencl
    [ $lang = cu ] && dev=cuda
    if [ $lang = cl ] && [ $have_cl = 0 ]; then skip "__has_include on PoCL" "no OpenCL platform"; continue; fi
    if [ $lang = cu ] && [ $have_nvrtc = 0 ]; then skip "__has_include on NVRTC" "no NVRTC"; continue; fi
    opts="--device $dev"
    [ $lang = cu ] && opts="--device cuda --compile-only --arch sm_90a"
    for f in '"/etc/passwd"' '"/etc/no-such-file"'; do
        probe "$f" $lang
        check_output "$dev: __has_include($f) is refused like #include, whether it exists or not" \
            "^rejected: .*probe.$lang: line 1: __has_include\\($f\\) is not allowed: only files inside the task folder may be included" \
            "$SPECGEN" validate $task "$t/probe.$lang" $opts
    done
    probe '"Makefile"' $lang # exists in the worker's current folder, not in the task folder
    check_output "$dev: a relative name outside the task folder is refused (not looked up from the current folder)" \
        '^rejected: .*line 1: __has_include\("Makefile"\): no such file in the task folder' \
        "$SPECGEN" validate $task "$t/probe.$lang" $opts
    probe '<sys/stat.h>' $lang
    check_output "$dev: __has_include(<sys/stat.h>) is refused like #include <sys/stat.h>" \
        '^rejected: .*line 1: __has_include\(<sys/stat.h>\) is not allowed' "$SPECGEN" validate $task "$t/probe.$lang" $opts
    { printf '#define P "/etc/passwd"\n#if __has_include(P)\n#endif\n'; grep -v '^//@' $task/baseline.$lang; } >"$t/probe.$lang"
    check_output "$dev: __has_include of a macro is refused (a file must be named literally)" \
        '^rejected: .*line 2: __has_include must name a file literally' "$SPECGEN" validate $task "$t/probe.$lang" $opts
    { printf '#if __has_include_next("/etc/passwd")\n#endif\n'; grep -v '^//@' $task/baseline.$lang; } >"$t/probe.$lang"
    check_output "$dev: __has_include_next is checked the same way" \
        '^rejected: .*line 1: __has_include\("/etc/passwd"\) is not allowed' "$SPECGEN" validate $task "$t/probe.$lang" $opts
    probe "\"baseline.$lang\"" $lang
    { printf '#if defined(__has_include)\n#if __has_include("baseline.%s")\n#endif\n#endif\n' $lang; grep -v '^//@' $task/baseline.$lang; } >"$t/probe.$lang"
    check_output "$dev: defined(__has_include) and a probe of a task-folder file are fine" '^(pass|compiled)' \
        "$SPECGEN" validate $task "$t/probe.$lang" $opts
done

# ---- 24.9: a candidate without //@launch lines runs the baseline's plan, and is told so ----
if [ $have_cl = 1 ]; then
    grep -v '^//@' $task/baseline.cl >"$t/noplan.cl"
    check_output "a candidate with no //@launch line passes, saying it ran the baseline's plan" \
        "^pass: .*\(no //@launch lines: ran with the baseline's launch plan\)" "$SPECGEN" validate $task "$t/noplan.cl"
    check_output "  ... a candidate with its own plan is not told so" '^pass: .*rel error [0-9.e-]+$' \
        "$SPECGEN" validate $task $task/baseline.cl
else
    skip "a candidate with no //@launch line on PoCL" "no OpenCL platform"
fi
finish
