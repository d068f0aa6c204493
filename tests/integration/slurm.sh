#!/usr/bin/env bash
# deploy/slurm on a real Slurm: munged, slurmctld and two slurmd on loopback (two nodes
# on this host, two gres GPUs each), the pool script submitted with sbatch starts one
# `specgen pool` agent a node with srun, each with the GPUs Slurm gave its node; the
# agents' URL file feeds `specgen optimize --pool @FILE`; scancel stops the agents and
# the daemons stop cleanly. Skipped (with the reason) when not root or Slurm is missing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/slurm/cluster.bash"
cd "$SPECGEN_ROOT" || exit 1
# check_none DESC CMD...: passes when CMD prints nothing (what it printed is shown if not).
check_none() {
    local desc=$1 out; shift
    out=$("$@" 2>&1)
    if [ -z "$out" ]; then ok "$desc"; else
        not_ok "$desc"; printf '#   %s\n' "command: $*" "${out//$'\n'/$'\n'#   }"; fi
}
why=$(slurm_missing)
if [ -n "$why" ]; then skip "a real Slurm on loopback" "$why"; finish; fi
need_opencl "the pool agents under Slurm (they serve PoCL here)"

T=$TMPDIR_TEST/slurm
mkdir -p "$T"
if ! slurm_up "$T" >"$TMPDIR_TEST/up.log" 2>&1; then
    not_ok "slurmctld + two slurmd on loopback come up"
    sed 's/^/#   /' "$TMPDIR_TEST/up.log"
    finish
fi
ok "slurmctld + two slurmd (n1, n2) on loopback are up, both idle"
check_output "each node declares two GPUs as gres" 'n1 gpu:2.*n2 gpu:2' \
    bash -c "timeout 10 sinfo -h -N -o '%N %G' | sort | tr '\n' ' '"

# An agent that cannot start fails the job with a message, and no URL file appears.
bad=$T/bad
badid=$(cd "$T" && SPECGEN="$SPECGEN" SPECGEN_POOL_DIR="$bad" SPECGEN_POOL_PORT=$(pick_port) \
    SPECGEN_POOL_PORT_STEP=1 SPECGEN_POOL_LISTEN=127.0.0.1 SPECGEN_POOL_ARGS=--no-such-option \
    sq sbatch --parsable -N2 -o "$T/bad-job.out" "$SPECGEN_ROOT/deploy/slurm/specgen-pool.sbatch")
for ((i = 0; i < 150; i++)); do
    [ -n "$badid" ] && sq squeue -h -j "$badid" 2>/dev/null | grep -q . || break
    sleep 0.2
done
check_output "agents that exit at once fail the job, naming their logs" \
    "error: agents exited before they answered \(logs: $bad/logs/\)" cat "$T/bad-job.out"
check_output "  ... whose logs say why" "unknown option '--no-such-option'" bash -c "cat '$bad'/logs/*.log"
check "  ... and no URL file is left" test ! -e "$bad/pool.txt"

# A job holding one GPU of n2, so that the pool job gets GPU 0 on n1 but GPU 1 on n2:
# each agent must see its own node's CUDA_VISIBLE_DEVICES, not a copy of the first's.
hold=$(sq sbatch --parsable -N1 -w n2 --gres=gpu:1 -o /dev/null --wrap 'sleep 600')
check "a job holds GPU 0 of n2" test -n "$hold"

pool=$T/pool
port=$(pick_port)
jobid=$(cd "$T" && SPECGEN="$SPECGEN" SPECGEN_POOL_DIR="$pool" SPECGEN_POOL_PORT=$port \
    SPECGEN_POOL_PORT_STEP=1 SPECGEN_POOL_LISTEN=127.0.0.1 SPECGEN_POOL_WAIT=60 \
    sq sbatch --parsable -N2 --gres=gpu:1 -o "$T/pool-job.out" \
    "$SPECGEN_ROOT/deploy/slurm/specgen-pool.sbatch")
check "sbatch takes deploy/slurm/specgen-pool.sbatch on two nodes" test -n "$jobid"

