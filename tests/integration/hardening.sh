#!/usr/bin/env bash
# Hostile inputs to validate, profile and kvstore (issue 17, items 9, 10, 11, 13, 14): each
# gets a clear verdict or message naming the file, line and limit, and memory stays bounded.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
task=suites/demo/vector_scale
t=$TMPDIR_TEST
have_cl=0
command -v clinfo >/dev/null && clinfo -l 2>/dev/null | grep -q Platform && have_cl=1 # not needed by most

# ---- 13: files read with a limit (a source over 4 MiB, a trace over 64 MiB) ----
head -c 5000000 /dev/zero | tr '\0' ' ' >"$t/big.cl"
check_output "validate: a 5 MB candidate is refused, naming the limit" \
    "big.cl: cannot read: larger than the limit of 4194304 bytes" \
    "$SPECGEN" validate $task "$t/big.cl" --compile-only
check_output "validate: a candidate from /dev/zero is refused (the read stops at the limit)" \
    "larger than the limit" timeout 5 "$SPECGEN" validate $task /dev/zero --compile-only
check_output "profile: a 5 MB candidate is refused, naming the limit" \
    "big.cl: cannot read: larger than the limit of 4194304 bytes" \
    "$SPECGEN" profile $task "$t/big.cl"
check_output "replay-llm: a trace file from /dev/zero is refused, naming the limit" \
    "/dev/zero: cannot read: larger than the limit of 67108864 bytes" \
    timeout 5 "$SPECGEN" replay-llm --trace /dev/zero --listen 127.0.0.1:0
cp -r $task "$t/bigbase"
cp "$t/big.cl" "$t/bigbase/baseline.cl"
check_output "optimize: a 5 MB baseline is refused, naming the limit" \
    "baseline.cl: cannot read: larger than the limit of 4194304 bytes" \
    "$SPECGEN" optimize "$t/bigbase" --device opencl --llm http://127.0.0.1:9 --model m --out "$t/o1"

# ---- 9: a NUL byte in a candidate is a rejection, not a dead worker ----
{ head -n 2 $task/baseline.cl; printf '/* \0 */\n'; tail -n +3 $task/baseline.cl; } >"$t/nul.cl"
check_output "validate: a NUL byte is rejected with its line" \
    "^rejected: the source holds a NUL byte \(line 3, offset [0-9]+\)" \
    "$SPECGEN" validate $task "$t/nul.cl" --compile-only
check_fails "and validate exits 1" 1 "$SPECGEN" validate $task "$t/nul.cl" --compile-only

# ---- 11: more than 64 //@launch lines is refused, naming the limit and the line ----
{ for i in $(seq 65); do echo "//@launch vector_scale grid=ceil_div(N,8) block=8"; done
  tail -n +3 $task/baseline.cl; } >"$t/many.cl"
check_output "validate: a 65th //@launch line is refused, naming the line and the limit" \
    "^rejected: .*many.cl:65: more than 64 //@launch lines" \
    "$SPECGEN" validate $task "$t/many.cl" --compile-only

# ---- 13: the scratch of one plan is capped (three scratch buffers of 1 GiB) ----
if [ $have_cl = 1 ]; then
    { sed -n 2p $task/baseline.cl
      for i in 1 2 3; do echo "//@scratch s$i f32 268435456"; done
      tail -n +3 $task/baseline.cl; } >"$t/scratch.cl"
    check_output "validate: 3 GiB of scratch is refused with the limit" \
        "^launch_error: //@scratch s3: the plan's scratch buffers take 3221225472 bytes .*over the limit of 2147483648 bytes" \
        "$SPECGEN" validate $task "$t/scratch.cl" --device opencl --run-timeout 20s
else
    skip "validate: 3 GiB of scratch is refused" "no OpenCL platform"
fi

# ---- 14: messages name the value given ----
check_output "kvstore --memory 1M names 1048576 bytes, not 0" \
    "needs at least 2 MiB \(got 1048576 bytes\)" "$SPECGEN" kvstore --memory 1M --listen 127.0.0.1:0
check_output "optimize --target -1 is refused" "^specgen optimize: --target: '-1' must be 0\.01\.\.1000" \
    "$SPECGEN" optimize $task --target -1 --out "$t/tneg"
check_fails "  ... as a usage error" 2 "$SPECGEN" optimize $task --target -1 --out "$t/tneg"

# ---- 14: a candidate without //@launch keeps its own line numbers (the baseline's plan
# lines go after it, not before) ----
tail -n +3 $task/baseline.cl | sed '3i #include "/etc/hostname"' >"$t/inc.cl"
check_output "validate: an include on line 3 of a candidate without //@launch is named line 3" \
    "^rejected: .*inc.cl: line 3: #include \"/etc/hostname\" is not allowed" \
    "$SPECGEN" validate $task "$t/inc.cl" --compile-only
