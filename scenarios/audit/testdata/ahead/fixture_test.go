// Package ahead is a fixture of the audit runner's tests: under a mutant
// (the schema binary's switch, WINDTUNNEL_MUTANT) its every seed fails, and
// it writes how many seed runs started to $AHEAD_RUNS when the test ends,
// so a test can tell whether seeds ran ahead of the first, failing one.
package ahead

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// started counts the seed runs begun (atomic: seeds may run on parallel
// workers, which is what the test looks for).
var started atomic.Int64

func TestSeeds(t *testing.T) {
	t.Cleanup(func() {
		if path := os.Getenv("AHEAD_RUNS"); path != "" {
			if err := os.WriteFile(path, fmt.Appendf(nil, "%d\n", started.Load()), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	simtest.Run(t, simtest.Options{Seeds: 8}, func(s *sim.Sim) error {
		started.Add(1)
		// The first seed waits (at most 1 s of real time) for a second
		// seed's run to start, so that a harness running seeds ahead is
		// seen doing it whatever the machine's speed.
		for deadline := time.Now().Add(time.Second); started.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		if os.Getenv("WINDTUNNEL_MUTANT") != "" {
			return errors.New("caught")
		}
		return nil
	})
}
