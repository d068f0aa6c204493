#!/usr/bin/env bash
# Issue 24 (campaign and secrets):
#  - item 3: bad suites under Valgrind (a suite.json entry with no task.json: its message
#    was printed from freed JSON; a broken task.json, an empty suite, a missing suite, a
#    task listed twice, --resume with a missing database): no invalid read, clear messages;
#  - item 5: a campaign whose --out is read-only (a read-only tmpfs in a private mount
#    namespace; root and unshare -m, skipped otherwise) exits 1, "no task could run"; one
#    where some tasks could not run says how many in its last line and exits 3;
#  - item 9: a busy output folder leaves no "running" row (skipped, with the reason); a
#    task folder named with a newline cannot print a fake progress line; the printed
#    resume command keeps --out and runs again the tasks that could not run;
#  - item 8: --llm http://user:s3cretpw@... (optimize and campaign, against replay-llm)
#    reaches the server, and s3cretpw is nowhere: console, output files, database, report,
#    export; nor in the messages of a malformed --llm or --pool URL.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "campaign hardening on PoCL"
out=$TMPDIR_TEST
demo=$SPECGEN_ROOT/suites/demo
spec_bin=$(cd "$(dirname "$SPECGEN")" && pwd)/$(basename "$SPECGEN")
sql() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$@"; }

# ---- item 3: bad suites under Valgrind ----
mkdir -p "$out/bad/none" "$out/bad/broken/b1" "$out/bad/empty"
ln -s "$demo/relu_bias" "$out/bad/relu"
echo '{"tasks": ["relu", "none"]}' >"$out/bad/suite.json"
echo '{"tasks": ["relu", "./relu"]}' >"$out/bad/dup.json"
echo '{"name": "b1",' >"$out/bad/broken/b1/task.json"
# Under the sanitizers (make test-asan) the binary checks its own reads: Valgrind cannot run
# an ASan binary, so the same cases run bare there (an invalid read aborts, not exit 1).
checker=(valgrind -q --error-exitcode=99 --leak-check=no)
[ -n "${SPECGEN_ASAN:-}" ] && checker=()
if [ -n "${SPECGEN_ASAN:-}" ] || command -v valgrind >/dev/null; then
    vg() { # DESC PATTERN ARGS...: no Valgrind error (exit 99), exit 1, the message
        local desc=$1 pattern=$2 log rc
        shift 2
        log=$("${checker[@]}" "$SPECGEN" campaign "$@" --device opencl 2>&1)
        rc=$?
        if [ $rc -eq 1 ] && grep -qE -- "$pattern" <<<"$log"; then ok "$desc"; else
            not_ok "$desc (exit $rc, wanted 1; 99: Valgrind found an error)"
            printf '%s\n' "$log" | head -30 | sed 's/^/#   /'
        fi
    }
    vg "valgrind: a suite.json entry with no task.json is named, no invalid read" \
        "suite [^ ]*/suite.json: tasks\[1\] 'none' has no task.json$" "$out/bad/suite.json" --db none
    vg "valgrind: a broken task.json: the task could not run, none ran" \
        "b1: could not run: [^ ]*/b1/task.json:2:" "$out/bad/broken" --db "$out/bad/b.db"
    vg "valgrind: an empty suite" "suite [^ ]*/empty has no task$" "$out/bad/empty" --db none
    vg "valgrind: a missing suite" "suite [^ ]*/nonexistent: No such file" "$out/bad/nonexistent" --db none
    vg "valgrind: a task listed twice is refused, naming both places" \
        "lists the task relu twice: tasks\[0\] \([^)]*/relu\) and tasks\[1\] \([^)]*/\./relu\)" \
        "$out/bad/dup.json" --db none
    vg "valgrind: --resume with a missing database is refused, naming it" \
        "--resume 3: the results database [^ ]*/missing.db: No such file" "$demo" --db "$out/bad/missing.db" --resume 3
else
    skip "bad suites under Valgrind" "valgrind is not installed"
fi
if [ -e "$out/bad/missing.db" ]; then not_ok "--resume created no database"; else ok "--resume created no database"; fi
check_output "a task that could not run is recorded as skipped, with its reason" \
    '^b1\|skipped\|[^|]*task.json:2:' sql "$out/bad/b.db" "select name, status, error from task"
check_output "  ... and the campaign in which none ran as an error" '^error$' sql "$out/bad/b.db" "select status from campaign"

