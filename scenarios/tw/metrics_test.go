package tw

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestTW8_MetricsMatchPrediction checks TW-8 on scripted connections whose
// two timeouts may fall in one tick (two timeouts, one visit), with
// activity (re-arms) and closes. The counters are read under the names the
// claims table gives, as the cop registers them. inactivity_cop_fired
// equals the timeouts the callback saw and the prediction, _visited (and
// _lookups) the predicted visits, _passes the ticks, _budget_exhausted 0,
// and the pass times 0 (a pass takes no virtual time). A counter missing,
// renamed or never registered fails.
func TestTW8_MetricsMatchPrediction(t *testing.T) {
	names := metricNames(t)
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-8", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return metricsScript(s, names) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d counters read under the source text's names after scripted runs: %d missing or different from the callbacks and the prediction%s", o.Of, o.Wrong, failedText(o))
		},
	})
}

func metricsScript(s *sim.Sim, n checks.CopMetricNames) (claims.Sample, error) {
	var smp claims.Sample
	rnd := s.Rand()
	cop := defaultCop()
	threads := 1 + rnd.IntN(2)
	var conns []netthreads.ScriptConn
	for i := range 400 {
		set := offGrid(rnd, int64(rnd.IntN(10)))
		d := time.Duration(500+rnd.IntN(20_000)) * time.Millisecond
		c := netthreads.ScriptConn{Thread: i % threads, Ops: []checks.CopOp{{At: set, Kind: checks.OpSetInactivity, D: d}}}
		switch rnd.IntN(4) {
		case 0: // the active deadline in the same tick: two timeouts, one visit
			deadline := set + d
			same := deadline - deadline%time.Second + time.Duration(rnd.Int64N(int64(time.Second)))
			if same > set {
				c.Ops = append(c.Ops, checks.CopOp{At: set, Kind: checks.OpSetActive, D: same - set})
			}
		case 1:
			c.Ops = append(c.Ops, checks.CopOp{At: offGrid(rnd, int64(set/time.Second)+1+int64(rnd.IntN(5))), Kind: checks.OpActivity})
		case 2:
			c.Ops = append(c.Ops, checks.CopOp{At: offGrid(rnd, int64(set/time.Second)+1+int64(rnd.IntN(10))), Kind: checks.OpClose})
		}
		conns = append(conns, c)
	}
	end := 40*time.Second + 500*time.Millisecond
	res, err := netthreads.Script{Cop: cop, Threads: threads, Conns: conns, End: end}.Run(s)
	if err != nil {
		return smp, err
	}
	// Predicted from the script as it ran (less what a shrinker dropped).
	wantVisits, wantFired, err := predictAll(cop.Buckets, threads, res[0].Applied, end)
	if err != nil {
		return smp, err
	}
	double := 0
	for th, r := range res {
		want := map[string]int64{
			n.Fired: int64(len(wantFired[th])), n.Visited: wantVisits[th], n.Passes: r.RefPasses,
			n.BudgetExhausted: 0, n.PassTimeUS: 0, n.PassMaxUS: 0, n.Lookups: wantVisits[th],
		}
		for _, name := range []string{n.Passes, n.Visited, n.Fired, n.PassTimeUS, n.PassMaxUS, n.BudgetExhausted, n.Lookups} {
			smp.Of++
			got, ok := r.Metrics[name]
			if !ok || got != want[name] {
				err := fmt.Errorf("TW-8: thread %d: %s = %d (registered %v), want %d", th, name, got, ok, want[name])
				smp.Wrongly(func() string { return err.Error() })
				return smp, err
			}
		}
		if int64(len(r.Fired)) != r.Metrics[n.Fired] {
			err := fmt.Errorf("TW-8: thread %d: %s = %d, the callback saw %d timeouts", th, n.Fired, r.Metrics[n.Fired], len(r.Fired))
			smp.Wrongly(func() string { return err.Error() })
			return smp, err
		}
		seen := map[[2]int64]int{}
		for _, f := range r.Fired {
			if seen[[2]int64{int64(f.Conn), int64(f.At)}]++; seen[[2]int64{int64(f.Conn), int64(f.At)}] == 2 {
				double++
			}
		}
		if smp.Witness == "" {
			smp.Witness = fmt.Sprintf("thread %d: %d passes, %d visits, %d timeouts", th, r.Metrics[n.Passes], r.Metrics[n.Visited], r.Metrics[n.Fired])
		}
	}
	if double == 0 {
		return smp, fmt.Errorf("harness: no connection fired both timeouts in one pass: the script does not tell timeouts from connections")
	}
	return smp, nil
}

