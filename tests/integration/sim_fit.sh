#!/usr/bin/env bash
# `specgen sim --calibration-run` then `specgen sim fit` (issue 27): the simulator records
# calibration data from a known workload (the reference), the fit recovers its parameters,
# each with a 95% interval. Over three seeds: every parameter is fitted (enough data), no
# seed has more than 2 of its ~25 parameters outside their interval (1.25 expected by
# chance), and no parameter misses in more than one seed (a systematic bias would). Then
# the fitted workload runs in `sim --workload`, and too few data are refused, parameter by
# parameter, with the reason.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
d=$TMPDIR_TEST
sql() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$@"; }

for s in 1 2 3; do
    # (the traces of seed 1 only: sim --traces reads them below)
    exp=(); [ "$s" = 1 ] && exp=(--export-traces "$d/traces1")
    check "seed $s: sim --calibration-run of 300 tasks into a database" \
        "$SPECGEN" sim --calibration-run --tasks 300 --seeds "$s" --db "$d/c$s.db" "${exp[@]}"
    "$SPECGEN" sim fit --db "$d/c$s.db" --check reference -o "$d/m$s.json" 2>"$d/fit$s.txt"
    cat "$d/fit$s.txt"
    check "  ... every parameter fitted (none left out for too few data)" \
        bash -c "! grep -q 'not fitted' '$d/fit$s.txt'"
    check "  ... at most 2 parameters outside their 95% interval" \
        bash -c "[ \$(grep -c OUTSIDE '$d/fit$s.txt') -le 2 ]"
done
check_output "seed 1: every trigger point and interval forked, the final answer judged" \
    '^code_block\|[0-9]+$' sql "$d/c1.db" "select kind, count(*) from calib_fork group by kind"
check_output "  ... the decode ramp went up to 64 streams" '^64$' \
    sql "$d/c1.db" "select max(streams) from calib_rate where kind = 'decode'"
check "  ... one replay trace per task exported (sim --traces loads them below)" \
    bash -c "[ \$(ls '$d/traces1' | wc -l) -eq 300 ]"
check "no parameter misses in more than one seed" \
    bash -c "[ -z \"\$(cat '$d'/fit[123].txt | grep OUTSIDE | awk '{print \$1}' | sort | uniq -d)\" ]"
check "sim --workload runs the fitted workload" \
    "$SPECGEN" sim --workload "$d/m1.json" --tasks 10 --seeds 1
check_output "  ... under its name" 'workload measured' \
    "$SPECGEN" sim --workload "$d/m1.json" --tasks 5 --seeds 1
check "sim --calibration-run of 5 tasks" \
    "$SPECGEN" sim --calibration-run --tasks 5 --seeds 1 --db "$d/few.db"
check_output "  ... the fit refuses the quality model for too few data, and says why" \
    'q0 +- +not fitted: too few data: [0-9]+ kernels' \
    "$SPECGEN" sim fit --db "$d/few.db" -o "$d/few.json"
check_output "  ... and marks it an ASSUMPTION in the file" '"q0": "ASSUMPTION \(not fitted' \
    cat "$d/few.json"
check_output "a database without calibration data is an error that says what to run" \
    'no calibration data: run .specgen calibrate' \
    bash -c "'$SPECGEN' sim --tasks 2 --seeds 1 --db '$d/plain.db' >/dev/null 2>&1; '$SPECGEN' sim fit --db '$d/plain.db' 2>&1"

# sim --traces: the recorded reasoning instead of the modelled one
check "sim --traces replays the demo trace" \
    "$SPECGEN" sim --traces prompts/traces/vector_scale.jsonl --tasks 1 --seeds 1 --events "$d/ev.jsonl"
check_output "  ... the trigger rules fork at its first real code block (token 231, chunks of 8)" \
    '"rule":"code_block","cue":"","at_tokens":23[1-9],' cat "$d/ev.jsonl"
check "sim --traces takes a folder: the traces the calibration run exported, --compare" \
    "$SPECGEN" sim --traces "$d/traces1" --tasks 20 --seeds 1 --compare
check_output "a trace file without reasoning is refused, naming it" 'has no reasoning to replay' \
    bash -c "printf '{\"trace\": 1}\n{\"answer\": \"x\"}\n' >'$d/empty.jsonl'; '$SPECGEN' sim --traces '$d/empty.jsonl' 2>&1"
finish
