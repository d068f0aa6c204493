# tests/integration/slurm/cluster.bash — a real Slurm on loopback for one test (sourced
# after tests/lib.sh): munged, slurmctld and two slurmd (-N n1, -N n2) on this host, one
# NodeAddr (127.0.0.1) and a port each, two GPUs a node declared as gres over device
# files made with mknod (Slurm wants files; nothing opens them). Every file lives in
# $SLURM_T; nothing is left running (slurm_down, registered with on_exit).
#
#   slurm_missing          prints why a real Slurm cannot run here (empty: it can)
#   slurm_up DIR           starts it all; exports SLURM_CONF; 0 when both nodes are idle
#   slurm_stop             cancels the jobs, waits for the queue to empty, stops the daemons
#                          (SIGTERM, then SIGKILL for a slurmd that ignores it while it
#                          retries registration): the clean shutdown
#   slurm_leftovers        what still runs of this cluster (nothing, after slurm_stop)
#   slurm_down             slurm_stop, then ends whatever survived (on_exit's cleanup)
#   sq ARGS / sc ARGS ...  client calls under a timeout (slurmctld can die after forking)
#
# Known to work with Debian's Slurm 22.05: no systemd, proctrack/linuxproc, task/none,
# no accounting, no cgroup.conf, the munge socket's folder mode 755.

slurm_missing() {
    [ "$(id -u)" -eq 0 ] || { echo "needs root (slurmd runs jobs as their user)"; return; }
    local b
    for b in munged slurmctld slurmd sbatch srun squeue scancel sinfo scontrol; do
        command -v "$b" >/dev/null || { echo "$b is missing (make deps installs munge, slurmctld, slurmd, slurm-client)"; return; }
    done
}

_slurm_pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Waits until FILE names a live process (daemons write their pid file after forking).
_slurm_wait_pid() {
    local f=$1 i
    for ((i = 0; i < 100; i++)); do _slurm_pid_alive "$f" && return 0; sleep 0.1; done
    return 1
}

sq() { timeout 10 "$@"; }

slurm_up() {
    SLURM_T=$1
    local T=$SLURM_T i
    mkdir -p "$T"/{munge,etc,state,spool,log,dev}
    chmod 755 "$T" "$T/munge"
    on_exit slurm_down
    # munge: its own key, socket and pid file (as root it needs --force).
    (umask 077 && head -c 1024 /dev/urandom >"$T/etc/munge.key")
    munged --force --socket="$T/munge/munge.socket.2" --key-file="$T/etc/munge.key" \
        --pid-file="$T/munge/munged.pid" --log-file="$T/log/munged.log" \
        --seed-file="$T/munge/seed" || { echo "munged did not start: $(tail -3 "$T/log/munged.log")"; return 1; }
    _slurm_wait_pid "$T/munge/munged.pid" || { echo "munged is not running"; return 1; }
    for i in 0 1 2 3; do mknod "$T/dev/nvidia$i" c 1 3; done
    local cport p1 p2
    cport=$(pick_port); p1=$(pick_port); p2=$(pick_port)
    cat >"$T/etc/slurm.conf" <<C
ClusterName=specgen-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$cport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket.2
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd-%n.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
MpiDefault=none
InactiveLimit=0
KillWait=5
NodeName=n1 NodeAddr=127.0.0.1 NodeHostname=localhost Port=$p1 CPUs=2 RealMemory=1000 Gres=gpu:2 State=UNKNOWN
NodeName=n2 NodeAddr=127.0.0.1 NodeHostname=localhost Port=$p2 CPUs=2 RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
C
    cat >"$T/etc/gres.conf" <<C
AutoDetect=off
NodeName=n1 Name=gpu File=$T/dev/nvidia[0-1]
NodeName=n2 Name=gpu File=$T/dev/nvidia[2-3]
C
    export SLURM_CONF=$T/etc/slurm.conf
    slurmctld -f "$SLURM_CONF" -i || { echo "slurmctld failed: $(tail -5 "$T/log/slurmctld.log")"; return 1; }
    _slurm_wait_pid "$T/slurmctld.pid" || { echo "slurmctld died after forking: $(tail -5 "$T/log/slurmctld.log")"; return 1; }
    local n
    for n in n1 n2; do
        slurmd -f "$SLURM_CONF" -N $n || { echo "slurmd -N $n failed: $(tail -5 "$T/log/slurmd-$n.log")"; return 1; }
        _slurm_wait_pid "$T/slurmd-$n.pid" || { echo "slurmd -N $n died: $(tail -5 "$T/log/slurmd-$n.log")"; return 1; }
    done
    for ((i = 0; i < 150; i++)); do # both nodes idle: registered, gres accepted
        [ "$(sq sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" -eq 2 ] && return 0
        _slurm_pid_alive "$T/slurmctld.pid" || { echo "slurmctld died: $(tail -5 "$T/log/slurmctld.log")"; return 1; }
        sleep 0.2
    done
    echo "nodes not idle after 30 s: $(sq sinfo -N -l 2>&1)"
    return 1
}

