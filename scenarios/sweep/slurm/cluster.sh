#!/usr/bin/env bash
# cluster.sh COMMAND [ARG...]
#
# Runs COMMAND against a private one-node Slurm cluster on loopback:
#   1. installs Slurm and MUNGE from Debian packages if their programs are
#      missing (apt-get: slurmctld slurmd slurm-client munge, as root or
#      through sudo), keeping the packages' own services from starting;
#   2. writes a minimal slurm.conf into a temporary directory (one node =
#      this host at 127.0.0.1 with WINDTUNNEL_SLURM_CPUS CPUs, one partition
#      "debug", select/cons_tres by CPU, proctrack/linuxproc, task/none: no
#      cgroups, no accounting database), creates a MUNGE key there, and
#      starts munged, slurmctld and slurmd directly (no systemd), on free
#      127.0.0.1 ports, with their state, spool, sockets and logs in that
#      directory;
#   3. waits until sinfo shows the node idle, exports SLURM_CONF (so sbatch,
#      squeue, scontrol and sinfo talk to this cluster), WINDTUNNEL_SLURM=1
#      and WINDTUNNEL_SLURM_PARTITION=debug, and runs COMMAND;
#   4. on any exit (COMMAND's end, an error, a signal) cancels the cluster's
#      jobs, stops slurmd, slurmctld and munged and removes the directory,
#      and exits with COMMAND's exit status (128+signal when interrupted).
#
# Example (what `make sweep-slurm-test` runs):
#   scenarios/sweep/slurm/cluster.sh go test -v -count=1 -timeout 30m ./scenarios/sweep
#
# Environment:
#   WINDTUNNEL_SLURM_CPUS  CPUs the node offers (default: the machine's, at
#                          least 2, so that two array tasks run at once)
#   WINDTUNNEL_KEEP=1      keep the temporary directory (logs) after exit
set -euo pipefail

log() { printf 'slurm-cluster: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

[ $# -ge 1 ] || { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

as_root() { # run a command as root: directly, or through sudo
	if [ "$(id -u)" -eq 0 ]; then "$@"
	elif command -v sudo >/dev/null; then sudo -n "$@"
	else die "need root to run: $* (no sudo); install slurmctld, slurmd, slurm-client and munge yourself"
	fi
}

# Debian puts the daemons in /usr/sbin, which an ordinary user's PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

# ---- 1. find or install the programs ----------------------------------------

declare -A package_of=([slurmctld]=slurmctld [slurmd]=slurmd [slurmstepd]=slurmd [sbatch]=slurm-client
	[squeue]=slurm-client [sinfo]=slurm-client [scontrol]=slurm-client [scancel]=slurm-client [munged]=munge)
missing=()
for prog in slurmctld slurmd slurmstepd sbatch squeue sinfo scontrol scancel munged; do
	if ! command -v "$prog" >/dev/null; then
		pkg=${package_of[$prog]}
		case " ${missing[*]} " in *" $pkg "*) ;; *) missing+=("$pkg") ;; esac
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]} from Debian packages (apt-get)"
	command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} yourself"
	# The maintainer scripts would start system-wide munge, slurmctld and
	# slurmd services; this script starts its own, so keep them from starting
	# (policy-rc.d 101 = "action forbidden"), unless the machine has a policy.
	policy=/usr/sbin/policy-rc.d
	made_policy=0
	if [ ! -e "$policy" ]; then
		as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
		made_policy=1
	fi
	set +e
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
	rc=$?
	set -e
	[ "$made_policy" = 0 ] || as_root rm -f "$policy"
	[ $rc -eq 0 ] || die "apt-get install ${missing[*]} failed (exit $rc)"
	for prog in slurmctld slurmd slurmstepd sbatch squeue sinfo scontrol scancel munged; do
		command -v "$prog" >/dev/null || die "installed ${missing[*]} but $prog is not on PATH"
	done
	log "installed: ${missing[*]}"
fi
log "Slurm: $(slurmctld -V) ($(command -v slurmctld)); MUNGE: $(munged --version 2>&1 | head -n 1)"

# ---- 2. configure and start the daemons -------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/windtunnel-slurm.XXXXXX")
chmod 755 "$WORK"
MUNGED_PID=""
CTLD_PID=""
SLURMD_PID=""
CHILD=""
STARTED=0

