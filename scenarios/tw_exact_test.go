package scenarios

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/netsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// twQuiet is where scripted operations may not fall: the first 300 ms of a
// tick belong to its pass and continuations.
const twQuiet = 300 * time.Millisecond

// offGrid returns a random instant in tick k, outside its quiet window.
func offGrid(rnd *rand.Rand, k int64) time.Duration {
	return time.Duration(k)*time.Second + twQuiet + time.Duration(rnd.Int64N(int64(time.Second-twQuiet)))
}

// predictAll runs netsim.Predict for every scripted connection and returns
// the expected visits and timeouts per thread (IDs are script index + 1).
func predictAll(cop inactivitycop.Config, threads int, conns []netsim.ScriptConn, until time.Duration) ([]int64, [][]netsim.Timeout, error) {
	visits := make([]int64, threads)
	fired := make([][]netsim.Timeout, threads)
	for i, c := range conns {
		p, err := netsim.Predict(int64(cop.Buckets), cop.Tick, c.Ops, until)
		if err != nil {
			return nil, nil, err
		}
		visits[c.Thread] += int64(p.Visits)
		for _, f := range p.Fired {
			f.ID = uint64(i + 1)
			fired[c.Thread] = append(fired[c.Thread], f)
		}
	}
	return visits, fired, nil
}

func sortTimeouts(ts []netsim.Timeout) []netsim.Timeout {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b netsim.Timeout) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Deadline, b.Deadline), cmp.Compare(a.At, b.At))
	})
	return ts
}

// sameTimeouts compares fired timeouts with predicted ones, exactly.
func sameTimeouts(claim string, thread int, got, want []netsim.Timeout) error {
	g, w := sortTimeouts(got), sortTimeouts(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Errorf("%s: thread %d: fired %v, predicted %v", claim, thread, g[i], w[i])
		}
	}
	if len(g) != len(w) {
		return fmt.Errorf("%s: thread %d: fired %d timeouts, predicted %d", claim, thread, len(g), len(w))
	}
	return nil
}

