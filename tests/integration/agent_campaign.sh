#!/usr/bin/env bash
# `specgen campaign --pool` (#18): two tasks of the demo suite on two pool agents and no
# local slot: every task's jobs ran on the agents (both used), the campaign ends, and the
# results database holds each candidate and each job once; its prefix-reuse summary.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "pool agents on PoCL"
. "$SPECGEN_ROOT/tests/integration/agent_lib.bash"
sql() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join(map(str,r)) for r in c.execute(sys.argv[2])))" "$@"; }

start_agent a --token-file "$out/token"
start_agent b --token-file "$out/token"
check "campaign suites/demo --pool with two agents and --no-local (tasks r*: two)" \
    bash -c "'$SPECGEN' campaign suites/demo --tasks 'r*' --device opencl --no-local --speed 3 \
        --db '$out/c.db' --out '$out/c' --pool 'http://127.0.0.1:$port_a,http://127.0.0.1:$port_b' \
        --pool-token-file '$out/token' >'$out/c.log' 2>&1"
check_output "  ... the campaign is done, its two tasks ended without error" '^done\|2\|0$' \
    sql "$out/c.db" "select c.status, count(t.id), sum(t.status in ('error','running'))
                     from campaign c join task t on t.campaign = c.id"
check_output "  ... every task ran jobs, all of them on the agents' slots" '^2\|2$' \
    sql "$out/c.db" "select count(*), sum(n = remote) from (select t.name, count(j.id) n,
                     sum(j.slot_name like '127.0.0.1:%/opencl:0/%') remote from task t
                     join job j on j.task = t.id group by t.id having n > 0)"
check_output "  ... and on both agents" '^2$' \
    sql "$out/c.db" "select count(distinct substr(slot_name, 1, instr(slot_name, '/'))) from job"
check_output "  ... every candidate once in the database" '^[1-9][0-9]*\|0$' \
    sql "$out/c.db" "select count(*), (select count(*) from (select 1 from candidate
                     group by task, n having count(*) > 1)) from candidate"
for t in relu_bias row_sum; do
    check_output "  ... $t: every job started and ended once (events and DB)" "jobs [1-9].*problems: none" \
        python3 tests/integration/agent_client.py - - check-run "$out/c/$t/events.jsonl"
done
check_output "  ... each job once in the database" '^([0-9]+)\|\1$' \
    sql "$out/c.db" "select count(*), count(distinct task || '/' || pool_job) from job"
# Prefix reuse (the forks' prompt tokens the LLM server served from its cache): the embedded
# replay does not report cached tokens, so the campaign must say so, and the database keep
# each task's fork prompt tokens with NULL (not 0) cached tokens.
check_output "the campaign's summary says the server did not report prefix reuse" \
    "^prefix reuse: not reported by the server" cat "$out/c.log"
check_output "  ... the database has each task's fork prompt tokens, cached ones NULL" '^2\|0$' \
    sql "$out/c.db" "select sum(fork_prompt_tokens > 0), count(fork_cached_tokens) from task"
finish
