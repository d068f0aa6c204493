#!/usr/bin/env bash
# A campaign over KernelBench-format problems (docs/kernelbench.md) with --precision fp16: the
# imports and the results database keep the precision and its tolerances, a bad --precision
# or --baseline is a usage error naming the allowed values, and a problem's import runs as
# a child process beside the running tasks. That last one: 2_Slow (written below) is
# 1_ReLUScale's problem whose module-level code waits (in the importer's first run of it, up
# to 90 s) until 1_ReLUScale's task has ended (its summary.json exists). With the import off the loop, 1_ReLUScale runs and
# ends while 2_Slow imports, and 2_Slow starts after it. An import run inside the loop (the
# old code) blocks 1_ReLUScale for the whole wait: 2_Slow started first, and 1_ReLUScale's
# events all came after its start. Skipped when the Python specgen uses has no torch.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT"
f=tests/fixtures/kernelbench
check_output "campaign --precision fp64: a usage error naming the allowed values" \
    "--precision: 'fp64': expected fp32, fp16 or bf16" "$SPECGEN" campaign "$f" --precision fp64
check_output "campaign --baseline torch-jit: a usage error naming the allowed values" \
    "--baseline: 'torch-jit': expected torch-eager or torch-compile" \
    "$SPECGEN" campaign "$f" --baseline torch-jit
check_output "task init --precision fp8: the same error" \
    "--precision: 'fp8': expected fp32, fp16 or bf16" "$SPECGEN" task init "$f/1_ReLUScale.py" \
    --precision fp8
need_opencl "a campaign over KernelBench problems on PoCL"
need_torch "a campaign over KernelBench problems"
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
mkdir "$tmp/suite" "$tmp/traces"
cp "$f/1_ReLUScale.py" "$tmp/suite/"
# the importer runs the file several times: only its first run waits
cat >"$tmp/suite/2_Slow.py" <<PY
import os, time

_t0 = time.time()  # a slow module: it waits for the other task's end (at most 90 s), once
while not any(os.path.exists(p) for p in ("$tmp/camp/1_ReLUScale/summary.json", "$tmp/waited")):
    if time.time() - _t0 > 90:
        break
    time.sleep(0.2)
open("$tmp/waited", "a").write("%.1f s\n" % (time.time() - _t0))
$(cat "$f/1_ReLUScale.py")
PY
t=tests/fixtures/kernelbench_traces/relu_scale.jsonl
cp "$t" "$tmp/traces/"
sed 's/Task `1_ReLUScale`/Task `2_Slow`/' "$t" >"$tmp/traces/slow.jsonl"
export SPECGEN_DATA=$SPECGEN_ROOT
(cd "$tmp" && timeout 600 "$SPECGEN" campaign suite --trace traces --device opencl --out camp \
    --db r.db --task-budget-time 120s --concurrency 2 --precision fp16 >out.txt 2>camp.log)
rc=$?
check "campaign --precision fp16: exit 0 (both problems imported and ran)" test "$rc" = 0
check_output "the imports are fp16: f16 buffers" '"type": "f16"' \
    cat "$tmp/camp/1_ReLUScale/task/task.json"
check "the imports are fp16: precision fp16, tolerance 1e-2 (KernelBench's for fp16)" \
    python3 -c "
import json
for n in ('1_ReLUScale', '2_Slow'):
    t = json.load(open('$tmp/camp/%s/task/task.json' % n))
    out = [b for b in t['buffers'] if b['role'] == 'out'][0]
    assert t['precision'] == 'fp16' and out['atol'] == 0.01 and out['rtol'] == 0.01, (n, t['precision'], out)
"
check "the database: task.precision fp16 and baseline_kind torch-eager on both rows" \
    python3 -c "
import sqlite3
rows = sqlite3.connect('$tmp/r.db').execute('select name, precision, baseline_kind from task order by name').fetchall()
assert rows == [('1_ReLUScale', 'fp16', 'torch-eager'), ('2_Slow', 'fp16', 'torch-eager')], rows
"
check "the database: each task's origin, the problem file and the SHA-256 of its bytes" \
    python3 -c "
import hashlib, sqlite3
for name, fmt, path, sha in sqlite3.connect('$tmp/r.db').execute(
        'select name, origin_format, origin_file, origin_sha256 from task'):
    want = hashlib.sha256(open('$tmp/suite/%s.py' % name, 'rb').read()).hexdigest()
    assert fmt == 'kernelbench' and path.endswith('suite/%s.py' % name) and sha == want, (name, fmt, path, sha)
"
check "fastp --json: precision fp16" "$SPECGEN" results --db "$tmp/r.db" fastp --json \
    --out "$tmp/fastp.json"
check "fastp --json: the campaign's precision" python3 -c "
import json
c = json.load(open('$tmp/fastp.json'))[0]
assert c['precision'] == 'fp16' and c['problems'] == 2, c
"
# the import beside the running task: the campaign's log lines ([  T s] NAME: ...) and the
# database's event times, both on the campaign's clock
check "2_Slow imported while 1_ReLUScale ran: 1_ReLUScale ended before 2_Slow started, and every one of its events came before" \
    python3 - "$tmp" <<'PY'
import re, sqlite3, sys
tmp = sys.argv[1]
log = open(tmp + "/camp.log").read()
print(log, file=sys.stderr)
def at(pattern):
    m = re.search(r"^\[ *([0-9.]+)s\] " + pattern, log, re.M)
    assert m, pattern
    return float(m.group(1))
ended = at(r"1_ReLUScale: (target|budget|error|cancelled|no_|stall)")
started = at(r"2_Slow: started")
db = sqlite3.connect(tmp + "/r.db")
relu_last = db.execute("select max(e.t_ms) from event e join task t on e.task = t.id "
                       "where t.name = '1_ReLUScale'").fetchone()[0]
slow_start = db.execute("select start_ms from task where name = '2_Slow'").fetchone()[0]
waited = open(tmp + "/waited").readline().strip() if __import__("os").path.exists(tmp + "/waited") else "?"
line = ("1_ReLUScale ended at %.1f s (its last event at %.1f s); 2_Slow's import waited %s, "
        "it started at %.1f s (%.1f s in the database)"
        % (ended, relu_last / 1e3, waited, started, slow_start / 1e3))
open(tmp + "/timing.txt", "w").write(line + "\n")
print(line, file=sys.stderr)
assert ended < started, (ended, started)
assert relu_last < slow_start, (relu_last, slow_start)
PY
[ -f "$tmp/timing.txt" ] && sed 's/^/# /' "$tmp/timing.txt"
# the same output folder at another precision: the import there is made again, not reused
(cd "$tmp" && timeout 600 "$SPECGEN" campaign suite --trace traces --device opencl --out camp \
    --db r2.db --task-budget-time 120s --tasks '1*' --precision bf16 >out2.txt 2>camp2.log)
check "a second campaign at --precision bf16 into the same folder: exit 0" test "$?" = 0
check_output "it imports 1_ReLUScale again, saying why" \
    '1_ReLUScale: importing .*again \(the import in its output folder has another --precision' \
    cat "$tmp/camp2.log"
check "the import is bf16 now, and so is the database's row" python3 -c "
import json, sqlite3
t = json.load(open('$tmp/camp/1_ReLUScale/task/task.json'))
r = sqlite3.connect('$tmp/r2.db').execute('select precision from task').fetchall()
assert t['precision'] == 'bf16' and r == [('bf16',)], (t['precision'], r)
"
finish
