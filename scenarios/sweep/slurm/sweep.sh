#!/usr/bin/env bash
# sweep.sh: run an audit sweep as a Slurm job array and merge it.
#
#   SEEDS=200 SHARDS=8 scenarios/sweep/slurm/sweep.sh     (what `make sweep-slurm` runs)
#
#   1. builds the audit command once (go build -o SWEEP_DIR/bin/audit), and
#      with it every test binary the shards and the merge run (audit build
#      -bin SWEEP_DIR/bin/tests: the claim families' and the mutants' schema
#      builds), so that no array task compiles or links them again;
#   2. submits one job array, sbatch --array=0-(SHARDS-1), whose task i runs
#        audit -shard i/SHARDS -bin SWEEP_DIR/bin/tests -out SWEEP_DIR/shard<i> [the AUDIT options]
#      in this checkout, logging to SWEEP_DIR/logs/shard<i>.log;
#   3. waits for it, printing how many tasks are done, running and pending
#      (squeue), at most WAIT_TIMEOUT seconds (then it cancels the array);
#   4. fails, naming each failed task with its state, exit code and the tail
#      of its log, if any task did not complete with exit status 0 and a
#      shard.json;
#   5. runs audit merge -out OUT SWEEP_DIR/shard0 ... and exits with its
#      status: 0 when every claim has its expected verdict, 1 when the merged
#      audit lists problems (OUT/AUDIT.md says which) or the merge refused
#      the shards.
#
# Every node must see this checkout and SWEEP_DIR at the same paths (a
# shared file system, as on most clusters): a shard runs the test binaries in
# the checkout's package directories. Go and its caches are needed there
# only for the few mutants that need a build of their own (a constant used
# all over its package), which a shard builds with go test.
#
# Variables (environment; make passes its own of the same names):
#   SEEDS          seeds per claim check, over the whole sweep   (default 50)
#   SHARDS         array tasks, one shard each                    (default 2)
#   MUTANT_SEEDS   seed budget per mutant                         (default 50)
#   RUN            -run pattern of the claim checks               (default ^Test)
#   MUTANTS        true or false: run the mutants                 (default true)
#   ONLY           comma-separated mutant IDs (default: all)
#   J              go test processes at once within a task (claim
#                  packages, then mutants: the audit's -j)     (default: CPUS_PER_TASK)
#   AUDIT_ARGS     further audit flags for every shard, e.g. "-timeout 1h"
#   OUT            where the merged audit.json and AUDIT.md go    (default out)
#   SWEEP_DIR      shared directory for the binary, the batch script, the
#                  logs and the shards                            (default OUT/sweep)
#   PARTITION      sbatch --partition (default: the cluster's default;
#                  WINDTUNNEL_SLURM_PARTITION if set)
#   CPUS_PER_TASK  sbatch --cpus-per-task                         (default 1)
#   TIME_LIMIT     sbatch --time of each task, e.g. 2:00:00       (default: the partition's)
#   SBATCH_ARGS    further sbatch options, e.g. "--account=x --qos=y"
#   BUILD_ARGS     further go build flags for the audit binary, e.g. -overlay=FILE
#   WAIT_TIMEOUT   seconds to wait for the array                  (default 7200)
#   POLL           seconds between two looks at the queue         (default 5)
#   GO             the go command                                 (default go)
set -euo pipefail

log() { printf 'sweep: %s\n' "$*"; }
die() { printf 'sweep: error: %s\n' "$*" >&2; exit 2; }

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
[ -f "$ROOT/go.mod" ] || die "no go.mod at $ROOT"