// TestTW3_PassVisitsOnlyDue is the seed's exact-count benchmark under the
// simulator: 100,000 connections on 2 to 4 net threads, idle deadlines
// spread over the 4,096 s ring, and a few hundred connections that come due
// (some pushed later by activity, some with both timeouts). Over the first
// ten passes, none due: the wheel cops visit 0 connections and do 0
// mutex/thread lookups while the full scan does N per pass. Over all 41
// passes the cops visit exactly the connections whose bucket came due, as
// the TW-1 contract predicts (netsim.Predict), and examine one bucket per
// pass.
func TestTW3_PassVisitsOnlyDue(t *testing.T) {
	const total, end = 100_000, 40*time.Second + 500*time.Millisecond
	idleProbe := 3*time.Second + 500*time.Millisecond
	var idlePasses, idleVisited, idleLookups, idleRef, visited, predicted, passes, refLookups int64
	var witness string
	sum := simtest.Run(t, simtest.Options{Seeds: twSeeds(4), Config: twSim}, func(s *sim.Sim) error {
		rnd := s.Rand()
		threads := 2 + rnd.IntN(3)
		cop := inactivitycop.DefaultConfig()
		conns := make([]netsim.ScriptConn, 0, total)
		for i := range total {
			c := netsim.ScriptConn{Thread: i % threads}
			open := 500 * time.Millisecond
			if rnd.IntN(400) > 0 { // idle: a deadline beyond the run, inside the ring
				d := 60*time.Second + time.Duration(rnd.Int64N(int64(3900*time.Second)))
				c.Ops = []netsim.ConnOp{{At: open, Kind: netsim.SetInactivity, D: d}}
				conns = append(conns, c)
				continue
			}
			// Due within the run, after the idle probe.
			set := offGrid(rnd, int64(rnd.IntN(20)))
			c.Ops = []netsim.ConnOp{{At: open, Kind: netsim.SetInactivity, D: 11*time.Second + time.Duration(rnd.Int64N(int64(10*time.Second)))}}
			if set > open {
				c.Ops = append(c.Ops, netsim.ConnOp{At: set, Kind: netsim.SetInactivity, D: time.Duration(11+rnd.IntN(9))*time.Second + time.Duration(rnd.IntN(1000))*time.Millisecond})
			}
			last := set
			for range rnd.IntN(3) { // activity pushes it later; the wheel is not touched
				at := offGrid(rnd, int64(last/time.Second)+1+int64(rnd.IntN(4)))
				if at < 35*time.Second {
					c.Ops, last = append(c.Ops, netsim.ConnOp{At: at, Kind: netsim.Activity}), at
				}
			}
			if rnd.IntN(3) == 0 {
				at := offGrid(rnd, int64(last/time.Second)+1)
				c.Ops = append(c.Ops, netsim.ConnOp{At: at, Kind: netsim.SetActive, D: 11*time.Second + time.Duration(rnd.IntN(5000))*time.Millisecond})
			}
			conns = append(conns, c)
		}
		wantVisits, wantFired, err := predictAll(cop, threads, conns, end)
		if err != nil {
			return err
		}
		sizes := make([]int64, threads)
		for _, c := range conns {
			sizes[c.Thread]++
		}
		// The idle check also runs at the probe, so that a cop that visits
		// everything ends the run there instead of grinding on.
		idle := func(th int, p netsim.Probe) error {
			switch {
			case p.Visited != 0 || p.Lookups != 0:
				return fmt.Errorf("TW-3: thread %d (%d connections, none due): %d passes visited %d and looked up %d connections; want 0", th, sizes[th], p.Passes, p.Visited, p.Lookups)
			case p.Buckets != p.Passes:
				return fmt.Errorf("TW-3: thread %d: %d idle passes examined %d buckets; want one each", th, p.Passes, p.Buckets)
			case p.RefLookups != sizes[th]*(p.Passes-1): // the pass at tick 0 precedes the opening
				return fmt.Errorf("harness: thread %d: the full scan looked up %d connections in %d passes, want %d", th, p.RefLookups, p.Passes-1, sizes[th]*(p.Passes-1))
			}
			return nil
		}
		res, err := netsim.Script{Cop: cop, Threads: threads, Conns: conns, End: end, Probes: []time.Duration{idleProbe}, OnProbe: idle}.Run(s)
		if err != nil {
			return err
		}
		for th, r := range res {
			n := sizes[th]
			p := r.Probes[0]
			idlePasses += p.Passes
			idleVisited += p.Visited
			idleLookups += p.Lookups
			idleRef += p.RefLookups
			visited += r.Visited
			predicted += wantVisits[th]
			passes += r.Passes
			refLookups += r.RefLookups
			switch {
			case r.Visited != wantVisits[th] || r.Lookups != r.Visited:
				return fmt.Errorf("TW-3: thread %d: %d passes visited %d connections (lookups %d); the due buckets hold %d visits", th, r.Passes, r.Visited, r.Lookups, wantVisits[th])
			case r.Totals.Buckets != r.Passes:
				return fmt.Errorf("TW-3: thread %d: %d passes examined %d buckets; want one each", th, r.Passes, r.Totals.Buckets)
			}
			if err := sameTimeouts("TW-3", th, r.Fired, wantFired[th]); err != nil {
				return err
			}
			if witness == "" {
				witness = fmt.Sprintf("thread %d: %d connections; %d idle passes: wheel visited %d, lookups %d, full scan lookups %d; %d passes in all: wheel visited %d = predicted %d",
					th, n, p.Passes, p.Visited, p.Lookups, p.RefLookups, r.Passes, r.Visited, wantVisits[th])
			}
		}
		return nil
	})
	ok := sum.Failures == 0 && idlePasses > 0
	claims.Report(t, claims.Record{
		ID: "TW-3", Verdict: claims.Verdict(ok),
		Measured: fmt.Sprintf("%d idle passes (summed over threads, 100,000 connections per seed): wheel visited %d, lookups %d; full scan lookups %d (N per pass); over all %d passes, due connections included, the wheel visited exactly the %d predicted (full scan: %d lookups)",
			idlePasses, idleVisited, idleLookups, idleRef, passes, predicted, refLookups),
		Bound: "none due: 0 visited, 0 lookups (full scan: N); otherwise only due buckets", Value: float64(idleLookups), Unit: "lookups", Seeds: sum.Seeds,
		Witness: witness, Note: fmt.Sprintf("wheel visits in all: %d", visited),
	})
}

// TestTW4_BudgetContinuations fires bursts of simultaneous deadlines larger
// than the budget (16 to 4,096; 1.1 to 4 budgets, some exact multiples) on
// 1 to 3 threads with idle connections around them. Exactly: the pass at
// the tick after the deadline fires Budget of them and stops, the next
// Budget fire 1 ms later, and so on; budget_exhausted counts each stop, and
// there are no other passes. Then the swarm world checks, over random
// workloads, that no timeout waits longer than its budget continuations.
func TestTW4_BudgetContinuations(t *testing.T) {
	var bursts, burstConns, maxConts, exhausted int64
	var witness string
	var sum, wsum simtest.Summary
	var agg *twAgg
	t.Run("script", func(t *testing.T) { sum = tw4Script(t, &bursts, &burstConns, &maxConts, &exhausted, &witness) })
	t.Run("world", func(t *testing.T) { wsum, agg = worldTest(t, twSeeds(8), nil, "TW-4") })
	claims.Report(t, claims.Record{
		ID: "TW-4", Verdict: claims.Verdict(sum.Failures == 0 && wsum.Failures == 0 && maxConts > 0),
		Measured: fmt.Sprintf("%d bursts of %d connections in all: each pass fired exactly the budget, continuations exactly 1 ms apart (up to %d per burst), budget_exhausted = %d stops; swarm worlds: %d continuations, latest timeout %.0f ms after its pass",
			bursts, burstConns, maxConts, exhausted, agg.st.Exhausted, agg.lag.Value),
		Bound: "budget per pass; continuation 1 ms later; every stop counted", Value: float64(maxConts), Unit: "continuations", Seeds: sum.Seeds + wsum.Seeds,
		Witness: witness,
	})
}

