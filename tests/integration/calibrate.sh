#!/usr/bin/env bash
# `specgen calibrate` end to end against `specgen replay-llm` on the demo tasks on PoCL
# (issue 27): every trigger point the trigger rules see is forked and judged, the final
# answer too; the calibration tables are filled (traces, points, forks, rates, service
# times); the traces come out as replay JSONL that replay-llm loads; a token cap stops it and
# --resume finishes it without redoing a finished task; `sim fit` reads it (saying which
# parameters three tasks are too few for) and `sim --workload` runs the result.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "calibrate on PoCL"
d=$TMPDIR_TEST
sql() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$@"; }
# the rows on one line, separated by blanks
sql1() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(' '.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$@"; }

port=$(pick_port)
"$SPECGEN" replay-llm --trace prompts/traces --listen "127.0.0.1:$port" --speed 4 \
    >"$d/replay.log" 2>&1 &
pid=$!
on_exit "kill $pid"
wait_port "$port" 10 || { not_ok "replay-llm listens"; finish; }

check "calibrate suites/demo against replay-llm (opencl, ramp to 4 streams)" \
    bash -c "'$SPECGEN' calibrate suites/demo --llm http://127.0.0.1:$port --model replay \
        --device opencl --db '$d/c.db' --out '$d/out' --export-traces '$d/tr' \
        --ramp-streams 4 --ramp-tokens 32 >'$d/cal.log' 2>&1"
cat "$d/cal.log"
check_output "  ... it printed its estimate of tokens and GPU time first" \
    'estimate for 3 tasks: about [0-9]+k tokens.*GPU-hours' cat "$d/cal.log"
check_output "  ... the campaign is done, its three tasks too" '^calibrate\|done\|3$' \
    sql "$d/c.db" "select c.kind, c.status, sum(t.status = 'done') from campaign c join task t
                   on t.campaign = c.id"
check_output "  ... every trigger point was forked (one fork per point, at its position)" \
    '^0\|1[0-9]$' sql "$d/c.db" "select count(*) - count(f.id), count(*) from calib_point p left join
        calib_fork f on f.task = p.task and f.kind = p.kind and f.at_bytes = p.at_bytes"
check_output "  ... both rules seen: code blocks and cues" '^code_block\|[0-9]+ transition\|[0-9]+$' \
    sql1 "$d/c.db" "select kind, count(*) from calib_point group by kind"
check_output "  ... each task's final answer validated and timed, at fraction 1" '^3\|3\|1.0$' \
    sql "$d/c.db" "select count(*), sum(correct), min(fraction) from calib_fork where kind = 'final'"
check_output "  ... the control: interval forks at multiples of 1000 tokens" '^interval\|1000$' \
    sql "$d/c.db" "select kind, min(at_tokens) from calib_fork where kind = 'interval'"
check_output "  ... a correct fork has its speedup, tokens and latencies" '^[1-9][0-9]*$' \
    sql "$d/c.db" "select count(*) from calib_fork where correct = 1 and speedup > 0 and
        fork_tokens > 0 and first_token_ms > 0 and gen_ms > 0 and validate_ms >= 0"
check_output "  ... the decode ramp (1, 2, 4 streams) and the prefill probes" '^decode\|3 prefill\|6$' \
    sql1 "$d/c.db" "select kind, count(*) from calib_rate group by kind"
check_output "  ... service times of both job kinds" '^profile validate$' \
    sql1 "$d/c.db" "select distinct kind from calib_service order by kind"
check "  ... three replay traces exported" test -s "$d/tr/vector_scale.jsonl" -a -s "$d/tr/row_sum.jsonl"
port2=$(pick_port)
"$SPECGEN" replay-llm --trace "$d/tr" --listen "127.0.0.1:$port2" >"$d/replay2.log" 2>&1 &
pid2=$!
on_exit "kill $pid2"
check "  ... replay-llm loads them and serves" wait_port "$port2" 10
check_output "  ... and serves the recorded reasoning (llm-check)" 'reasoning +[0-9]+ tokens' \
    "$SPECGEN" llm-check --llm "http://127.0.0.1:$port2"

check_multi "--resume of the finished run: every task and the ramp kept, nothing redone" \
    'vector_scale: done before \(resume\)(.|\n)*the rate ramp ran before \(resume\)' \
    "$SPECGEN" calibrate suites/demo --llm "http://127.0.0.1:$port" --model replay \
    --device opencl --db "$d/c.db" --out "$d/out" --resume 1 --ramp-streams 4 --ramp-tokens 32
check_output "  ... the rate rows as they were" '^9$' \
    sql "$d/c.db" "select count(*) from calib_rate"
# The cap and --resume on two of the three tasks (relu_bias, row_sum: --tasks 'r*'): the
# first stops inside its run, the second has not started, and the resume finishes both
# (vector_scale, the longest trace, only made the resume cost more).
check_fails "a token cap stops it in its first task (exit 0, status budget)" 0 \
    "$SPECGEN" calibrate suites/demo --tasks 'r*' --llm "http://127.0.0.1:$port" --model replay \
    --device opencl --db "$d/b.db" --out "$d/out2" --max-tokens-total 100 --ramp-streams 0
check_output "  ... no task done, the campaign's status budget" '^budget\|0$' \
    sql "$d/b.db" "select c.status, sum(t.status = 'done') from campaign c join task t on t.campaign = c.id"
check "  ... --resume 1 finishes it" \
    "$SPECGEN" calibrate suites/demo --tasks 'r*' --llm "http://127.0.0.1:$port" --model replay \
    --device opencl --db "$d/b.db" --out "$d/out2" --resume 1 --ramp-streams 0
check_output "  ... every task once, each done, its traces once" '^2\|2\|2$' \
    sql "$d/b.db" "select count(*), sum(status = 'done'), (select count(*) from calib_trace) from task"

check "sim fit reads the calibration" "$SPECGEN" sim fit --db "$d/c.db" -o "$d/m.json"
check_output "  ... and says which parameters three tasks are too few for" \
    'reasoning_tokens +- +not fitted: too few data: 3 reasoning traces, at least 10 needed' \
    "$SPECGEN" sim fit --db "$d/c.db" -o "$d/m2.json"
check_output "  ... the decode rate it measured is in the workload" '"decode_rate@1"' cat "$d/m.json"
check "sim --workload runs the fitted workload" "$SPECGEN" sim --workload "$d/m.json" --tasks 4 --seeds 1
finish
