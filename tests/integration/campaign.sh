#!/usr/bin/env bash
# `specgen campaign` on the demo suite (embedded replay, one trace per task, PoCL): a whole
# run recorded in the database; SIGKILL in the middle, then --resume: nothing that ended
# is lost or repeated (counted from the database); SIGTERM stops with 130 and prints the
# resume command; --tasks and suite.json choose tasks; bad inputs get clear errors.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "campaign on PoCL"
out=$TMPDIR_TEST
sql() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$@"; }

# A whole campaign.
check "the demo suite runs as a campaign" "$SPECGEN" campaign suites/demo --speed 3 --db "$out/a.db" --out "$out/a"
check_output "three tasks ended, none still running, none failed" '^3\|0\|0$' \
    sql "$out/a.db" "select count(*), sum(status='running'), sum(status='error') from task"
check_output "the campaign row says done" '^campaign\|done$' sql "$out/a.db" "select kind, status from campaign"
check_output "candidates carry their source and lineage" '^[1-9][0-9]*$' \
    sql "$out/a.db" "select count(*) from candidate where source is not null and (origin='final' or fork is not null)"
check_output "jobs were recorded per slot" '^[1-9][0-9]*$' sql "$out/a.db" "select count(*) from job where slot_name like 'opencl:%'"
check "each task wrote its folder" test -s "$out/a/row_sum/summary.json"

# SIGKILL after the first task ended, then resume.
db=$out/k.db
"$SPECGEN" campaign suites/demo --concurrency 1 --speed 3 --db "$db" --out "$out/k" >"$out/k.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
    n=$(sql "$db" "select count(*) from task where status!='running'" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 1 ] && break
    sleep 0.1
done
# the second task is under way: it has recorded an event
for _ in $(seq 300); do
    n=$(sql "$db" "select count(*) from event e join task t on e.task=t.id where t.status='running'" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 1 ] && break
    sleep 0.05
done
kill -KILL $pid
wait $pid 2>/dev/null
# a task's signature: name, candidates, events and jobs recorded
sig="select t.name||':'||count(c.id)||':'||(select count(*) from event e where e.task=t.id)||':'||(select count(*) from job j where j.task=t.id) from task t left join candidate c on c.task=t.id"
before=$(sql "$db" "$sig where t.status!='running' group by t.id")
echo "# ended before the kill: $before"
if [ -n "$before" ]; then ok "a task had ended before the SIGKILL"; else not_ok "a task had ended before the SIGKILL"; fi
check "--resume continues the campaign" "$SPECGEN" campaign suites/demo --concurrency 1 --speed 3 \
    --db "$db" --out "$out/k" --resume 1
check_output "after the resume: three tasks, each once, all ended, none failed" '^3\|3\|0\|0$' \
    sql "$db" "select count(*), count(distinct name), sum(status='running'), sum(status='error') from task"
after=$(sql "$db" "$sig group by t.id")
lost=0
for row in $before; do grep -qx "$row" <<<"$after" || lost=1; done
if [ $lost -eq 0 ]; then ok "what ended before the kill is unchanged (candidates, events, jobs)"; else
    not_ok "what ended before the kill is unchanged"; echo "#   before: $before"; echo "#   after: $after"; fi
check_output "the campaign ended done" '^done$' sql "$db" "select status from campaign where id=1"

# SIGTERM: exit 130 and the resume command. At the trace's pace (--speed 1): the run must
# outlast the wait for its start plus a second, which at --speed 3 a fast machine need not
# (progress.sh's campaign ended in under 2 s there); the start is waited for up to 60 s
# (a loaded machine), not 10.
"$SPECGEN" campaign suites/demo --speed 1 --db "$out/t.db" --out "$out/t" >"$out/t.log" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q 'started' "$out/t.log" 2>/dev/null && break; sleep 0.1; done
sleep 1
kill -TERM $pid
wait $pid
rc=$?
if [ $rc -eq 130 ]; then ok "SIGTERM: exit 130"; else not_ok "SIGTERM: exit 130 (got $rc)"; sed 's/^/#   /' "$out/t.log"; fi
check_output "SIGTERM: the resume command is printed" 'resume: +specgen campaign suites/demo --resume 1' cat "$out/t.log"
check_output "SIGTERM: the campaign is recorded as stopped" '^stopped$' sql "$out/t.db" "select status from campaign"

# Choosing tasks.
check_output "--tasks picks by name" 'row_sum: started' "$SPECGEN" campaign suites/demo --tasks 'row*' --speed 3 \
    --db none --out "$out/g"
mkdir -p "$out/x" && ln -s "$SPECGEN_ROOT/suites/demo/relu_bias" "$out/x/relu"
echo '{"tasks": ["relu"]}' >"$out/x/suite.json"
check_output "a suite.json lists task folders (relative to it)" 'relu: started' \
    "$SPECGEN" campaign "$out/x/suite.json" --speed 3 --db none --out "$out/j"

# Bad inputs.
check_output "a missing suite is named" "suite no/such: No such file" "$SPECGEN" campaign no/such --db none
check_output "no task matches the glob" "has no task matching 'zz\*'" "$SPECGEN" campaign suites/demo --tasks 'zz*' --db none
check_output "--resume of an unknown campaign" "has no campaign 42" "$SPECGEN" campaign suites/demo --db "$out/a.db" --resume 42
check_output "--resume without a database" "--resume needs the results database" "$SPECGEN" campaign suites/demo --db none --resume 1
check_fails "--concurrency 0 is a usage error" 2 "$SPECGEN" campaign suites/demo --concurrency 0
finish
