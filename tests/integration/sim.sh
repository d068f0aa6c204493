#!/usr/bin/env bash
# `specgen sim`: the real task loop, trigger policy, criterion, device port and pool
# scheduler on modelled LLM and GPUs in virtual time. The same seeds give the same bytes;
# specgen beats each baseline on end-to-end time and on profiling feedback (the direction,
# not a tuned number); bad inputs get clear errors; the KV cache's two tiers and fork
# placement (issue 27) have their rows, and --no-kvstore removes only the second tier. --db records simulated campaigns that
# `results` and `report` show (same seed, same rows apart from wall-clock columns), and
# sim/eval.sh (make bench-sim) writes the evaluation page: tables, published figures, SVG.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
out=$TMPDIR_TEST
check "sim --compare runs" bash -c "'$SPECGEN' sim --compare --seeds 1-2 --tasks 20 >'$out/a' 2>'$out/a.err'"
"$SPECGEN" sim --compare --seeds 1-2 --tasks 20 >"$out/b" 2>/dev/null
check "the same seeds give the same output, byte for byte" cmp "$out/a" "$out/b"
check_output "wall-clock times go to stderr, not to the table" 'of wall time' cat "$out/a.err"
if grep -q 'wall time' "$out/a"; then not_ok "the table holds no wall-clock time"; else ok "the table holds no wall-clock time"; fi
cat "$out/a" | sed 's/^/#   /'
# a row's field: the name is the first 22 characters, then e2e, (span), first, feedback
field() { python3 -c "
import sys
for l in open(sys.argv[1]):
    if l[:22].strip() == sys.argv[2]: print(l[22:].split()[int(sys.argv[3])]); break" "$out/a" "$1" "$2"; }
e2e() { field "$1" 0; }
fb() { field "$1" 3; }
for b in sequential parallel:4 probe:1000; do
    check "specgen's end-to-end time is shorter than $b's" \
        python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$(e2e specgen)" "$(e2e $b)"
    check "specgen gets more profiling feedback than $b" \
        python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$(fb specgen)" "$(fb $b)"
done
# the fair baselines (issue 27): every family at its best on a work-conserving pool, with
# paired 95% intervals, and the new policies run on their own
check_output "--compare shows each baseline family at its best with an interval" \
    '^  (sequential|parallel:[0-9]) .* e2e [0-9.]+x \[[0-9.]+-[0-9.]+\]  feedback [0-9.]+x \[' cat "$out/a"
for fam in 'workers:[0-9]' 'probe:[0-9]+' 'probe-exit:[0-9]+'; do
    check_output "--compare has a fair row for ${fam%%:*}" "^  $fam (elastic|static) +paper " cat "$out/a"
done
check_output "--compare names the best fair baseline" '^  the best fair baseline on this workload: ' cat "$out/a"
# the KV cache (issue 27): two tiers and fork placement, ablation rows with intervals
check_output "--compare has the KV cache block (kvstore on, forks placed by prefix)" \
    '^the KV cache \(specgen: kvstore on, --kv-placement prefix' cat "$out/a"
for v in 'no kvstore' 'load' 'load, no kvstore' 'prefix:0'; do
    check_output "--compare's KV cache block has the row 'specgen $v'" \
        "^  specgen $v +e2e +[0-9.]+ s  e2e [0-9.]+x \\[[0-9.]+-[0-9.]+\\]" cat "$out/a"
done
# --no-kvstore removes the second tier only: on the reference workload (no KV capacity, a
# 400K prefix cache per instance) every fork finds its prefix in its own instance's cache,
# so specgen without the kvstore is specgen (it used to lose the prefix cache too)
check "--no-kvstore keeps the instances' own prefix caches (reference: specgen's row, byte for byte)" \
    cmp <("$SPECGEN" sim --seeds 1-2 --tasks 20 2>/dev/null | tail -1) \
    <("$SPECGEN" sim --seeds 1-2 --tasks 20 --no-kvstore 2>/dev/null | tail -1)
check "--kv-placement load moves forks off their prefix's instance (fitted, 50 tasks: another row)" \
    bash -c "! cmp -s <('$SPECGEN' sim --workload fitted --seeds 1 --tasks 50 2>/dev/null | tail -1) \
        <('$SPECGEN' sim --workload fitted --seeds 1 --tasks 50 --kv-placement load 2>/dev/null | tail -1)"
check_output "--kv-placement prefix:4 runs" '^specgen ' "$SPECGEN" sim --seeds 1 --tasks 4 --kv-placement prefix:4
check_fails "a bad --kv-placement is a usage error" 2 "$SPECGEN" sim --kv-placement near
check_output "a bad --kv-placement is named" "'near' is not prefix, prefix:N" "$SPECGEN" sim --kv-placement near
check_output "a workload's kvstore without a link is refused" 'kvstore_gb_s and kv_bytes_per_token must be above 0' \
    bash -c "echo '{\"kvstore_tokens\": 1000, \"kvstore_gb_s\": 0}' >'$out/wk.json'; '$SPECGEN' sim --workload '$out/wk.json'"
check_output "sim --policy workers:2 runs" '^workers:2 ' "$SPECGEN" sim --policy workers:2 --seeds 1 --tasks 4
check_output "sim --policy probe-exit:500 runs" '^probe-exit:500 ' "$SPECGEN" sim --policy probe-exit:500 --seeds 1 --tasks 4
check_output "--sweep ranks the knobs and says where the defaults stand" \
    'the defaults \(s150 f1 no-stop h0.2\) rank [0-9]+ of 192' "$SPECGEN" sim --sweep --seeds 1 --tasks 3
check_output "a workload's unknown field is named" "unknown field 'decode'" \
    bash -c "echo '{\"decode\": 3}' >'$out/w.json'; '$SPECGEN' sim --workload '$out/w.json'"
check_output "the reference workload file loads" '^workload reference' "$SPECGEN" sim --workload sim/workloads/reference.json --seeds 1 --tasks 2
check_fails "bad seeds are a usage error" 2 "$SPECGEN" sim --seeds 5-1
check_output "an unknown policy is named" "greedy" "$SPECGEN" sim --policy greedy
for row in "preempt stale" "far-target first" "near-target first"; do
    check_output "--compare's candidate policies have the row \"specgen $row\"" "^  specgen $row " cat "$out/a"
done
# the order must act: each task's distance comes from its best timed speedup (a merge once
# left every distance at the target over 1, and the rows equal to specgen's)
check_output "--by-distance far changes the run (its e2e differs from specgen's)" '^differs$' \
    bash -c "b=\$(awk '\$1 == \"specgen\" && NF > 5 { print \$2; exit }' '$out/a')
        f=\$(awk '/^  specgen far-target first/ { print \$5 }' '$out/a')
        [ -n \"\$b\" ] && [ -n \"\$f\" ] && [ \"\$b\" != \"\$f\" ] && echo differs || echo \"same: \$b \$f\""
check_fails "a bad --by-distance is a usage error" 2 "$SPECGEN" sim --by-distance closest
check_output "a bad --by-distance is named" "by-distance 'closest': expected far, near or off" \
    "$SPECGEN" sim --by-distance closest
# a running stale validation yields its slot: the fitted workload's seed 2 has some (job_preempt; 1 before the KV tiers, 2 after)
check_output "--preempt-stale preempts a running validation in the sim (1-3 there)" '^[1-3]$' bash -c \
    "'$SPECGEN' sim --preempt-stale --workload fitted --tasks 50 --seeds 2 --db '$out/pre.db' >/dev/null 2>&1 &&
     python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from event where ev = ?\", (\"job_preempt\",)).fetchone()[0])' '$out/pre.db'"
# ---- recording into the results database ----
for x in 1 2; do
    "$SPECGEN" sim --compare --seeds 1-2 --tasks 4 --db "$out/r$x.db" >"$out/r$x.txt" 2>"$out/r$x.err"
done
check "recording does not change the table" cmp "$out/r1.txt" <("$SPECGEN" sim --compare --seeds 1-2 --tasks 4 2>/dev/null)
check_output "results campaigns lists 9 configurations x 2 seeds as simulated campaigns" '^18 +sim +sim:reference specgen no forks seed 2 +done' \
    "$SPECGEN" results campaigns --db "$out/r1.db"
"$SPECGEN" results export --format json --db "$out/r1.db" >"$out/r1.json"
"$SPECGEN" results export --format json --db "$out/r2.db" >"$out/r2.json"
check "every table of a simulated campaign is filled (tasks, iterations, forks, candidates, jobs, splits, events)" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
empty = [t for t in ('campaign', 'task', 'iteration', 'generation', 'candidate', 'job', 'pool_split', 'event') if not d[t]]
tasks = [t for t in d['task'] if t['status'] in ('target', 'budget_iterations') and t['tokens']]
sys.exit(1 if empty or len(tasks) != len(d['task']) or len(d['task']) != 72 else 0)" "$out/r1.json"
check "the same seeds record the same rows, apart from the wall-clock columns" python3 -c "
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b):
    for t in ('campaign', 'task'):
        for r in d[t]:
            r.pop('started'); r.pop('ended')
sys.exit(0 if a == b and a['event'] else 1)" "$out/r1.json" "$out/r2.json"
check_output "results tasks shows a simulated campaign's tasks" '^[0-9]+ +1 +sim-0 +' "$SPECGEN" results tasks --campaign 1 --db "$out/r1.db"
"$SPECGEN" report --db "$out/r1.db" --campaign 1 -o "$out/r1.html" >/dev/null 2>&1
check_output "the report marks a simulated campaign" 'campaign 1 \(simulated\)' cat "$out/r1.html"

# ---- the evaluation page (make bench-sim's sim/eval.sh, small) ----
mkdir -p "$out/e1" "$out/e2"
for x in 1 2; do
    SPECGEN="$SPECGEN" SIM_SEEDS=1-2 SIM_FAIR_SEEDS=1-3 SIM_TASKS=4 SIM_LOAD_TASKS=6 sim/eval.sh "$out/e$x/eval.md" 2>/dev/null
done
check "sim/eval.sh writes the page and the plots" test -s "$out/e1/eval.md" -a -s "$out/e1/eval/fitted/utilisation.svg"
check "the page is the same, byte for byte, on the same seeds" diff -r "$out/e1" "$out/e2"
check "the page has the compare table for both workloads and the load run" python3 -c "
import sys
t = open(sys.argv[1]).read()
need = ['*workload reference: 4 tasks', '*workload fitted: 4 tasks', '*workload fitted: 6 tasks']
ok = all(n in t for n in need) and t.count('| **specgen** |') == 3 and t.count('| early stop |') == 3
ok = ok and '@' + '@' not in t and '@SEEDS@' not in t and '@FAIR' not in t
ok = ok and t.count('| baseline at its best |') == 3 and '### What is beaten and what is not' in t
ok = ok and t.index('| baseline at its best |') < t.index('| **specgen** |')  # it leads
ok = ok and not [l for l in t.splitlines() if l.startswith(('|', '- vs')) and 'wall' in l]
sys.exit(0 if ok else 1)" "$out/e1/eval.md"
check_output "the page puts the published figures beside ours" \
    '^\| end-to-end time, baseline / specgen \| 1\.68–1\.82× \| [0-9.]+–[0-9.]+× \|$' cat "$out/e1/eval.md"
check "the page's plots exist and are valid SVG with a line per configuration" python3 -c "
import re, sys, os, xml.etree.ElementTree as E
md = sys.argv[1]
links = re.findall(r'!\[[^]]*\]\(([^)]+\.svg)\)', open(md).read())
ns = '{http://www.w3.org/2000/svg}'
for l in links:
    root = E.parse(os.path.join(os.path.dirname(md), l)).getroot()
    lines = [p for p in root.iter(ns + 'path') if p.get('stroke') and p.get('fill') == 'none']
    if root.tag != ns + 'svg' or len(lines) != 4: sys.exit(1)
sys.exit(0 if len(links) == 4 else 1)" "$out/e1/eval.md"
check_output "a workload is found by its name" '^workload fitted' "$SPECGEN" sim --workload fitted --seeds 1 --tasks 2
check_output "an unknown workload name is named" "no workload named 'nosuch'" "$SPECGEN" sim --workload nosuch
finish