stop_pid() { # stop_pid NAME PID: TERM, wait up to 10 s, then KILL
	local name=$1 pid=$2
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name did not stop in 10 s: killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

show_logs() {
	local f
	for f in "$WORK"/munged.log "$WORK"/slurmctld.log "$WORK"/slurmd.log; do
		[ -s "$f" ] || continue
		log "last lines of $f:"
		tail -n 15 "$f" | sed 's/^/    /' >&2
	done
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
		kill -TERM -- "-$CHILD" 2>/dev/null || kill -TERM "$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true
	fi
	if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null && [ -n "$SLURMD_PID" ] && kill -0 "$SLURMD_PID" 2>/dev/null; then
		# Jobs left by COMMAND: cancel them so that no slurmstepd outlives
		# the cluster.
		if [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
			log "cancelling the jobs still in the queue"
			scancel --full "--user=$(id -un)" 2>/dev/null || true
			for _ in $(seq 100); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
		fi
	fi
	stop_pid slurmd "$SLURMD_PID"
	stop_pid slurmctld "$CTLD_PID"
	stop_pid munged "$MUNGED_PID"
	if [ "$rc" -ne 0 ] && [ "$STARTED" = 0 ]; then show_logs; fi
	if [ "${WINDTUNNEL_KEEP:-}" = 1 ]; then
		log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	log "exit status $rc"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { # a port nobody listens on now, other than those given
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		case " $* " in *" $p "*) continue ;; esac
		port_in_use "$p" || { echo "$p"; return; }
	done
	die "no free port found"
}

# MUNGE: a private key and socket; Slurm finds the socket through AuthInfo.
mkdir -p "$WORK/munge"
chmod 700 "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge/munge.key"
MUNGE_SOCKET="$WORK/munge/munge.socket"
# munged runs as whoever runs this script (root here): --force lets it run
# as root and accept the temporary directory's permissions.
munged --foreground --force --key-file="$WORK/munge/munge.key" --socket="$MUNGE_SOCKET" \
	--pid-file="$WORK/munge/munged.pid" --seed-file="$WORK/munge/munged.seed" \
	--log-file="$WORK/munged.log" --num-threads=2 >>"$WORK/munged.log" 2>&1 &
MUNGED_PID=$!
for _ in $(seq 100); do
	[ -S "$MUNGE_SOCKET" ] && break
	kill -0 "$MUNGED_PID" 2>/dev/null || break
	sleep 0.1
done
[ -S "$MUNGE_SOCKET" ] || die "munged did not start (no socket $MUNGE_SOCKET)"
log "munged running (pid $MUNGED_PID, socket $MUNGE_SOCKET)"

NODE=$(hostname -s 2>/dev/null || hostname)
[ -n "$NODE" ] || NODE=localhost
CPUS=${WINDTUNNEL_SLURM_CPUS:-$(nproc)}
[ "$CPUS" -ge 2 ] || CPUS=2
USER_NAME=$(id -un)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port "$CTLD_PORT")
mkdir -p "$WORK/state" "$WORK/spool"
cat >"$WORK/slurm.conf" <<EOF
# A one-node cluster on loopback for windtunnel's sweep test (cluster.sh).
ClusterName=windtunnel
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=$USER_NAME
SlurmdUser=$USER_NAME
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool/slurmd-%n
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd-%n.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: track a job's processes by their parents, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
# One CPU per task, so that array tasks share the node.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# The node's configured CPUs win over what slurmd counts (a 1-core CI
# machine still offers 2), and a node that was down comes back by itself.
SlurmdParameters=config_overrides
ReturnToService=2
# Keep finished jobs visible to scontrol (no accounting database) for an hour.
MinJobAge=3600
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$WORK/slurm.conf"

log "starting slurmctld on 127.0.0.1:$CTLD_PORT (node $NODE, $CPUS CPUs)"
slurmctld -D -i -f "$SLURM_CONF" >>"$WORK/slurmctld.out" 2>&1 &
CTLD_PID=$!
for _ in $(seq 100); do
	scontrol ping 2>/dev/null | grep -q 'is UP' && break
	kill -0 "$CTLD_PID" 2>/dev/null || break
	sleep 0.2
done
if ! scontrol ping 2>/dev/null | grep -q 'is UP'; then
	cat "$WORK/slurmctld.out" >&2 || true
	die "slurmctld did not come up"
fi
log "starting slurmd on 127.0.0.1:$SLURMD_PORT"
slurmd -D -N "$NODE" -f "$SLURM_CONF" >>"$WORK/slurmd.out" 2>&1 &
SLURMD_PID=$!

state=""
for _ in $(seq 150); do
	state=$(sinfo -h -N -n "$NODE" -o %T 2>/dev/null | head -n 1)
	[ "$state" = idle ] && break
	kill -0 "$SLURMD_PID" 2>/dev/null || { cat "$WORK/slurmd.out" >&2 || true; die "slurmd exited"; }
	sleep 0.2
done
[ "$state" = idle ] || { cat "$WORK/slurmd.out" >&2 || true; die "node $NODE is not idle after 30 s (state: ${state:-none})"; }
STARTED=1
log "node $NODE idle in partition debug; SLURM_CONF=$SLURM_CONF"
sinfo >&2

# ---- 3. run the command ------------------------------------------------------

export WINDTUNNEL_SLURM=1
export WINDTUNNEL_SLURM_PARTITION=debug
log "running: $*"
# The command runs in its own process group (set -m), in the background, so
# that a signal to this script runs the traps at once (bash defers traps
# while a foreground command runs) and cleanup can stop the whole group.
set -m
"$@" &
CHILD=$!
set +m
set +e
wait "$CHILD"
rc=$?
set -e
CHILD=""
exit "$rc"