// tw4Script is TW-4's exact part: scripted bursts.
func tw4Script(t *testing.T, bursts, burstConns, maxConts, exhausted *int64, witness *string) simtest.Summary {
	return simtest.Run(t, simtest.Options{Seeds: twSeeds(10), Config: twSim}, func(s *sim.Sim) error {
		rnd := s.Rand()
		threads := 1 + rnd.IntN(3)
		cop := inactivitycop.DefaultConfig()
		cop.Budget = []int{16, 64, 256, 4096}[rnd.IntN(4)]
		b := cop.Budget
		var conns []netsim.ScriptConn
		type burst struct {
			thread int
			pass   time.Duration
			n      int
		}
		var want []burst
		for th := range threads {
			for range 500 { // idle neighbours
				conns = append(conns, netsim.ScriptConn{Thread: th, Ops: []netsim.ConnOp{{At: 500 * time.Millisecond, Kind: netsim.SetInactivity, D: time.Hour}}})
			}
			tick := int64(2)
			for range 1 + rnd.IntN(3) {
				tick += 1 + int64(rnd.IntN(5))
				n := b + 1 + rnd.IntN(3*b)
				if rnd.IntN(4) == 0 {
					n = b * (2 + rnd.IntN(2)) // an exact multiple: the last pass ends the bucket without stopping
				}
				deadline := offGrid(rnd, tick-1)
				set := offGrid(rnd, int64(rnd.IntN(int(tick-1))))
				if set >= deadline {
					set = 700 * time.Millisecond
				}
				kind := netsim.SetInactivity
				if rnd.IntN(2) == 0 {
					kind = netsim.SetActive
				}
				for range n {
					conns = append(conns, netsim.ScriptConn{Thread: th, Ops: []netsim.ConnOp{{At: set, Kind: kind, D: deadline - set}}})
				}
				want = append(want, burst{thread: th, pass: time.Duration(tick) * time.Second, n: n})
			}
		}
		end := 20*time.Second + 500*time.Millisecond
		res, err := netsim.Script{Cop: cop, Threads: threads, Conns: conns, End: end}.Run(s)
		if err != nil {
			return err
		}
		wantAt := make([]map[time.Duration]int, threads)
		wantExhausted := make([]int64, threads)
		wantVisited := make([]int64, threads)
		for th := range threads {
			wantAt[th] = map[time.Duration]int{}
		}
		for _, bu := range want {
			conts := (bu.n + b - 1) / b
			for i := range conts {
				wantAt[bu.thread][bu.pass+time.Duration(i)*cop.Continuation] = min(b, bu.n-i*b)
			}
			wantExhausted[bu.thread] += int64(conts - 1)
			wantVisited[bu.thread] += int64(bu.n)
			*bursts++
			*burstConns += int64(bu.n)
			*maxConts = max(*maxConts, int64(conts-1))
		}
		for th, r := range res {
			*exhausted += r.Exhausted
			if !mapsEqual(r.FiredAt, wantAt[th]) {
				return fmt.Errorf("TW-4: thread %d, budget %d: timeouts fired per pass %v; want %v (the budget per pass, continuations 1 ms apart)", th, b, sortedCounts(r.FiredAt), sortedCounts(wantAt[th]))
			}
			if r.Exhausted != wantExhausted[th] {
				return fmt.Errorf("TW-4: thread %d, budget %d: budget_exhausted %d, want %d", th, b, r.Exhausted, wantExhausted[th])
			}
			if r.Passes != r.RefPasses+wantExhausted[th] {
				return fmt.Errorf("TW-4: thread %d: %d passes; want %d ticks plus %d continuations", th, r.Passes, r.RefPasses, wantExhausted[th])
			}
			if r.Visited != wantVisited[th] {
				return fmt.Errorf("TW-4: thread %d: visited %d, want the %d burst connections", th, r.Visited, wantVisited[th])
			}
			if *witness == "" && r.Exhausted > 0 {
				*witness = fmt.Sprintf("thread %d, budget %d: fired per pass %v, budget_exhausted %d", th, b, sortedCounts(r.FiredAt), r.Exhausted)
			}
		}
		return nil
	})
}

func mapsEqual(a, b map[time.Duration]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sortedCounts renders a count per instant in time order.
func sortedCounts(m map[time.Duration]int) string {
	keys := make([]time.Duration, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(" %v:%d", k, m[k])
	}
	return "[" + s + " ]"
}
