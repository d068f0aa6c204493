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

# ---- 24.7: task init's counts, 2-D launches, index ranges and guesses ----
init() { "$SPECGEN" task init "$@" 2>&1; }
check_output "a row pointer offset by idx*T (idx < n*T, row[t], t < T) counts n*T*T" \
    'count of out: n\*T\*T elements.*count of scores: n\*T\*T elements' \
    bash -c "$(declare -f init); init $fx/row_offset.cu --out $t/rows | tr '\n' ' '"
check_output "a 2-D tiled matmul (CUDA): counts M*K, N*K, M*N, C out, a 2-D grid from both guards and the tile" \
    'count of A: M\*K .*count of B: N\*K .*count of C: M\*N .*grid=ceil_div\(N,16\),ceil_div\(M,16\) block=16,16.*buffer C: out f32' \
    bash -c "$(declare -f init); init $fx/tiled_matmul.cu --out $t/mmcu | tr '\n' ' '"
check_output "  ... which proves it: no guess listed" '^none$' \
    bash -c "grep -q '\"guesses\"' $t/mmcu/task.json && echo some || echo none"
if [ $have_nvrtc = 1 ]; then
    check_output "  ... and both compile with NVRTC" '^compiled.*compiled' bash -c \
        "$SPECGEN validate $t/mmcu --device cuda --compile-only --arch sm_90a | head -1; $SPECGEN validate $t/rows --device cuda --compile-only --arch sm_90a | head -1"
fi
check_output "a 2-D tiled matmul (OpenCL, get_group_id * TILE): grid=ceil_div(N,8),ceil_div(M,8) block=8,8" \
    'launch: mm_tiles grid=ceil_div\(N,8\),ceil_div\(M,8\) block=8,8' init $fx/tiled_matmul.cl --out $t/mmcl
check_output "an embedding table indexed by ids: its rows are the unused integer, shown as a guess" \
    'count of table: vocab\*width elements \(its rows: .*a guess\).*guesses the body does not prove .*  - count of table: vocab\*width' \
    bash -c "$(declare -f init); init $fx/token_embed.cl --out $t/emb | tr '\n' ' '"
check_output "  ... task.json keeps the guesses" '"guesses": \[ +"count of table: vocab\*width' bash -c "tr -d '\n' <$t/emb/task.json"
check_output "  ... the index buffer's values follow the size they index at every shape" \
    '"init": "randint\(0,vocab-1\)"' cat $t/emb/task.json
sed 's/int rows, int vocab, int width/int rows, int width/' $fx/token_embed.cl >"$t/emb_v.cl"
check_output "with --count table=V*width: ids get randint(0,V-1), not randint(0,100)" \
    'init of ids: randint\(0,V-1\): its values index table, whose rows are V at every shape' \
    init "$t/emb_v.cl" --count table=V*width --size V=50257 --out $t/embv
check_output "  ... the check shapes shrink V (to 1 and 9)" '"V": 1 *\}.*"V": 9' bash -c "tr -d '\n' <$t/embv/task.json"
check_output "the unguarded kernel's guesses: launch, counts, scalar" \
    '  - launch: grid=1 block=256.*  - count of x: 1 \(no index seen.*  - scalar len = 1' \
    bash -c "$(declare -f init); init $fx/unguarded.cl --out $t/ung | tr '\n' ' '"
# randint with size expressions: checked at load at every shape
cp -r $t/embv $t/embv0 && sed -i 's/"randint(0,V-1)"/"randint(0,V-2)"/' $t/embv0/task.json
check_output "randint(0,V-2) at a check shape with V=1 is refused at load, naming the shape" \
    'invalid task: .*buffers\[1\]": at shape "check_sizes\[0\]": init "randint\(0,V-2\)": lo 0 is above hi -1' \
    "$SPECGEN" validate $t/embv0 --device opencl
sed -i 's/"randint(0,V-2)"/"randint(0,Q-1)"/' $t/embv0/task.json
check_output "  ... and an unknown size in it is named" "invalid task: .*init \"randint\(0,Q-1\)\".*unknown size name 'Q'" \
    "$SPECGEN" validate $t/embv0 --device opencl
if [ $have_cl = 1 ]; then
    check_output "the OpenCL tiled matmul validates on PoCL with the inferred 2-D launch" '^pass' "$SPECGEN" validate $t/mmcl
    check_output "the embedding task validates on PoCL (ids stay inside the table at vocab=1, 9, 256)" '^pass' "$SPECGEN" validate $t/emb
    check_output "the V-hinted task validates on PoCL (ids inside V at V=1 and 9)" '^pass' "$SPECGEN" validate $t/embv
    check_output "a baseline that fails its own reference lists task init's guesses" \
        '^out_of_bounds: .*the baseline failed its own reference; task init guessed these.*  - launch: grid=1 block=256.*  - count of y: 1' \
        bash -c "$SPECGEN validate $t/ung | tr '\n' ' '"
else
    skip "the inferred tasks on PoCL" "no OpenCL platform"
fi

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
