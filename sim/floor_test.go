package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The benchmarks' floors (BenchmarkLockReadSleep/floor, the floors of
// BenchmarkSteps/paired) stand for the coroutine switches of a simulated
// run. They must make exactly as many resumptions as the run did, or sim
// minus floor is not the simulator's own work.
func TestFloorsMakeTheRunsResumptions(t *testing.T) {
	var switches int64
	res := Run(Config{Seed: 1, RecordDecisions: true}, func(s *Sim) {
		lrsProgram(s, &lrsSink)
		switches = s.switches
	})
	require.NoError(t, res.Err)
	_, resumptions := lrsFloor(t)
	require.Equal(t, switches, int64(resumptions), "lrsFloor")
	require.Greater(t, resumptions, lrsTasks*lrsIters, "the random walk switches more than once per iteration")

	for _, c := range stepCases {
		for _, tasks := range []int{2, 64} {
			const n = 5_000
			steps, switches, decisions, err := runSteps(c.strategy(n), tasks, n, c.setup, func() {}, func() {}, true)
			require.NoError(t, err)
			// Each task finishes the op it is in when the n-th step is
			// taken, and then ends: a few steps each.
			require.GreaterOrEqual(t, steps, int64(n), "%s at %d tasks", c.name, tasks)
			require.LessOrEqual(t, steps, int64(n+4*tasks), "%s at %d tasks", c.name, tasks)
			require.Len(t, decisions, int(steps))
			// The window's first decision counts as a resumption in the
			// replay whether or not the run switched there.
			replay, resumptions := bareReplay(t, decisions)
			require.InDelta(t, switches, resumptions, 1, "%s at %d tasks", c.name, tasks)
			replay()
		}
	}
}
