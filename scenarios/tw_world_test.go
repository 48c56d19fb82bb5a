package scenarios

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/netsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// twSim is the simulator configuration of the TW worlds: pauses longer
// than a 4,096 s ring and the drain past the longest timeout need more than
// the default 24 h of virtual time.
var twSim = sim.Config{MaxVirtual: 72 * time.Hour}

// twSeeds is a TW test's default seed count: n, or a quarter of it (at
// least 2) under the race detector, which slows a world about tenfold.
// -sim.seeds overrides both.
func twSeeds(n int) int {
	if twRace {
		return max(2, n/4)
	}
	return n
}

// flyTW draws a world from the seed (netsim.Swarm: net threads with rings
// of 16, 64 or 4,096 buckets, budgets of 16 to 4,096, bursts larger than
// the budget, pauses and clock jumps longer than the ring), lets tweak
// adjust it, and flies it to the end.
// A violation of one of the claims ids ends the run at once.
func flyTW(s *sim.Sim, tweak func(*netsim.Config, *rand.Rand), ids ...string) (*netsim.World, error) {
	cfg := netsim.Swarm(s.Rand())
	if tweak != nil {
		tweak(&cfg, s.Rand())
	}
	w, err := netsim.New(s, cfg)
	if err != nil {
		return nil, err
	}
	w.FailFast(ids...)
	return w, w.Run()
}

// twAgg sums the worlds' figures over a test's seeds.
type twAgg struct {
	worlds int
	st     netsim.Stats // counts summed
	early  claims.Max   // the wheel's deadline earlier than the real one, s
	lag    claims.Max   // a timeout after the full scan's pass, ms
	late   claims.Max   // a timeout after its deadline, on the grid, s
	margin claims.Max   // minus the smallest deadline-to-firing time, ms
	// catch-ups after pauses
	catchUps, offGrid, wrappedCatchUps int
	longestPause                       int64
	examined                           int64
}

func (a *twAgg) add(w *netsim.World) {
	a.worlds++
	st := w.Stats()
	s := &a.st
	s.Opened += st.Opened
	s.Ops += st.Ops
	s.Activity += st.Activity
	s.ConnChecks += st.ConnChecks
	s.FullChecks += st.FullChecks
	s.Timeouts += st.Timeouts
	s.Aligned += st.Aligned
	s.Long += st.Long
	s.Paused += st.Paused
	s.Passes += st.Passes
	s.RefPasses += st.RefPasses
	s.Exhausted += st.Exhausted
	s.Visited += st.Visited
	s.Rearmed += st.Rearmed
	s.RefLookups += st.RefLookups
	s.AuditedPasses += st.AuditedPasses
	s.AuditLost += st.AuditLost
	s.AuditLate += st.AuditLate
	a.early.Observe(st.MaxEarly.Seconds(), func() string { return st.MaxEarlyWitness })
	a.lag.Observe(float64(st.MaxLag)/float64(time.Millisecond), func() string { return st.LagWitness })
	a.late.Observe(st.MaxLate.Seconds(), func() string { return st.LateWitness })
	if st.Timeouts > 0 {
		a.margin.Observe(-float64(st.MinMargin)/float64(time.Millisecond), func() string {
			return fmt.Sprintf("smallest deadline-to-firing time %v in %s", st.MinMargin, w.Config())
		})
	}
	for _, c := range w.CatchUps() {
		a.catchUps++
		if c.OffGridJump {
			a.offGrid++
		}
		if c.PauseTicks > int64(c.Ring) {
			a.wrappedCatchUps++
		}
		a.longestPause = max(a.longestPause, c.PauseTicks)
		a.examined = max(a.examined, c.Examined)
	}
}

func (a *twAgg) summary() string {
	return fmt.Sprintf("%d worlds, %d connections opened, %d operations (%d activity), %d timeouts, %d passes (%d continuations)",
		a.worlds, a.st.Opened, a.st.Ops, a.st.Activity, a.st.Timeouts, a.st.Passes, a.st.Exhausted)
}

// worldTest runs a swarm world per seed and fails a seed on a violation of
// the given claims (or of the harness's own assumptions).
func worldTest(t *testing.T, seeds int, tweak func(*netsim.Config, *rand.Rand), ids ...string) (simtest.Summary, *twAgg) {
	agg := &twAgg{}
	sum := simtest.Run(t, simtest.Options{Seeds: seeds, Config: twSim}, func(s *sim.Sim) error {
		w, err := flyTW(s, tweak, ids...)
		if err != nil {
			return err
		}
		agg.add(w)
		return w.Err(ids...)
	})
	return sum, agg
}
