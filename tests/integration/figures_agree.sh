#!/usr/bin/env bash
# figures_agree.sh — one campaign (suites/demo, the embedded replay at --speed 4, PoCL) and
# every figure it reports read from each place that shows it: the console (on a terminal,
# with its status lines), summary.json, events.jsonl, the database, `specgen results` and
# the report. Tokens, candidate numbers, times and speedups must read the same, and ids
# must join (figures_agree.py says which figure disagreed, where, and both values). Also:
# `sim --db` names the campaigns it recorded.
source "$(dirname "$0")/../lib.sh"
need_opencl "figures agree: the campaign runs the demo suite on OpenCL"
T=$TMPDIR_TEST
PY="python3 $(dirname "$0")/figures_agree.py"
R() { "$SPECGEN" results --db "$T/r.db" "$@"; }

# the status line is drawn on a terminal only: script(1) gives the campaign one
cmd=("$SPECGEN" campaign "$SPECGEN_ROOT/suites/demo" --db "$T/r.db" --out "$T/out" --speed 4
    --device opencl)
if command -v script >/dev/null; then
    check "a campaign of the demo suite, on a terminal" \
        script -qefc "$(printf '%q ' "${cmd[@]}")" "$T/console.txt"
else
    check "a campaign of the demo suite (no script(1): no status line)" \
        bash -c "$(printf '%q ' "${cmd[@]}") > '$T/console.txt' 2>&1"
fi
R tasks --json > "$T/tasks.json"
R best --json > "$T/best.json"
for id in $(R query "SELECT best_candidate_id FROM task" --csv | tail -n +2); do
    R show "$id" --json > "$T/show-$id.json"
done
"$SPECGEN" report --db "$T/r.db" -o "$T/report.html" >/dev/null 2>&1

check "tokens: status lines never go down and end at the database's total; each task's the same in summary, events, rows, results and report" $PY tokens "$T"
check "candidates: the console's, summary's, events', results' and report's number is task.best_n; ids join" $PY candidates "$T"
check "times: one campaign clock (task.start_ms + the task's own), elapsed alike everywhere, no absurd waits" $PY times "$T"
check "speedups: alike everywhere; the feedback's times are the stored medians" $PY speedups "$T"

check_output "schema: the database is at the current version" '^5$' R query "PRAGMA user_version"
check_output "sim --db, one seed: its one campaign's id" 'recorded as simulated campaign 2$' \
    "$SPECGEN" sim --db "$T/r.db" --tasks 2 --seeds 1-1
check_output "sim --db, two seeds: the range" 'recorded as simulated campaigns 3-4$' \
    "$SPECGEN" sim --db "$T/r.db" --tasks 2 --seeds 1-2
check_output "sim: tasks start on the campaign's clock, job iterations are the task's own" '^0$' \
    R query "SELECT count(*) FROM job j JOIN task t ON t.id = j.task WHERE t.campaign >= 2 AND (j.iteration >= 4294967296 OR t.start_ms IS NULL OR j.started_ms < t.start_ms)"
finish