# ---- item 5: a read-only --out ----
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    mkdir -p "$out/ro"
    log=$(unshare -m bash -c '
        mount -t tmpfs -o ro,size=64k tmpfs "$1" || exit 99
        "$2" campaign suites/demo --db "$3" --out "$1/run"
        echo "exit=$?"' _ "$out/ro" "$spec_bin" "$out/ro.db" 2>&1)
    if [ $? -eq 99 ]; then
        skip "a read-only --out: no task could run, exit 1" "cannot mount a tmpfs here"
    else
        printf '%s\n' "$log" | grep -E 'could not run|exit=' | sed 's/^/# /'
        check_output "a read-only --out: exit 1" '^exit=1$' echo "$log"
        check_output "  ... each task says why it could not run" \
            "row_sum: could not run: .*/ro/run: Read-only file system" echo "$log"
        check_output "  ... and the end says that none could" 'no task could run \(3 of 3' echo "$log"
        check_output "  ... three rows skipped with the reason, none running" '^3\|0$' \
            sql "$out/ro.db" "select sum(status='skipped' and error like '%Read-only%'), sum(status='running') from task"
    fi
else
    skip "a read-only --out: no task could run, exit 1" "needs root and unshare -m for a read-only tmpfs"
fi

# ---- items 5 and 9: some tasks could not run (a busy output folder, a broken task whose
# folder name holds a newline), the resume command ----
evil=$'evil\n[    9.9s] fake: target after 1.00 s, best 99.00x (candidate 1)'
mkdir -p "$out/mix/$evil" "$out/mix-out/row_sum"
ln -s "$demo/relu_bias" "$out/mix/relu_bias"
ln -s "$demo/row_sum" "$out/mix/row_sum"
echo '{' >"$out/mix/$evil/task.json"
# the lock of a run that uses the folder (the sleep holds it: killing it frees the folder)
bash -c 'exec 9<"$1" && flock 9 && exec sleep 60' _ "$out/mix-out/row_sum" &
lockpid=$!
on_exit "kill $lockpid"
held=0
for _ in $(seq 100); do flock -n "$out/mix-out/row_sum" true || { held=1; break; }; sleep 0.05; done
if [ $held = 1 ]; then ok "(setup) another run holds row_sum's output folder"; else
    not_ok "(setup) another run holds row_sum's output folder"; fi
"$SPECGEN" campaign "$out/mix" --speed 20 --db "$out/mix.db" --out "$out/mix-out" >"$out/mix.log" 2>&1
rc=$?
sed 's/^/# /' "$out/mix.log"
if [ $rc -eq 3 ]; then ok "some tasks could not run: exit 3"; else not_ok "some tasks could not run: exit 3 (got $rc)"; fi
check_output "  ... the last line says how many" '^specgen campaign: 2 of 3 tasks could not run' tail -n 1 "$out/mix.log"
check_output "  ... the summary counts them" '1 done, 0 failed, 0 skipped, 2 could not run' cat "$out/mix.log"
check_output "a busy output folder: the task is skipped with the reason, no row is left running" \
    '^row_sum\|skipped\|the output folder .* is in use by another specgen run' \
    sql "$out/mix.db" "select name, status, error from task where name='row_sum' and (select count(*) from task where status='running')=0"
if grep -q '^\[    9.9s\] fake' "$out/mix.log"; then not_ok "a newline in a task folder's name prints no fake line"; else
    ok "a newline in a task folder's name prints no fake line"; fi
check_output "  ... the name is shown escaped" 'evil\\n\[    9.9s\] fake: .*: could not run' cat "$out/mix.log"
check_output "the resume command keeps --out and --db" \
    "^resume: +specgen campaign [^ ]*/mix --resume 1 --speed 20 --db [^ ]*/mix.db --out [^ ]*/mix-out$" cat "$out/mix.log"
kill $lockpid 2>/dev/null
wait $lockpid 2>/dev/null
cmd=$(sed -n 's/^resume: *specgen //p' "$out/mix.log")
before=$(sql "$out/mix.db" "select id, started from task where name='relu_bias'")
eval "\"\$SPECGEN\" $cmd" >"$out/resume.log" 2>&1
rc=$?
if [ $rc -eq 3 ]; then ok "the resume command runs (the broken task still cannot: exit 3)"; else
    not_ok "the resume command runs (exit $rc, wanted 3)"; sed 's/^/#   /' "$out/resume.log"; fi
check_output "  ... the busy task ran this time; the one that ended is kept as it was" "^target\|$before\$" \
    sql "$out/mix.db" "select (select status from task where name='row_sum'), id, started from task where name='relu_bias'"

# ---- item 8: credentials in --llm URLs ----
port=$(pick_port)
"$SPECGEN" replay-llm --trace prompts/traces --listen "127.0.0.1:$port" --speed 20 \
    --fault 503:times=1 >"$out/replay.log" 2>&1 &
on_exit "kill $!"
wait_port "$port"
url="http://user:s3cretpw@127.0.0.1:$port"
sec=$out/sec
mkdir -p "$sec"
"$SPECGEN" --log-level debug optimize suites/demo/relu_bias --device opencl --llm "$url" \
    --model replay --db "$sec/r.db" --out "$sec/opt" >"$sec/opt.log" 2>&1
check_output "optimize --llm with credentials in the URL reaches the server" '^target$' \
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"])' "$sec/opt/summary.json"
"$SPECGEN" campaign suites/demo --tasks 'relu*' --llm "$url,$url" --model replay --db "$sec/r.db" \
    --out "$sec/camp" >"$sec/camp.log" 2>&1
check_output "campaign --llm with credentials in the URLs (two endpoints) runs" '1 done, 0 failed' cat "$sec/camp.log"
check_output "the stored configs name the endpoints without their credentials" \
    "^optimize\|http://\*\*\*@127.0.0.1:$port campaign\|http://\*\*\*@127.0.0.1:$port,http://\*\*\*@127.0.0.1:$port\$" \
    sql "$sec/r.db" "select group_concat(kind || '|' || json_extract(config, '\$.llm'), ' ') from campaign"
"$SPECGEN" report --db "$sec/r.db" -o "$sec/report.html" >"$sec/report.log" 2>&1
"$SPECGEN" results export --db "$sec/r.db" --format json -o "$sec/export.json" >"$sec/export.log" 2>&1
"$SPECGEN" results campaigns --db "$sec/r.db" --json >"$sec/campaigns.json" 2>&1
python3 -c "import sqlite3,sys; print('\n'.join(sqlite3.connect(sys.argv[1]).iterdump()))" "$sec/r.db" >"$sec/dump.sql"
check_output "  ... the report, the export and the dump were written" '^3$' \
    bash -c "ls '$sec/report.html' '$sec/export.json' '$sec/dump.sql' | wc -l"
check_output "a refused request's retry is logged, naming the endpoint without credentials" \
    "http://\*\*\*@127.0.0.1:$port/v1/chat/completions: .*retry 1 of" cat "$sec/opt.log"
check_output "s3cretpw is in no file written, no dump, no export, no console line" '^0$' \
    bash -c "grep -rla s3cretpw '$sec' | tee /dev/stderr | wc -l"
# The request keeps the credentials (libcurl sends them as Basic authentication): what a
# listener on loopback receives from llm-check.
cport=$(pick_port)
python3 - "$cport" "$out/heard.txt" <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); s.settimeout(20)
data = b""
while b"\r\n\r\n" not in data:  # wait_port's probe connects and sends nothing
    c, _ = s.accept(); c.settimeout(5); data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(4096)
        if not d: break
        data += d
    c.close()
open(sys.argv[2], "wb").write(data)
PY
on_exit "kill $!"
wait_port "$cport"
check_output "llm-check: the console hides the credentials" '^0$' \
    bash -c "timeout 20 '$SPECGEN' llm-check --llm 'http://user:s3cretpw@127.0.0.1:$cport' --model m 2>&1 | grep -c s3cretpw"
check_output "  ... and the request carries them (Basic user:s3cretpw)" \
    "^Authorization: Basic $(printf user:s3cretpw | base64)" tr -d '\r' <"$out/heard.txt"
check_output "a malformed --llm URL: its message hides the credentials" "'ftp://\*\*\*@h/x' must start" \
    "$SPECGEN" optimize suites/demo/relu_bias --llm "ftp://user:s3cretpw@h/x" --model m --db none --out "$out/m"
check_output "a malformed --pool URL: its message hides the credentials" "'ftp://\*\*\*@h' is not an http" \
    "$SPECGEN" campaign suites/demo --pool "ftp://user:s3cretpw@h" --db none --out "$out/m"
finish