SEEDS=${SEEDS:-50}
SHARDS=${SHARDS:-2}
MUTANT_SEEDS=${MUTANT_SEEDS:-50}
RUN=${RUN:-^Test}
MUTANTS=${MUTANTS:-true}
ONLY=${ONLY:-}
CPUS_PER_TASK=${CPUS_PER_TASK:-1}
J=${J:-$CPUS_PER_TASK}
AUDIT_ARGS=${AUDIT_ARGS:-}
OUT=${OUT:-out}
case "$OUT" in /*) ;; *) OUT="$ROOT/$OUT" ;; esac
SWEEP_DIR=${SWEEP_DIR:-$OUT/sweep}
case "$SWEEP_DIR" in /*) ;; *) SWEEP_DIR="$ROOT/$SWEEP_DIR" ;; esac
PARTITION=${PARTITION:-${WINDTUNNEL_SLURM_PARTITION:-}}
TIME_LIMIT=${TIME_LIMIT:-}
SBATCH_ARGS=${SBATCH_ARGS:-}
BUILD_ARGS=${BUILD_ARGS:-}
WAIT_TIMEOUT=${WAIT_TIMEOUT:-7200}
POLL=${POLL:-5}
GO=${GO:-go}

is_count() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }
for v in SEEDS SHARDS MUTANT_SEEDS CPUS_PER_TASK J WAIT_TIMEOUT POLL; do
	is_count "${!v}" || die "$v must be a positive integer, got '${!v}'"
done
case "$MUTANTS" in true | false) ;; *) die "MUTANTS must be true or false, got '$MUTANTS'" ;; esac
for prog in sbatch squeue scontrol scancel; do
	command -v "$prog" >/dev/null || die "$prog not found: this needs a Slurm cluster's client commands (scenarios/sweep/slurm/cluster.sh starts a one-node one)"
done

# The audit's flags for every shard (and, without -shard, for an unsharded
# run of the same sweep).
audit_flags=(-seeds "$SEEDS" -mutant-seeds "$MUTANT_SEEDS" -run "$RUN" "-mutants=$MUTANTS" -j "$J")
[ -z "$ONLY" ] || audit_flags+=(-only "$ONLY")
# shellcheck disable=SC2206 # AUDIT_ARGS, SBATCH_ARGS, BUILD_ARGS are word lists
extra_audit=($AUDIT_ARGS)
# shellcheck disable=SC2206
extra_sbatch=($SBATCH_ARGS)
# shellcheck disable=SC2206
extra_build=($BUILD_ARGS)

# ---- 1. build the audit command once -----------------------------------------

rm -rf "$SWEEP_DIR/logs" "$SWEEP_DIR/status" "$SWEEP_DIR"/shard[0-9]*
mkdir -p "$SWEEP_DIR/bin" "$SWEEP_DIR/logs" "$SWEEP_DIR/status"
BIN="$SWEEP_DIR/bin/audit"
log "building the audit command: $GO build ${extra_build[*]} -o $BIN ./scenarios/cmd/audit"
(cd "$ROOT" && "$GO" build "${extra_build[@]}" -o "$BIN" ./scenarios/cmd/audit)
# The test binaries, once: every shard and the merge run these (-bin), so an
# array task compiles and links nothing but the mutants with builds of their
# own, whatever the shard count.
TESTS="$SWEEP_DIR/bin/tests"
build_flags=(-bin "$TESTS" "-mutants=$MUTANTS")
[ -z "$ONLY" ] || build_flags+=(-only "$ONLY")
log "building the test binaries for every shard and the merge: $BIN build ${build_flags[*]}"
(cd "$ROOT" && "$BIN" build "${build_flags[@]}") || die "audit build failed: no shard was submitted"
audit_flags+=(-bin "$TESTS")

# ---- 2. submit the array -----------------------------------------------------

BATCH="$SWEEP_DIR/audit.sbatch"
{
	echo '#!/usr/bin/env bash'
	echo '# One shard of a windtunnel audit sweep (written by scenarios/sweep/slurm/sweep.sh).'
	echo 'set -uo pipefail'
	printf 'root=%q bin=%q dir=%q shards=%q\n' "$ROOT" "$BIN" "$SWEEP_DIR" "$SHARDS"
	printf 'flags=('
	printf '%q ' "${audit_flags[@]}" "${extra_audit[@]}"
	printf ')\n'
	cat <<'EOF'
i=${SLURM_ARRAY_TASK_ID:?not a Slurm array task}
echo "sweep: shard $i/$shards: job ${SLURM_ARRAY_JOB_ID:-?}_$i on $(hostname) in $root at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
cd "$root" || exit 2
"$bin" -shard "$i/$shards" -out "$dir/shard$i" "${flags[@]}"
rc=$?
echo "$rc" >"$dir/status/shard$i.rc"
echo "sweep: shard $i/$shards: exit status $rc at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
exit "$rc"
EOF
} >"$BATCH"
chmod 755 "$BATCH"

sbatch_args=(--parsable "--array=0-$((SHARDS - 1))" --job-name=windtunnel-sweep
	"--output=$SWEEP_DIR/logs/shard%a.log" "--chdir=$ROOT" "--cpus-per-task=$CPUS_PER_TASK" --export=ALL)
[ -z "$PARTITION" ] || sbatch_args+=("--partition=$PARTITION")
[ -z "$TIME_LIMIT" ] || sbatch_args+=("--time=$TIME_LIMIT")
sbatch_args+=("${extra_sbatch[@]}")
log "submitting: sbatch ${sbatch_args[*]} $BATCH"
log "each task runs: $BIN -shard \$SLURM_ARRAY_TASK_ID/$SHARDS -out $SWEEP_DIR/shard\$SLURM_ARRAY_TASK_ID ${audit_flags[*]} ${extra_audit[*]}"
submitted=$(sbatch "${sbatch_args[@]}" "$BATCH") || die "sbatch failed"
JOB=${submitted%%;*}
[[ "$JOB" =~ ^[0-9]+$ ]] || die "sbatch answered '$submitted', not a job id"
log "submitted job array $JOB ($SHARDS tasks)"

# Interrupted (or out of time): cancel the array, so that no shard runs on.
CANCEL=1
on_exit() {
	local rc=$?
	if [ "$CANCEL" = 1 ]; then
		log "cancelling job array $JOB"
		scancel "$JOB" 2>/dev/null || true
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ---- 3. wait -----------------------------------------------------------------

tail_log() { # tail_log I: the last lines of task I's log
	local f="$SWEEP_DIR/logs/shard$1.log"
	if [ -s "$f" ]; then
		echo "  last lines of $f:"
		tail -n 30 "$f" | sed 's/^/    /'
	else
		echo "  (no log at $f)"
	fi
}

start=$SECONDS
last=""
last_print=-1000
misses=0
while :; do
	set +e
	queue=$(squeue -h -r -j "$JOB" -o '%K %T' 2>&1)
	qrc=$?
	set -e
	if [ $qrc -ne 0 ]; then
		# A finished array may already be gone from the queue ("Invalid job
		# id"); anything else is the controller not answering: retry a while.
		if grep -qi 'invalid job id' <<<"$queue"; then
			queue=""
		else
			misses=$((misses + 1))
			[ $misses -lt 12 ] || die "squeue keeps failing: $queue"
			log "squeue failed ($queue); retrying"
			sleep "$POLL"
			continue
		fi
	fi
	misses=0
	pending=0 running=0
	while read -r _ state; do
		case "$state" in
		"") ;;
		PENDING | CONFIGURING | REQUEUED | RESIZING | SUSPENDED) pending=$((pending + 1)) ;;
		*) running=$((running + 1)) ;; # RUNNING, COMPLETING, STAGE_OUT, ...
		esac
	done <<<"$queue"
	done_n=$((SHARDS - pending - running))
	elapsed=$((SECONDS - start))
	now="$done_n done, $running running, $pending pending"
	if [ "$now" != "$last" ] || [ $((elapsed - last_print)) -ge 60 ]; then
		log "job $JOB after ${elapsed}s: $now (of $SHARDS)"
		last=$now last_print=$elapsed
	fi
	[ $((pending + running)) -gt 0 ] || break
	if [ "$elapsed" -ge "$WAIT_TIMEOUT" ]; then
		log "job $JOB not finished after ${WAIT_TIMEOUT}s (WAIT_TIMEOUT): cancelling it"
		for i in $(seq 0 $((SHARDS - 1))); do tail_log "$i"; done
		exit 1
	fi
	sleep "$POLL"
done
CANCEL=0
wait_s=$((SECONDS - start))

# ---- 4. did every task succeed? ------------------------------------------------

task_state() { # task_state I: "STATE EXITCODE" from scontrol, else sacct, else "unknown -"
	local line st ec
	line=$(scontrol -o show job "${JOB}_$1" 2>/dev/null | head -n 1 || true)
	st=$(sed -n 's/.*\bJobState=\([^ ]*\).*/\1/p' <<<"$line")
	ec=$(sed -n 's/.*\bExitCode=\([^ ]*\).*/\1/p' <<<"$line")
	if [ -z "$st" ] && command -v sacct >/dev/null; then
		line=$(sacct -n -X -P -j "${JOB}_$1" -o State,ExitCode 2>/dev/null | head -n 1 || true)
		st=${line%%|*} ec=${line#*|}
		st=${st%% *}
	fi
	echo "${st:-unknown} ${ec:--}"
}

