package shrink_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/shrink"
)

// firstOpBug is a thousand operations of which the first alone fails the
// check, as TW-3's full-scan mutant fails with the first connection opened.
func firstOpBug(s *sim.Sim) {
	bad := false
	for i := range 1000 {
		if !s.Keep(sim.KeepOperation) {
			continue
		}
		op := s.OpBegin("op %d", i)
		bad = bad || i == 0
		s.OpEnd(op, "ok")
	}
	if bad {
		s.Failf("check: X-4: the first operation ran")
	}
}

// Once a first cut of the run's end keeps the failure, the shortest cuts
// are tried before halving on: the first operation is found in two
// accepted cuts, not ten halvings.
func TestTheShortestCutsAreTriedOnceACutKeepsTheFailure(t *testing.T) {
	cfg, failure := firstFailing(t, firstOpBug)
	var lines []string
	out, err := shrink.Shrink(runner(firstOpBug), cfg, failure, shrink.Options{Progress: func(l string) { lines = append(lines, l) }})
	require.NoError(t, err)
	assert.Equal(t, int64(1), out.After.Operations)
	cuts := 0
	for _, l := range lines {
		if strings.Contains(l, "operations: kept the first") {
			cuts++
		}
	}
	assert.Equal(t, 2, cuts, "half the run, then the first operation alone:\n%s", strings.Join(lines, "\n"))
}