# Stops one daemon by pid file: SIGTERM, up to 5 s, then SIGKILL.
_slurm_stop() {
    local f=$1 p i
    [ -s "$f" ] || return 0
    p=$(cat "$f")
    rm -f "$f" # a second call must not signal a reused pid
    kill -TERM "$p" 2>/dev/null || return 0
    for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    sleep 0.1
}

# Every process of this cluster: the daemons and what names $SLURM_T on its command line
# (job scripts in the spool, the agents), and what Slurm started, which inherits SLURM_CONF
# naming $SLURM_T even when its command line does not: slurmstepd, a job's processes
# (SLURM_JOB_ID set). The test's own shells carry SLURM_CONF too, but neither of those.
slurm_pids() {
    [ -n "${SLURM_T:-}" ] || return 0
    local d p
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        { [ "$p" = $$ ] || [ "$p" = "$BASHPID" ]; } && continue
        if grep -qsaF -- "$SLURM_T" "$d/cmdline"; then
            echo "$p"
        elif grep -qsazxF "SLURM_CONF=$SLURM_T/etc/slurm.conf" "$d/environ" &&
            { [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] ||
                grep -qsaz '^SLURM_JOB_ID=' "$d/environ"; }; then
            echo "$p"
        fi
    done
}

# Cancels every job and waits for the queue to empty, then stops the daemons: the clean
# shutdown a test checks with slurm_leftovers.
slurm_stop() {
    [ -n "${SLURM_T:-}" ] || return 0
    local T=$SLURM_T i
    # Jobs first, while slurmctld can still cancel them: a slurmd stopped under a running
    # job leaves its slurmstepd and the job's processes behind.
    if _slurm_pid_alive "$T/slurmctld.pid"; then
        sq scancel --quiet --user=root >/dev/null 2>&1
        for ((i = 0; i < 50; i++)); do
            [ -z "$(sq squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    _slurm_stop "$T/slurmd-n1.pid"
    _slurm_stop "$T/slurmd-n2.pid"
    _slurm_stop "$T/slurmctld.pid"
    _slurm_stop "$T/munge/munged.pid"
}

# slurm_stop, then whatever survived (a test that died half-way): TERM, then KILL.
slurm_down() {
    [ -n "${SLURM_T:-}" ] || return 0
    local left
    slurm_stop
    left=$(slurm_pids)
    [ -z "$left" ] && return 0
    kill -TERM $left 2>/dev/null
    sleep 1
    left=$(slurm_pids)
    [ -z "$left" ] || kill -KILL $left 2>/dev/null
    return 0
}

# What is still running of this cluster, one "PID command line" a line (none after down).
slurm_leftovers() {
    local p
    for p in $(slurm_pids); do
        echo "$p $( { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)"
    done
}
