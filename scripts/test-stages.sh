#!/usr/bin/env bash
# make test's stages, in the order make would run them, but for the
# background stages: the service stages wait mostly on PostgreSQL, Redis,
# Chromium and Slurm (installing, starting, stopping them), and the docs stage fills
# the cores the foreground stages leave idle, so they run in the background
# while the foreground stages use the cores, each with its output in a log
# that is printed, whole, when it ends.
#
#   scripts/test-stages.sh MAKE OUT "FIRST..." "BACKGROUND..." "FOREGROUND..." "LAST..."
#
# (make test: FIRST vet, BACKGROUND integration browser-test
# sweep-slurm-test docs, FOREGROUND unit race, LAST audit-quick.)
#
# The first stages run alone, before any other: make test's compiles every
# test binary once, so that the stages running at once afterwards find them
# in the build cache instead of compiling the same packages side by side
# (the go command does not share a build in progress between processes).
#
# The last stage (audit-quick) starts only once the background stages have
# ended: its wall-clock claims (DR-8, TW-9) measure ratios on a machine no
# other stage loads. As with make, the first failing stage stops the run:
# no later foreground stage starts (the background ones finish, so their
# services are stopped by their own scripts), and the exit status is 1.
# A table of every stage's result, wall time and CPU time ends the output.
set -uo pipefail

usage='usage: scripts/test-stages.sh MAKE OUT "FIRST..." "BACKGROUND..." "FOREGROUND..." "LAST..."'
if [ $# -ne 6 ]; then
	echo "$usage" >&2
	exit 2
fi
make_cmd=$1
out=$2
read -r -a first <<<"$3"
read -r -a background <<<"$4"
read -r -a foreground <<<"$5"
read -r -a last <<<"$6"

logs="$out/test-stages"
rm -rf "$logs"
mkdir -p "$logs"

# One stage: its result line ("stage rc wall user sys", in seconds; user
# and sys are the CPU time of every process the stage ran) goes to
# $logs/results. Bash's time keyword measures them, in a subshell of the
# stage's own: time counts the CPU of every child the shell reaps while it
# runs, and this shell reaps the background stages' subshell whenever it
# ends, in the middle of a foreground stage. Its report goes to the stage's
# .time file, the stage's own stderr to ours (fd 3); LC_NUMERIC=C keeps its
# decimal point a point, which the table's printf reads back.
run_stage() {
	local stage=$1 rc wall user sys
	(
		LC_NUMERIC=C
		TIMEFORMAT='%R %U %S'
		time $make_cmd --no-print-directory "$stage" 2>&3
	) 3>&2 2>"$logs/$stage.time"
	rc=$?
	read -r wall user sys <"$logs/$stage.time" || { wall=0 user=0 sys=0; }
	echo "$stage $rc $wall $user $sys" >>"$logs/results"
	return "$rc"
}

failed=
for s in "${first[@]}"; do
	if ! run_stage "$s"; then
		failed=$s
		break
	fi
done

bg_pid=
cleanup() {
	if [ -n "$bg_pid" ]; then kill -- "-$bg_pid" 2>/dev/null; fi
}
trap 'cleanup; exit 130' INT TERM

# The background stages, one after another, in a process group of their own
# (set -m) so an interrupt can stop all of them.
if [ -z "$failed" ]; then
	set -m
	(
		for s in "${background[@]}"; do
			echo "test-stages: $s started (in the background, output in $logs/$s.log)"
			if ! run_stage "$s" >"$logs/$s.log" 2>&1; then
				echo "test-stages: $s FAILED (its log is printed when the foreground stages end)"
				exit 1
			fi
			echo "test-stages: $s passed"
		done
	) &
	bg_pid=$!
	set +m

	for s in "${foreground[@]}"; do
		if ! run_stage "$s"; then
			failed=$s
			break
		fi
	done

	wait "$bg_pid"
	bg_rc=$?
	bg_pid=
fi
for s in "${background[@]}"; do
	if [ -f "$logs/$s.log" ]; then
		echo "==== $s (ran in the background; $logs/$s.log) ===="
		cat "$logs/$s.log"
	fi
done
if [ "${bg_rc:-0}" -ne 0 ] && [ -z "$failed" ]; then
	failed=$(awk '$2 != 0 {print $1; exit}' "$logs/results")
	failed=${failed:-background stages}
fi

if [ -z "$failed" ]; then
	for s in "${last[@]}"; do
		if ! run_stage "$s"; then
			failed=$s
			break
		fi
	done
fi

echo
# CPU is user plus system time: stages that ran at once share the cores, so
# their wall times overlap and only their CPU times add up.
echo "test-stages: stage                result   wall      CPU"
while read -r stage rc wall user sys; do
	result=passed
	if [ "$rc" -ne 0 ]; then result="FAILED"; fi
	LC_NUMERIC=C printf 'test-stages: %-20s %-8s %6.1fs %7.1fs\n' "$stage" "$result" "$wall" "$(echo "$user $sys" | awk '{print $1 + $2}')"
done <"$logs/results"
for s in "${first[@]}" "${background[@]}" "${foreground[@]}" "${last[@]}"; do
	if ! awk -v s="$s" '$1 == s {found=1} END {exit !found}' "$logs/results"; then
		printf 'test-stages: %-20s %-8s\n' "$s" "not run"
	fi
done
awk '{cpu += $4 + $5} END {printf "test-stages: %-29s %7s %7.1fs\n", "(all stages)", "", cpu}' "$logs/results"
if [ -n "$failed" ]; then
	echo "test-stages: FAILED: $failed"
	exit 1
fi
echo "test-stages: every stage passed"
