#!/usr/bin/env bash
# The pools in `specgen optimize`: two slots on the CPU's OpenCL device (PoCL), the split
# and each role's utilisation in the summary and summary.json, the job and split events in
# events.jsonl, a profile job never sharing its device, and the options' errors.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "pools on PoCL"
out=$TMPDIR_TEST
task=suites/demo/vector_scale
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'): d=d[k]
print(d)" "$1" "$2"; }

check "optimize with two slots per device" "$SPECGEN" optimize $task --device opencl \
    --slots-per-device 2 --speed 3 --out "$out/two"
"$SPECGEN" optimize $task --device opencl --slots-per-device 2 --speed 3 --out "$out/two2" >"$out/two2.log" 2>&1
check_output "the summary shows the pools and each role's use" \
    'pools: +2 slots, now [0-9] validate / [0-9] profile' cat "$out/two2.log"
check_output "  ... and the feedback latency" 'feedback: +[1-9][0-9]* timed candidate' cat "$out/two2.log"
check_output "summary.json: 2 slots, elastic" '^2 elastic$' \
    bash -c "echo \$(python3 -c \"import json; d=json.load(open('$out/two/summary.json'))['pools']; print(d['slots'], d['mode'])\")"
check_output "summary.json: validate and profile jobs were done" '^[1-9][0-9]* [1-9][0-9]*$' \
    bash -c "echo \$(python3 -c \"import json; d=json.load(open('$out/two/summary.json'))['pools']; print(d['validate']['jobs'], d['profile']['jobs'])\")"
check_output "summary.json: utilisation is a share" '^0\.[0-9]+|^1\.0' json "$out/two/summary.json" pools.utilisation
check_output "events.jsonl has job_start and job_end" '"ev":"job_end"' cat "$out/two/events.jsonl"
check_output "no profile job shared its device; every job ended" 'violations: 0' \
    python3 tests/integration/pool_events.py "$out/two/events.jsonl" --min-jobs 4

# The checker itself: a profile job overlapping a validate job on the same device is caught.
printf '%s\n' \
    '{"ev":"job_start","job":1,"slot":0,"slot_name":"opencl:0/0","kind":"validate","t_ms":0}' \
    '{"ev":"job_start","job":2,"slot":1,"slot_name":"opencl:0/1","kind":"profile","t_ms":1}' \
    '{"ev":"job_end","job":1,"kind":"validate","end":"done","t_ms":5}' \
    '{"ev":"job_end","job":2,"kind":"profile","end":"done","t_ms":6}' >"$out/overlap.jsonl"
check_output "the event checker catches a profile job sharing its device" 'violations: 1' \
    bash -c "python3 tests/integration/pool_events.py '$out/overlap.jsonl'; [ \$? -eq 1 ]"

check "a static split runs too" "$SPECGEN" optimize $task --device opencl --slots-per-device 2 \
    --pools static:1/1 --speed 3 --out "$out/static"
check_output "  ... and keeps its roles (no split)" '^0$' json "$out/static/summary.json" pools.splits
check_output "  ... no profile job shared its device" 'violations: 0' \
    python3 tests/integration/pool_events.py "$out/static/events.jsonl" --min-jobs 4

check_output "--pools with a bad value names it" "expected elastic or static:V/P" \
    "$SPECGEN" optimize $task --pools static:3
check_fails "  ... exit 2" 2 "$SPECGEN" optimize $task --pools fair
check_output "a static split that does not add up names both numbers" \
    "static:2/2: that is 4 slots, but there are 2" \
    "$SPECGEN" optimize $task --device opencl --slots-per-device 2 --pools static:2/2 --out "$out/bad"
check_fails "--slots-per-device 0 is a usage error" 2 "$SPECGEN" optimize $task --slots-per-device 0
finish
