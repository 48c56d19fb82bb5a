package shrink_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/shrink"
)

// everyDrawMatters draws 4,096 values and fails only while two operations
// ran and no draw is at its smallest: no block of draws, however small,
// can be set to its smallest and the run still fail. It is the shape of
// DR's worlds, whose 48,000 draws each set a timestamp the failing drain
// needs. There a draws pass that went down to blocks of a 256th kept
// none, at most of a shrink's re-runs.
func everyDrawMatters(s *sim.Sim) {
	smallest := false
	for range 4096 {
		if s.Rand().Uint64() <= 1 {
			smallest = true
		}
	}
	ops := 0
	for range 2 {
		if s.Keep(sim.KeepOperation) {
			op := s.OpBegin("op")
			ops++
			s.OpEnd(op, "ok")
		}
	}
	if ops == 2 && !smallest {
		s.Failf("every draw mattered")
	}
}

var passSpent = regexp.MustCompile(`([a-z ]+) (\d+)/(\d+)`)

// drawsPasses returns the attempts each draws pass made, in order, from the
// done line's accounting.
func drawsPasses(t *testing.T, done string) []int {
	t.Helper()
	_, by, ok := strings.Cut(done, "accepted/attempts by pass: ")
	require.True(t, ok, "the done line accounts for each pass: %q", done)
	var out []int
	for _, p := range strings.Split(by, ", ") {
		m := passSpent.FindStringSubmatch(p)
		require.NotNil(t, m, "pass %q", p)
		if strings.TrimSpace(m[1]) == "draws" {
			n, err := strconv.Atoi(m[3])
			require.NoError(t, err)
			out = append(out, n)
		}
	}
	return out
}

// TestTheDrawsPassTriesTheLargeBlocksOnly: after the schedule, the draws
// pass sets each quarter and then each sixteenth of the draws to their
// smallest, at most 20 re-runs, and goes no finer. Finer blocks cost a
// re-run each (64, then 256, ...) and seldom keep anything a reader
// counts. (The audit figures behind this are in
// docs/design-notes-2026-12.md, under sim/shrink.go's minimizeDraws.)
func TestTheDrawsPassTriesTheLargeBlocksOnly(t *testing.T) {
	cfg, failure := firstFailing(t, everyDrawMatters)
	var lines []string
	out, err := shrink.Shrink(runner(everyDrawMatters), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.After.Operations, "both operations are the failure")
	done := lines[len(lines)-1]
	passes := drawsPasses(t, done)
	require.Len(t, passes, 2, "the probe, then the draws pass after the schedule: %s", done)
	assert.LessOrEqual(t, passes[0], 5, "the probe: all the draws, then each quarter: %s", done)
	assert.Equal(t, 4+16, passes[1], "each quarter and each sixteenth once, nothing finer: %s", done)
	assert.Less(t, out.Attempts, 60, "%s", done)
}