# The URL file appears once both agents answer.
for ((i = 0; i < 300; i++)); do
    [ -s "$pool/pool.txt" ] && break
    sq squeue -h -j "$jobid" 2>/dev/null | grep -q . || break
    sleep 0.2
done
if ! check_output "the job writes both agents' URLs to its pool file" \
    "^http://127.0.0.1:$port http://127.0.0.1:$((port + 1)) \$" \
    bash -c "sort '$pool/pool.txt' | tr '\n' ' '"; then
    printf '#   %s\n' "job output:" "$(cat "$T/pool-job.out" 2>&1)" "$(tail -n 5 "$pool"/logs/*.log 2>&1)"
fi
check_output "the job's output says how to use them" \
    "2 agents ready: --pool @$pool/pool.txt --pool-token-file $pool/token" cat "$T/pool-job.out"
check_output "the agent on n1 got CUDA_VISIBLE_DEVICES=0 from Slurm" \
    "n1: agent http://127.0.0.1:$port --devices opencl:0 \(no usable CUDA device \(CUDA_VISIBLE_DEVICES=0\)\)" \
    cat "$T/pool-job.out"
check_output "the agent on n2 got CUDA_VISIBLE_DEVICES=1 (GPU 0 is held)" \
    "n2: agent http://127.0.0.1:$((port + 1)) --devices opencl:0 \(no usable CUDA device \(CUDA_VISIBLE_DEVICES=1\)\)" \
    cat "$T/pool-job.out"
check_output "the token file is the job's own, mode 600" '^600 [0-9a-f]{64}$' \
    bash -c "echo \$(stat -c %a '$pool/token') \$(cat '$pool/token')"
token=$(cat "$pool/token" 2>/dev/null)
for p in $port $((port + 1)); do
    check_output "agent :$p answers with the token" '^200$' \
        curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$p/v1/status"
    check_output "agent :$p refuses a request without it (401)" '^401$' \
        curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/v1/status"
    check_output "agent :$p serves the device its launcher chose (status: opencl, 1 slot)" \
        '^opencl 1$' bash -c "curl -s -H 'Authorization: Bearer $token' http://127.0.0.1:$p/v1/status |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"lang\"], len(d[\"slots\"]))'"
done

# The orchestrator uses the agents Slurm started: no local slots, every job remote.
out=$T/opt
check "optimize --pool @FILE --no-local runs on the Slurm agents" \
    "$SPECGEN" optimize suites/demo/vector_scale --device opencl --pool "@$pool/pool.txt" \
    --pool-token-file "$pool/token" --no-local --out "$out"
check_output "its jobs ran on the agents (slot names carry host:port)" \
    "\"slot_name\":\"127.0.0.1:($port|$((port + 1)))/" cat "$out/events.jsonl"
check_none "  ... and none on a local slot" \
    bash -c "grep '\"ev\":\"job_start\"' '$out/events.jsonl' | grep -v '\"slot_name\":\"127.0.0.1:'"
# One agent starts as the validate slot, the other as the profile slot: the baseline's
# validate and profile jobs alone put work on both.
check_output "jobs ran on both agents" '^2 agents:' python3 -c "import json,collections
c=collections.Counter(e['slot_name'].split('/')[0] for e in map(json.loads, open('$out/events.jsonl'))
                      if e.get('ev') == 'job_start')
print(len(c), 'agents:', dict(c))"

# scancel: the agents stop, the job leaves the queue, the pool file goes away.
check "scancel the pool job" sq scancel "$jobid"
for ((i = 0; i < 100; i++)); do
    sq squeue -h -j "$jobid" 2>/dev/null | grep -q . || break
    sleep 0.2
done
check_none "the pool job has left the queue" sq squeue -h -j "$jobid"
check_fails "the agents no longer listen" 1 bash -c \
    "(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/$((port + 1))) 2>/dev/null || exit 1"
check "the pool file is removed when the job ends" test ! -e "$pool/pool.txt"
sq scancel "$hold" >/dev/null 2>&1

slurm_stop
check_none "nothing is left running (daemons, slurmstepd, job scripts, agents)" slurm_leftovers
finish