if [ $have_cl = 1 ]; then
    tail -n +3 $task/baseline.cl | sed '2s/;$/ +;/' >"$t/syntax.cl"
    check_output "validate: the compiler's log names the candidate's own line (2)" \
        "\.cl:2:[0-9]+: (error: )?expected expression" \
        "$SPECGEN" validate $task "$t/syntax.cl" --device opencl --run-timeout 20s
else
    skip "validate: the compiler's log names the candidate's own line" "no OpenCL platform"
fi

# ---- 14: a long path or expression keeps the message's reason (the middle is cut) ----
long=$t/$(printf 'a%.0s' $(seq 250))/$(printf 'b%.0s' $(seq 250))/$(printf 'c%.0s' $(seq 250))/$(printf 'd%.0s' $(seq 250))
mkdir -p "$long"
cp "$t/inc.cl" "$long/inc.cl"
check_output "validate: a 1000-character path keeps the reason at the end of the message" \
    "^rejected: $t/a+\.\.\.[bcd/]+/inc.cl: line 3: #include .* only files inside the task folder may be included$" \
    "$SPECGEN" validate $task "$long/inc.cl" --compile-only
{ echo "//@launch vector_scale grid=$(printf 'N+%.0s' $(seq 600))x block=8"; tail -n +3 $task/baseline.cl; } >"$t/longexpr.cl"
check_output "validate: a 1200-character size expression keeps the reason at the end" \
    "^rejected: bad launch plan: .*longexpr.cl:1: grid=: size expression \"N\+N.*\.\.\..*N\+x\": unknown size name 'x' at offset 1200$" \
    "$SPECGEN" validate $task "$t/longexpr.cl" --compile-only

# ---- 14: task init --size refuses a value it cannot hold (it saturated, or wrapped) ----
tail -n +3 $task/baseline.cl >"$t/vs.cl"
check_output "task init --size n=99999999999999999999 is refused as too large" \
    "--size: 'n=99999999999999999999': the value is too large \(the most is 9223372036854775807\)" \
    "$SPECGEN" task init "$t/vs.cl" --size n=99999999999999999999 --out "$t/ti1"
check_fails "  ... as a usage error, writing nothing" 2 \
    "$SPECGEN" task init "$t/vs.cl" --size n=99999999999999999999 --out "$t/ti1"
check_output "task init --size n=3000000000 for an int parameter is refused" \
    "--size n=3000000000: parameter n of kernel vector_scale is i32; the most it holds is 2147483647" \
    "$SPECGEN" task init "$t/vs.cl" --size n=3000000000 --out "$t/ti2"
check "  ... and no task folder was written" test ! -e "$t/ti1/task.json" -a ! -e "$t/ti2/task.json"

# ---- the worker that compiles and runs candidates keeps no API keys in its environment ----
if [ $have_cl = 1 ]; then
    OPENAI_API_KEY=sk-issue17-secret SPECGEN_API_KEY=sg-issue17-secret MY_DB_PASSWORD=pw-issue17 \
        POCL_ISSUE17=kept "$SPECGEN" validate $task tests/hostile/opencl/infinite_loop.cl \
        --device opencl --run-timeout 30s >/dev/null 2>&1 &
    vpid=$!
    on_exit "kill $vpid"
    worker=
    for _ in $(seq 100); do worker=$(pgrep -P $vpid | head -1); [ -n "$worker" ] && break; sleep 0.1; done
    # the worker has exec'd (its environment is the one it runs the candidate with)
    for _ in $(seq 100); do grep -qs __dev-worker /proc/"${worker:-0}"/cmdline && break; sleep 0.05; done
    penv=$(tr '\0' '\n' </proc/$vpid/environ 2>/dev/null)
    wenv=$(tr '\0' '\n' </proc/"${worker:-0}"/environ 2>/dev/null)
    check_output "the parent holds the keys (the test can see them)" "^OPENAI_API_KEY=sk-issue17-secret" echo "$penv"
    check_output "the worker running the candidate still has PATH and POCL_*" "^PATH=.*POCL_ISSUE17=kept|^POCL_ISSUE17=kept.*" \
        bash -c 'printf "%s\n" "$1" | grep -E "^(PATH|POCL_ISSUE17)=" | sort | paste -sd" "' _ "$wenv"
    check_output "no OPENAI_API_KEY, SPECGEN_API_KEY or *PASSWORD* in the worker's /proc/PID/environ" "^0$" \
        bash -c 'printf "%s\n" "$1" | grep -c -E "issue17-secret|pw-issue17"' _ "$wenv"
    kill $vpid 2>/dev/null
    wait $vpid 2>/dev/null
else
    skip "the worker keeps no API keys in its environment" "no OpenCL platform"
fi

finish
