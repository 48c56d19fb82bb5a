// Package determinism is a claim phase fixture for the audit's runner: a
// seeded test whose runs differ from one run to the next in one process (a
// bug on purpose), so only a second run of a seed can notice it.
package determinism

import (
	"sync/atomic"
	"testing"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// runs changes between runs in one process: the nondeterminism (atomic:
// seeds run on parallel workers).
var runs atomic.Int64

func TestDrifts(t *testing.T) {
	simtest.Run(t, simtest.Options{Seeds: 4}, func(s *sim.Sim) error {
		for range runs.Add(1) { // a different number of steps in every run
			s.Yield()
		}
		return nil
	})
}
