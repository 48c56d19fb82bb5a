package bugbench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
)

// Every benchmarked mutant is a logic mutant of the catalogue, and every
// logic mutant is a target: benchmarked, or listed with its reason.
func TestTargetsCoverTheLogicMutants(t *testing.T) {
	logic := 0
	for _, m := range mutants.All() {
		if !m.Race {
			logic++
		}
	}
	ts := Targets()
	assert.Len(t, ts, logic)
	found := map[string]bool{}
	for _, tg := range ts {
		if tg.Workload == nil {
			assert.NotEmpty(t, tg.Reason, tg.Mutant)
		} else {
			found[tg.Mutant] = true
		}
	}
	for id := range benchmarked { //windtunnel:unordered each is asserted on its own
		assert.True(t, found[id], "benchmarked mutant %s is in the catalogue, not Race", id)
	}
}