failed=0
for i in $(seq 0 $((SHARDS - 1))); do
	read -r st ec <<<"$(task_state "$i")"
	rcf="$SWEEP_DIR/status/shard$i.rc"
	rc=$(cat "$rcf" 2>/dev/null || echo none)
	problem=""
	if [ "$st" != COMPLETED ] && [ "$st" != unknown ]; then
		problem="Slurm says $st"
	elif [ "$rc" != 0 ]; then
		problem="the audit's exit status is $rc"
	elif [ ! -f "$SWEEP_DIR/shard$i/shard.json" ]; then
		problem="it wrote no $SWEEP_DIR/shard$i/shard.json"
	fi
	if [ -n "$problem" ]; then
		failed=$((failed + 1))
		echo "sweep: task ${JOB}_$i (shard $i/$SHARDS) failed: $problem (Slurm state $st, exit code $ec, audit exit status $rc)" >&2
		tail_log "$i" >&2
	fi
done
[ $failed -eq 0 ] || die "$failed of $SHARDS array tasks of job $JOB failed (logs in $SWEEP_DIR/logs)"
log "all $SHARDS tasks of job $JOB completed in ${wait_s}s"

# ---- 5. merge ----------------------------------------------------------------

shard_dirs=()
for i in $(seq 0 $((SHARDS - 1))); do shard_dirs+=("$SWEEP_DIR/shard$i"); done
rm -f "$OUT/audit.json" "$OUT/AUDIT.md"
log "merging: $BIN merge -bin $TESTS -out $OUT ${shard_dirs[*]}"
mstart=$SECONDS
set +e
(cd "$ROOT" && "$BIN" merge -bin "$TESTS" -out "$OUT" "${shard_dirs[@]}")
mrc=$?
set -e
log "merge took $((SECONDS - mstart))s"
if [ $mrc -eq 0 ]; then
	log "merged audit: $OUT/audit.json, $OUT/AUDIT.md: every claim has its expected verdict"
elif [ -f "$OUT/audit.json" ]; then
	log "merged audit written ($OUT/audit.json, $OUT/AUDIT.md), and it lists problems (exit status $mrc)"
else
	echo "sweep: error: audit merge failed (exit status $mrc) and wrote no audit" >&2
fi
exit $mrc
