#!/usr/bin/env bash
# A campaign over a folder of KernelBench-format problems (docs/kernelbench.md) on PoCL with
# the replay LLM (tests/fixtures/kernelbench_traces): each NAME.py is imported when its task
# starts; one that cannot import is recorded as a task that could not run, with the
# importer's reason. --tasks '1*' keeps it short: 1_ReLUScale (its trace's kernel meets the
# target) and 10_TupleOut (does not import). Skipped when the Python specgen uses has no torch.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
need_opencl "a campaign over KernelBench problems on PoCL"
need_torch "a campaign over KernelBench problems"
f=tests/fixtures/kernelbench
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
# SPECGEN_DATA: the prompts and torchref of this checkout, whichever build runs (build-asan/bin too)
export SPECGEN_DATA=$SPECGEN_ROOT
out=$(cd "$tmp" && timeout 600 "$SPECGEN" campaign "$SPECGEN_ROOT/$f" --trace \
    "$SPECGEN_ROOT/tests/fixtures/kernelbench_traces" --device opencl --out camp --db r.db \
    --task-budget-time 120s --concurrency 2 --tasks '1*' 2>camp.log)
rc=$?
check "campaign over the folder: exit 3 (one problem could not import)" test "$rc" = 3
check_output "campaign: 1_ReLUScale met its target with the replayed OpenCL kernel" \
    '1_ReLUScale +[0-9.]+x' echo "$out"
check_output "campaign: the failed import is recorded with the importer's reason" \
    '10_TupleOut: could not run: cannot import' cat "$tmp/camp.log"
# fast_p over the campaign: the failed import counts in the denominator (2 problems); the
# one correct problem's speedup (as the campaign printed it) decides fast_1 and fast_2
best=$(sed -n 's/^1_ReLUScale *\([0-9.]*\)x.*/\1/p' <<<"$out")
check "fastp --json: 2 problems, 1 not run, fast_0 0.5, fast_p by the printed speedup, over torch eager" \
    "$SPECGEN" results --db "$tmp/r.db" fastp --json --out "$tmp/fastp.json"
check "fastp --json: the figures, by hand" python3 -c "
import json, sys
d = json.load(open('$tmp/fastp.json'))
assert len(d) == 1, d
c, best = d[0], float('${best:-0}')
assert (c['problems'], c['not_run'], c['correct']) == (2, 1, 1), c
assert c['fast_0'] == 0.5 and c['fast_1'] == (0.5 if best > 1 else 0), c
assert c['fast_2'] == (0.5 if best > 2 else 0), c
assert c['baseline'] == 'torch-eager' and c['precision'] == 'fp32' and c['kb_checked'] == 1, c
"
check "the database: the failed import's row says where it came from (its file; no hash)" \
    python3 -c "
import sqlite3
r = sqlite3.connect('$tmp/r.db').execute(
    \"select status, origin_format, origin_file, origin_sha256 from task where name = '10_TupleOut'\").fetchone()
assert r[0] == 'skipped' and r[1] == 'kernelbench' and r[2].endswith('/10_TupleOut.py') and r[3] is None, r
"
check "report: written" "$SPECGEN" report --db "$tmp/r.db" -o "$tmp/report.html"
check_output "report: its fast_p section" 'fast_p: the share of the problems' cat "$tmp/report.html"
finish
