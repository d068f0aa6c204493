#!/usr/bin/env bash
# A KernelBench-format problem (docs/kernelbench.md) optimized on a `specgen pool` agent's
# slots alone (loopback, PoCL): the task folder reaches the agent as files (task.json and the
# problem's model.py), the agent's worker starts its own torch engine for the reference, and
# KernelBench's own check of the candidate comes back over the wire with the verdict (the
# job_done event's kb_check). Skipped without torch.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "a KernelBench problem on a pool agent's slots"
need_torch "a KernelBench problem on a pool agent's slots"
. "$SPECGEN_ROOT/tests/integration/agent_lib.bash"
export SPECGEN_PYTHON=$TORCH_PY SPECGEN_DATA=$SPECGEN_ROOT

check_output "task init: imported" "^wrote $out/relu/task.json" \
    "$SPECGEN" task init tests/fixtures/kernelbench/1_ReLUScale.py --out "$out/relu"
start_agent a --token-file "$out/token"
timeout 300 "$SPECGEN" optimize "$out/relu" --device opencl --no-local --speed 10 --db none \
    --out "$out/run" --trace tests/fixtures/kernelbench_traces/relu_scale.jsonl \
    --pool "http://127.0.0.1:$port_a" --pool-token-file "$out/token" \
    >"$out/run.log" 2>&1
rc=$?
check "optimize on the agent alone: exit 0" bash -c "test $rc = 0 || { cat '$out/run.log'; false; }"
check_output "  ... the replayed kernel met the target" '"end": *"target"' \
    cat "$out/run/summary.json"
check "  ... its jobs ran on the agent's slot, KernelBench's own check came back with them" \
    python3 -c "
import json, sys
ev = [json.loads(l) for l in open('$out/run/events.jsonl')]
starts = [e for e in ev if e.get('ev') == 'job_start']
assert starts and all(e['slot_name'].startswith('127.0.0.1:$port_a/') for e in starts), starts
done = [e for e in ev if e.get('ev') == 'job_done' and e.get('correct')]
assert done, 'no correct candidate'
kb = [e['kb_check'] for e in done if e.get('kb_check')]
assert kb and all(k == {'correct': True, 'trials': 5, 'passed': 5} for k in kb), done
"
check_output "  ... the agent's worker ran the torch engine (the task's files stored there)" \
    'model.py' bash -c "find '$out/cache-a' -name model.py"
finish
