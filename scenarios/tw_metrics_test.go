package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/netsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// twMetricNames are the seed's metric names (TW-8).
var twMetricNames = []string{
	"inactivity_cop_passes", "inactivity_cop_visited", "inactivity_cop_fired",
	"inactivity_cop_pass_time_us", "inactivity_cop_pass_max_us", "inactivity_cop_budget_exhausted",
}

// TestTW8_MetricsMatchHarness checks TW-8 three ways. Scripted: with
// connections whose two timeouts fall in one tick (two timeouts, one
// visit), activity (re-arms) and closes, inactivity_cop_fired equals the
// timeouts the callback saw and the prediction, _visited and _lookups the
// predicted visits, _passes the ticks. Swarm: the same equalities (passes =
// ticks and restarts + budget_exhausted; every continuation the harness saw
// fire is counted) over random workloads; pass times stay 0 (a pass takes
// no virtual time). Real runtime: on rt.Real() one heavy pass and several
// idle ones: pass_time_us is at most their measured total, pass_max_us is
// the heavy pass, not the last, and the registry exposes the seed's six
// names with the counters' values (snapshot and Prometheus text).
func TestTW8_MetricsMatchHarness(t *testing.T) {
	var ex tw8Exact
	var ssum, wsum simtest.Summary
	var agg *twAgg
	t.Run("script", func(t *testing.T) {
		ssum = simtest.Run(t, simtest.Options{Seeds: twSeeds(10), Config: twSim}, func(s *sim.Sim) error { return tw8Script(s, &ex) })
	})
	t.Run("world", func(t *testing.T) { wsum, agg = worldTest(t, twSeeds(15), nil, "TW-8") })
	var real tw8Real
	realErr := tw8RealPasses(&real)
	if realErr != nil {
		t.Error(realErr)
	}
	ok := ssum.Failures == 0 && wsum.Failures == 0 && realErr == nil && ex.double > 0
	claims.Report(t, claims.Record{
		ID: "TW-8", Verdict: claims.Verdict(ok),
		Measured: fmt.Sprintf("scripted: passes %d, visited %d, fired %d (%d connections fired both timeouts in one pass) equal to the harness and the prediction; swarm: %d passes (%d continuations), %d visited, %d timeouts matched; real runtime: pass_time_us %d <= measured %d, pass_max_us %d for a heavy pass of %d µs among %d idle ones; the seed's six names registered with those values",
			ex.passes, ex.visited, ex.fired, ex.double, agg.st.Passes, agg.st.Exhausted, agg.st.Visited, agg.st.Timeouts, real.timeUS, real.outerUS, real.maxUS, real.heavyUS, real.idle),
		Bound: "counters = harness events; pass_max_us = the longest pass", Value: 0, Unit: "mismatches", Seeds: ssum.Seeds + wsum.Seeds,
		Witness: ex.witness,
	})
}

type tw8Exact struct {
	passes, visited, fired, double int64
	witness                        string
}

// tw8Script is one scripted seed of TW-8's exact part.
func tw8Script(s *sim.Sim, ex *tw8Exact) error {
	rnd := s.Rand()
	cop := inactivitycop.DefaultConfig()
	threads := 1 + rnd.IntN(2)
	var conns []netsim.ScriptConn
	for i := range 400 {
		set := offGrid(rnd, int64(rnd.IntN(10)))
		d := time.Duration(500+rnd.IntN(20_000)) * time.Millisecond
		c := netsim.ScriptConn{Thread: i % threads, Ops: []netsim.ConnOp{{At: set, Kind: netsim.SetInactivity, D: d}}}
		switch rnd.IntN(4) {
		case 0: // the active deadline in the same tick: two timeouts, one visit
			deadline := set + d
			same := deadline - deadline%time.Second + time.Duration(rnd.Int64N(int64(time.Second)))
			if same > set {
				c.Ops = append(c.Ops, netsim.ConnOp{At: set, Kind: netsim.SetActive, D: same - set})
			}
		case 1:
			c.Ops = append(c.Ops, netsim.ConnOp{At: offGrid(rnd, int64(set/time.Second)+1+int64(rnd.IntN(5))), Kind: netsim.Activity})
		case 2:
			c.Ops = append(c.Ops, netsim.ConnOp{At: offGrid(rnd, int64(set/time.Second)+1+int64(rnd.IntN(10))), Kind: netsim.Close})
		}
		conns = append(conns, c)
	}
	end := 40*time.Second + 500*time.Millisecond
	wantVisits, wantFired, err := predictAll(cop, threads, conns, end)
	if err != nil {
		return err
	}
	res, err := netsim.Script{Cop: cop, Threads: threads, Conns: conns, End: end}.Run(s)
	if err != nil {
		return err
	}
	for th, r := range res {
		switch {
		case r.FiredMetric != int64(len(r.Fired)) || r.FiredMetric != int64(len(wantFired[th])):
			return fmt.Errorf("TW-8: thread %d: inactivity_cop_fired %d; the callback saw %d timeouts, %d predicted", th, r.FiredMetric, len(r.Fired), len(wantFired[th]))
		case r.Visited != wantVisits[th] || r.Lookups != r.Visited:
			return fmt.Errorf("TW-8: thread %d: inactivity_cop_visited %d, _lookups %d; predicted %d visits", th, r.Visited, r.Lookups, wantVisits[th])
		case r.Passes != r.RefPasses || r.Exhausted != 0:
			return fmt.Errorf("TW-8: thread %d: inactivity_cop_passes %d (budget_exhausted %d); the harness counts %d ticks", th, r.Passes, r.Exhausted, r.RefPasses)
		}
		perConn := map[uint64]map[time.Duration]int{}
		for _, f := range r.Fired {
			if perConn[f.ID] == nil {
				perConn[f.ID] = map[time.Duration]int{}
			}
			if perConn[f.ID][f.At]++; perConn[f.ID][f.At] == 2 {
				ex.double++
			}
		}
		ex.passes += r.Passes
		ex.visited += r.Visited
		ex.fired += r.FiredMetric
		if ex.witness == "" {
			ex.witness = fmt.Sprintf("thread %d: %d passes, %d visits, %d timeouts (%d wheel elements fired)", th, r.Passes, r.Visited, r.FiredMetric, r.Totals.Fired)
		}
	}
	return nil
}

