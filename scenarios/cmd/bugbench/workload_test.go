package main

import (
	"github.com/windtunnel/windtunnel/scenarios/bugbench"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// The control: on the production code the workload's checker passes under
// every approach, so a failure under a mutant is the mutant's. A workload
// that waits by the clock runs on real goroutines in the synctest bubble
// only here: its real seconds are make bugbench's.
func TestWorkloadsPassOnTheProductionCode(t *testing.T) {
	ws := bugbench.Workloads()
	require.Len(t, ws, 9)
	for _, w := range ws {
		for _, st := range Strategies {
			a := Windtunnel(w, "", st, Caps{Seeds: 5, Wall: time.Minute})
			assert.False(t, a.Caught, "%s under %s: %s", w.Name, st, a.Failure)
			assert.Equal(t, 5, a.Runs)
		}
		if w.Waits == 0 {
			require.NoError(t, w.Run(rt.Real()), "%s on real goroutines", w.Name)
		}
		s := Synctest(t, w, "", Caps{Wall: time.Millisecond})
		assert.False(t, s.Caught, s.Failure)
		assert.Positive(t, s.Tried, w.Name)
	}
}