// TestTW8_MetricsInWorlds checks TW-8 over random swarm workloads
// (checks.CheckCopMetrics). Every name the claims table gives is
// registered. _fired equals the timeouts called back, _passes the passes at
// ticks and restarts plus _budget_exhausted, and every continuation seen
// from outside is counted there. _visited equals the deadlines the wheel
// re-read, and the pass times stay 0.
func TestTW8_MetricsInWorlds(t *testing.T) {
	names := metricNames(t)
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-8", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (*flown, error) {
			f, err := fly(s, names, []tweak{oneBurstThread})
			if err != nil {
				return f, err
			}
			_, err = f.sample("TW-8", 0)
			return f, err
		},
		Sample: func(f *flown) claims.Sample {
			if f == nil {
				return claims.Sample{}
			}
			smp, _ := f.sample("TW-8", int64(len(f.w.Threads)))
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d threads' counters compared with the callbacks, passes and continuations their worlds saw: %d mismatches or missing series%s", o.Of, o.Wrong, failedText(o))
		},
		Probes: []claims.Probe{{Name: probeContinued, What: "a pass hit the budget and continued (a continuation _passes and _budget_exhausted must count)", Min: 5}},
	})
}

// TestTW8_RealPassTimes runs a handler on rt.Real(): one pass that fires
// 100,000 timeouts, then idle passes, each timed from outside. Each pass's
// own time is at most its outside time, so pass_time_us <= the outside
// total, and pass_max_us >= pass_time_us - the idle passes' outside total
// (the heavy pass is in the max; a gauge that kept the last pass would fail
// this). The registry exposes the claims table's names with the counters'
// values, in its snapshot and its Prometheus text. Sequential, in real
// time, outside the simulator.
func TestTW8_RealPassTimes(t *testing.T) {
	var r realPasses
	err := realPassTimes(&r)
	if err != nil {
		t.Error(err)
	}
	found := fmt.Sprintf("the %d names of the claims table registered with those values", len(series.Of(seedFamily)))
	if err != nil {
		found = "but: " + err.Error()
	}
	findings.Report(t, findings.Record{
		ID: "TW-8", Verdict: findings.Verdict(err == nil),
		Measured: fmt.Sprintf("real runtime: pass_time_us %d against %d measured from outside, pass_max_us %d for a heavy pass of %d µs among %d idle ones; %s",
			r.timeUS, r.outerUS, r.maxUS, r.heavyUS, r.idle, found),
		Bound: "counters = harness events; pass_max_us = the longest pass", Seeds: 1,
	})
}

type realPasses struct {
	timeUS, maxUS, outerUS, heavyUS int64
	idle                            int
}

func realPassTimes(out *realPasses) error {
	cfg := defaultCop()
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
	time.Sleep(3 * time.Millisecond) //windtunnel:realtime every deadline and its tick pass, in real time
	ceilUS := func(d time.Duration) int64 { return (d.Nanoseconds() + 999) / 1000 }
	start := time.Now() //windtunnel:realtime the heavy pass, timed from outside
	h.Pass()
	heavy := time.Since(start) //windtunnel:realtime
	if fired != 100_000 {
		return fmt.Errorf("harness: the heavy pass fired %d timeouts, want 100,000", fired)
	}
	var idleUS int64
	out.idle = 5
	for range out.idle {
		time.Sleep(2 * time.Millisecond) //windtunnel:realtime the next tick: an idle pass
		start := time.Now()              //windtunnel:realtime
		h.Pass()
		idleUS += ceilUS(time.Since(start)) //windtunnel:realtime
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
	return registryMatches(m, fired)
}

// registryMatches checks that the metrics register under the claims
// table's names with the values the harness expects (the outside counts
// where it has them), in the snapshot and the Prometheus text.
func registryMatches(m *inactivitycop.Metrics, fired int) error {
	var reg stats.Registry
	m.Register(&reg)
	want := map[string]int64{
		seriesPasses: 6, seriesVisited: 100_000, seriesFired: int64(fired),
		seriesPassTime: m.PassTimeUS.Value(), seriesPassMax: m.PassMaxUS.Value(), seriesExhausted: 0,
	}
	// Through the exposition, as a scraper reads it: the names, the values
	// and the types (a gauge exported as a counter fails).
	scraped, err := series.Scrape(&reg, seedFamily)
	if err != nil {
		return fmt.Errorf("TW-8: %w", err)
	}
	for _, name := range series.Of(seedFamily) {
		w, known := want[name]
		if !known {
			return fmt.Errorf("TW-8: the claims table names %s, which the harness does not count", name)
		}
		if v, ok := scraped[name]; !ok || v != w {
			return fmt.Errorf("TW-8: the Prometheus text has %s = %d (present %v), want %d", name, v, ok, w)
		}
	}
	return nil
}