type tw8Real struct {
	timeUS, maxUS, outerUS, heavyUS int64
	idle                            int
}

// tw8RealPasses runs a handler on rt.Real(): one pass that fires 100,000
// timeouts, then idle passes, each timed from outside. Each pass's own time
// is at most its outside time, so pass_time_us <= the outside total, and
// pass_max_us >= pass_time_us - the idle passes' outside total (the heavy
// pass is in the max; a gauge that kept the last pass would fail this).
func tw8RealPasses(out *tw8Real) error {
	cfg := inactivitycop.DefaultConfig()
	cfg.Tick, cfg.Continuation, cfg.Budget = time.Millisecond, time.Millisecond, 200_000
	fired := 0
	h, err := inactivitycop.NewHandler(rt.Real(), "real", cfg, func(inactivitycop.Timeout) { fired++ })
	if err != nil {
		return err
	}
	for range 100_000 {
		if err := h.SetInactivityTimeout(h.Open(), time.Microsecond); err != nil {
			return err
		}
	}
	time.Sleep(3 * time.Millisecond) // every deadline and its tick have passed
	ceilUS := func(d time.Duration) int64 { return (d.Nanoseconds() + 999) / 1000 }
	start := time.Now()
	h.Pass()
	heavy := time.Since(start)
	if fired != 100_000 {
		return fmt.Errorf("harness: the heavy pass fired %d timeouts, want 100,000", fired)
	}
	var idleUS int64
	out.idle = 5
	for range out.idle {
		time.Sleep(2 * time.Millisecond) // the next tick: an idle pass
		start := time.Now()
		h.Pass()
		idleUS += ceilUS(time.Since(start))
	}
	m := h.Metrics()
	out.timeUS, out.maxUS = m.PassTimeUS.Value(), m.PassMaxUS.Value()
	out.heavyUS, out.outerUS = ceilUS(heavy), ceilUS(heavy)+idleUS
	switch {
	case out.timeUS > out.outerUS:
		return fmt.Errorf("TW-8: inactivity_cop_pass_time_us %d exceeds the %d µs the passes took, measured from outside", out.timeUS, out.outerUS)
	case out.maxUS > out.heavyUS:
		return fmt.Errorf("TW-8: inactivity_cop_pass_max_us %d exceeds the longest pass, %d µs from outside", out.maxUS, out.heavyUS)
	case out.maxUS < out.timeUS-idleUS:
		return fmt.Errorf("TW-8: inactivity_cop_pass_max_us %d is not the heavy pass: pass_time_us %d minus the idle passes' %d µs leaves more", out.maxUS, out.timeUS, idleUS)
	case out.timeUS < 1:
		return fmt.Errorf("TW-8: inactivity_cop_pass_time_us is 0 after a pass that fired 100,000 timeouts in %v", heavy)
	}
	return registryMatches(m)
}

// registryMatches checks that the metrics register under the seed's names
// with their values, in the snapshot and the Prometheus text.
func registryMatches(m *inactivitycop.Metrics) error {
	var reg stats.Registry
	m.Register(&reg)
	snap := reg.Snapshot()
	want := []int64{m.Passes.Value(), m.Visited.Value(), m.Fired.Value(), m.PassTimeUS.Value(), m.PassMaxUS.Value(), m.BudgetExhausted.Value()}
	var text strings.Builder
	if err := reg.WriteText(&text); err != nil {
		return err
	}
	for i, name := range twMetricNames {
		if v, ok := snap[name]; !ok || v != want[i] {
			return fmt.Errorf("TW-8: the registry has %s = %d (present %v), want %d", name, v, ok, want[i])
		}
		if !strings.Contains(text.String(), fmt.Sprintf("\n%s %d\n", name, want[i])) {
			return fmt.Errorf("TW-8: the Prometheus text lacks %q", fmt.Sprintf("%s %d", name, want[i]))
		}
	}
	return nil
}
