#!/usr/bin/env bash
# results.sh — `specgen results` and `specgen report` on a fixture database: one real
# optimize run of the demo task (--db), plus rows added with python3's sqlite3 (a candidate
# whose source and message hold <script>, a second campaign). Every subcommand in text and
# --json; bad references; read-only and failing databases stop cleanly; the report renders
# in headless Chromium (skipped when chromium is missing).
source "$(dirname "$0")/../lib.sh"
need_opencl "results: the fixture needs the demo run on OpenCL"
T=$TMPDIR_TEST
DB=$T/r.db
R() { "$SPECGEN" results --db "$DB" "$@"; }

# --target 1.3, not the demo's 2.0: the queries below need a run that met its target in
# iteration 1 by an early stop. The demo's baseline and trace were changed on 2026-12-02 for
# that (docs/replay-trace.md: the float4 fork measures ~3-4x, and 6 s of reasoning follow
# it); the lower target is a second margin. optimize.sh checks the demo itself.
check "fixture: optimize the demo task into --db" \
    "$SPECGEN" optimize "$SPECGEN_ROOT/suites/demo/vector_scale" --db "$DB" --out "$T/out" \
    --target 1.3
# The inserted final candidate measures 99.5x: above anything the demo measures on a loaded
# PoCL (13.5x was seen), so it is the best whatever the run timed.
# the demo's run may differ in detail: take a correct candidate of a fork from it
F=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT n FROM candidate WHERE origin = 'fork' AND verdict = 'pass' ORDER BY n LIMIT 1\").fetchone()[0])" "$DB")
python3 - "$DB" <<'PY' || not_ok "fixture: extra rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("""INSERT INTO candidate (task, n, iteration, origin, status, hash, source, verdict,
    correct, speedup, message, created_ms, done_ms) VALUES (1,
    (SELECT max(n) + 1 FROM candidate WHERE task = 1), 1, 'final', 'submitted',
    'feedbeef', '<script>document.title="pwned"</script>
__kernel void k() {}', 'pass', 1, 99.5,
    '<script>alert(1)</script> in a message', 9000, 9100)""")
db.execute("UPDATE task SET best_speedup = 99.5, best_n = (SELECT max(n) FROM candidate "
           "WHERE task = 1), best_candidate_id = (SELECT max(id) FROM candidate WHERE task = 1) "
           "WHERE id = 1")
db.execute("""INSERT INTO campaign (kind, suite, config, started, status) VALUES
    ('campaign', 'suites/demo', '{}', '2026-01-01T00:00:00Z', 'done')""")
db.execute("""INSERT INTO task (campaign, name, dir, started, status) VALUES
    (2, 'other_task', 'suites/demo/other', '2026-01-01T00:00:00Z', 'budget_time')""")
db.commit()
PY

# ---- campaigns, tasks, best
check_output "campaigns: a table with both campaigns" '^2 +campaign +suites/demo' R campaigns
check "campaigns --json" bash -c "'$SPECGEN' results --db '$DB' campaigns --json | python3 -c \"import json,sys; d=json.load(sys.stdin); assert [c['kind'] for c in d]==['optimize','campaign'], d\""
check_output "tasks: the demo task with its status and best" '^1 +1 +vector_scale +target +99\.5' R tasks
check "tasks --campaign 2 --json: only that campaign's" bash -c "'$SPECGEN' results --db '$DB' tasks --campaign 2 --json | python3 -c \"import json,sys; d=json.load(sys.stdin); assert [t['name'] for t in d]==['other_task'], d\""
check_fails "tasks --campaign 99: no such campaign" 1 R tasks --campaign 99
check_output "... and the error names it" 'no campaign 99 in .*campaigns lists them' R tasks --campaign 99
check_output "best: the best correct kernel per task" '^vector_scale +99\.5 +' R best
check "best --task vector_scale --json" bash -c "'$SPECGEN' results --db '$DB' best --task vector_scale --json | python3 -c \"import json,sys; d=json.load(sys.stdin); assert len(d)==1 and d[0]['speedup']==99.5 and 'script' in d[0]['origin'] + 'script', d\""
check_output "best --task nosuch: named in the error" "no task 'nosuch'" R best --task nosuch

# ---- candidates, show
check_output "candidates --task vector_scale" '^[0-9]+ +[0-9]+ +1 +fork +[0-9]+ +code_block' R candidates --task vector_scale
check_output "candidates --csv: a header line" '^id,n,iteration,origin,fork,rule' R candidates --task 1 --csv
check_fails "candidates without --task: usage" 2 R candidates
check_multi "show TASK:N: source, verdict, lineage, jobs" 'lineage:(.|\n)*rule +code_block(.|\n)*jobs:(.|\n)*validate +on(.|\n)*source:(.|\n)*__kernel' R show vector_scale:$F
check "show --json: lineage to the fork point" bash -c "'$SPECGEN' results --db '$DB' show vector_scale:$F --json | python3 -c \"import json,sys; d=json.load(sys.stdin); l=d['lineage']; assert l['kind']=='fork' and l['fork']==d['fork'] and l['at_tokens']==d['at_tokens'] and l['at_tokens']>0 and d['verdict']=='pass' and d['source'] and len(d['jobs'])==2, d\""
check_output "show 999: no such candidate" 'no candidate with id 999' R show 999
check_output "show vector_scale:99" 'no candidate 99 in task 1' R show vector_scale:99
check_output "show nosuch:1" "no task 'nosuch'" R show nosuch:1
check_output "show abc: says what a reference looks like" 'expected a candidate id .* or TASK:N' R show abc

# ---- iterations, timeline
check_output "iterations --task vector_scale" '^1 +1 +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+ +99\.5' R iterations --task vector_scale
check_multi "timeline: the iteration's events" 'iteration_start(.|\n)*fork(.|\n)*candidate(.|\n)*job_start(.|\n)*early_stop' R timeline --iteration vector_scale:1
check "timeline --json: in time order, data as objects" bash -c "'$SPECGEN' results --db '$DB' timeline --iteration 1 --json | python3 -c \"import json,sys; d=json.load(sys.stdin); t=[e['t_ms'] for e in d]; assert t==sorted(t) and len(t)>5 and isinstance(d[0]['data'], dict), d\""
check_output "timeline of a missing iteration" 'no iteration 7 in task 1' R timeline --iteration vector_scale:7

# ---- export, query
check "export --format json: every table" bash -c "'$SPECGEN' results --db '$DB' export --format json | python3 -c \"import json,sys; d=json.load(sys.stdin); assert sorted(d)==sorted(['campaign','task','iteration','generation','candidate','job','pool_split','event']) and len(d['candidate'])>=3, list(d)\""
check_output "export --format csv --table candidate" '^id,task,n,iteration,origin' R export --format csv --table candidate
check "export --format csv -o DIR: one file per table" bash -c "'$SPECGEN' results --db '$DB' export --format csv -o '$T/csv' && [ \$(ls '$T/csv' | wc -l) -eq 8 ]"
check_output "export --format csv alone: says how" 'one table: name it with --table' R export --format csv
check_output "query: a read" '^vector_scale +[0-9]+$' R query "SELECT t.name, count(*) AS n FROM candidate c JOIN task t ON t.id = c.task GROUP BY 1"
check "query --json" bash -c "'$SPECGEN' results --db '$DB' query 'SELECT 1 AS one' --json | python3 -c \"import json,sys; assert json.load(sys.stdin)==[{'one':1}]\""
before=$(sha256sum "$DB")
check_fails "query: a write is refused" 1 R query "DELETE FROM candidate"
check_output "... with a message that says why" 'would change the database; .* only reads' R query "UPDATE task SET name = 'x'"
check_output "query: PRAGMA writes too" 'would change the database' R query "PRAGMA user_version = 7"
check_output "query: one statement at a time" 'one statement at a time' R query "SELECT 1; DELETE FROM task"
check_output "query: SQL errors are shown" 'no such table: nope' R query "SELECT * FROM nope"
if [ "$(sha256sum "$DB")" = "$before" ]; then ok "the refused writes changed nothing"; else not_ok "the refused writes changed nothing"; fi

# ---- fastp on the real run: campaign 1 (the demo, correct at 99.5x) and campaign 2 (a
# task that got no kernel): every task counts, fast_p as KernelBench reports it
check "fastp --json: every task counted, fast_p per campaign" bash -c "'$SPECGEN' results --db '$DB' fastp --json | python3 -c \"import json,sys; d=json.load(sys.stdin); f=[(c['campaign'],c['problems'],c['correct'],c['fast_0'],c['fast_1'],c['fast_2']) for c in d]; assert f==[(1,1,1,1,1,1),(2,1,0,0,0,0)], d\""
check_output "fastp: a table with the thresholds asked" '^campaign +kind +suite +problems +not_run +correct +fast_0 +fast_1\.5 ' R fastp --p 0,1.5
check_output "fastp --p bad: says what it takes" "thresholds >= 0 separated by commas" R fastp --p 1,x
check_fails "fastp --p bad: usage" 2 R fastp --p -1
check_output "export --kernelbench of an OpenCL run: refused, says why" 'is OpenCL, and KernelBench runs CUDA' R export --kernelbench vector_scale -o "$T/mn.py"
if [ ! -e "$T/mn.py" ]; then ok "... and no file written"; else not_ok "... and no file written"; fi

# ---- bad databases and usage
check_output "no database: says how to make one" 'no results database at .*/none.db: `specgen optimize TASK --db' "$SPECGEN" results --db "$T/none.db" campaigns
cp "$DB" "$T/newer.db"
python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute('PRAGMA user_version = 99'); d.commit()" "$T/newer.db"
: >"$T/empty.db"
check_output "an empty file" 'empty.db is not a specgen results database' "$SPECGEN" results --db "$T/empty.db" tasks
check_output "a newer schema is refused" 'schema version 99; this specgen knows up to' "$SPECGEN" results --db "$T/newer.db" tasks
head -c 8192 /dev/urandom >"$T/junk.db"
check_output "a file that is not a database" 'junk.db.*not a database' "$SPECGEN" results --db "$T/junk.db" tasks
check_fails "unknown subcommand: usage" 2 R bogus
check_fails "--json and --csv together: usage" 2 R tasks --json --csv
check_multi "--help teaches with examples" 'Examples:(.|\n)*results show vector_scale:2' "$SPECGEN" results --help

# ---- optimize on a read-only or failing database: a clear error, nothing half-written.
# Root ignores file modes: run those as nobody (setpriv), where the modes hold.
as_user() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ] && ! command -v setpriv >/dev/null; then
    skip "read-only database" "root without setpriv: file modes would not hold"
elif ! as_user "$SPECGEN" --version >/dev/null 2>&1 || ! as_user test -r "$SPECGEN_ROOT/suites/demo/vector_scale/task.json"; then
    skip "read-only database" "user nobody cannot run $SPECGEN or read the suites (a private checkout)"
else
    mkdir -p "$T/ro" "$T/rodir" "$T/ro/out"
    chmod 755 "$T" "$T/ro"; chmod 777 "$T/ro/out"
    cp "$DB" "$T/ro/r.db"; chmod 444 "$T/ro/r.db"; chmod 555 "$T/rodir"
    sum=$(sha256sum "$T/ro/r.db")
    out=$(as_user "$SPECGEN" optimize "$SPECGEN_ROOT/suites/demo/vector_scale" --db "$T/ro/r.db" --out "$T/ro/out" 2>&1); rc=$?
    if [ $rc -eq 1 ] && grep -q "results database $T/ro/r.db: .*read-only" <<<"$out"; then ok "optimize --db on a read-only file: exit 1, says so"; else not_ok "optimize --db on a read-only file (exit $rc): $out"; fi
    if [ "$(sha256sum "$T/ro/r.db")" = "$sum" ]; then ok "... the file is unchanged"; else not_ok "... the file is unchanged"; fi
    out=$(as_user "$SPECGEN" optimize "$SPECGEN_ROOT/suites/demo/vector_scale" --db "$T/rodir/r.db" --out "$T/ro/out" 2>&1); rc=$?
    if [ $rc -eq 1 ] && grep -q "rodir/r.db: cannot open.*not writable" <<<"$out"; then ok "optimize --db in a read-only folder: exit 1, says so"; else not_ok "optimize --db in a read-only folder (exit $rc): $out"; fi
    if [ ! -e "$T/rodir/r.db" ]; then ok "... nothing was created"; else not_ok "... nothing was created"; fi
fi
# A write that fails mid-run (a file size limit, as a full disk would): exit 1, and what was
# committed is whole (integrity check, no candidate without its source).
out=$( (trap '' XFSZ; ulimit -f 100; exec "$SPECGEN" optimize "$SPECGEN_ROOT/suites/demo/vector_scale" --db "$T/full.db" --out "$T/full-out") 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "results database $T/full.db: .*disk" <<<"$out"; then ok "a failing write stops the run: exit 1, names the file"; else not_ok "a failing write stops the run (exit $rc): $out"; fi
check "... and leaves a whole database" python3 -c "
import sqlite3,sys; d=sqlite3.connect(sys.argv[1])
assert d.execute('PRAGMA integrity_check').fetchone()[0]=='ok'
tabs=[r[0] for r in d.execute(\"SELECT name FROM sqlite_master WHERE type='table'\")]
assert 'candidate' not in tabs or d.execute(\"SELECT count(*) FROM candidate WHERE status='submitted' AND source IS NULL\").fetchone()[0]==0
" "$T/full.db"

# ---- report
check "report -o FILE" "$SPECGEN" report --db "$DB" --campaign 1 -o "$T/report.html"
check_output "report --help shows the short option" '-o, --out FILE' "$SPECGEN" report --help
check_fails "report without -o: usage" 2 "$SPECGEN" report --db "$DB"
check_output "report --campaign 9: no such campaign" 'no campaign 9' "$SPECGEN" report --db "$DB" --campaign 9 -o "$T/x.html"
if [ ! -e "$T/x.html" ] && [ ! -e "$T/x.html.tmp" ]; then ok "... and no file left"; else not_ok "... and no file left"; fi
if ! grep -qi '<script' "$T/report.html" && grep -q '&lt;script&gt;document.title' "$T/report.html"; then
    ok "report: model text escaped"; else not_ok "report: model text escaped"; fi
if ! grep -qiE '(src|href)="?(https?:)?//' "$T/report.html"; then ok "report: nothing fetched"; else not_ok "report: nothing fetched"; fi
if grep -q '<h2>fast_p</h2>' "$T/report.html" && grep -q '<td>100.0% (1 of 1)</td>' "$T/report.html"; then
    ok "report: the fast_p section with the campaign's figures"; else not_ok "report: the fast_p section"; fi
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
    skip "report renders in headless Chromium" "chromium is not installed (make deps installs it)"
    skip "report: <script> shows as text in the DOM" "chromium is not installed"
else
    cflags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/chrome")
    # one Chromium run: the screenshot, and the DOM it built (read below)
    dom=$(timeout 120 "$chrome" "${cflags[@]}" --screenshot="$T/shot.png" --window-size=1000,2400 \
        --dump-dom "file://$T/report.html" 2>"$T/chrome.log")
    # bars of the speedup chart (#4e79a7 / green #59a14f), forks (#b07aa1), jobs (#f28e2b)
    px=$(python3 "$SPECGEN_ROOT/tests/integration/png_pixels.py" "$T/shot.png" '#4e79a7' '#59a14f' '#b07aa1' '#f28e2b' 2>&1)
    echo "# screenshot pixels (non-white, blue, green, purple, orange): $px"
    read -r nonwhite blue green purple orange <<<"$px"
    if [ "${nonwhite:-0}" -gt 20000 ] && [ "${blue:-0}" -gt 500 ] && [ "${green:-0}" -gt 500 ] &&
        [ "${purple:-0}" -gt 200 ] && [ "${orange:-0}" -gt 200 ]; then
        ok "report renders in headless Chromium: the charts are drawn"
    else not_ok "report renders in headless Chromium ($px)"; cat "$T/chrome.log"; fi
    if grep -q '&lt;script&gt;document.title="pwned"&lt;/script&gt;' <<<"$dom" &&
        ! grep -qi '<script' <<<"$dom" && grep -q '<title>specgen report' <<<"$dom"; then
        ok "report: <script> shows as text in the DOM"
    else not_ok "report: <script> shows as text in the DOM"; fi
fi
finish
