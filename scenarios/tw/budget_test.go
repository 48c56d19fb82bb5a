package tw

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// burstRun is what the callbacks showed of bursts of simultaneous
// deadlines on the production configuration.
type burstRun struct {
	// sizes are the connections fired by each pass of a burst, in order;
	// gaps the time between a burst's consecutive passes, both as the
	// callbacks saw them (their instants, from outside).
	bursts []burstSeen
}

type burstSeen struct {
	n     int
	at    time.Duration // the tick whose pass comes first
	sizes []int
	gaps  []time.Duration
}

// flyBursts opens 1 to 3 bursts of n simultaneous deadlines each on one
// handler of the production configuration, n drawn between one and three
// budgets of the claims table (sometimes an exact multiple), next to idle
// connections, and records each burst's passes from its callbacks.
func flyBursts(s *sim.Sim, budget int) (burstRun, error) {
	var out burstRun
	ctx := context.Background()
	rnd := s.Rand()
	tick := claims.Get("TW-2", "tick").Duration()
	var fired []checks.TimeoutEvent
	burstOf := map[uint64]int{}
	h, err := inactivitycop.NewHandler(s, "net-0", defaultCop(), func(to inactivitycop.Timeout) {
		if b, ok := burstOf[to.Conn.ID()]; ok {
			fired = append(fired, checks.TimeoutEvent{Conn: uint64(b), At: checks.At(s.Elapsed())})
		}
	})
	if err != nil {
		return out, err
	}
	runCtx, cancel := s.WithCancel(ctx)
	done := h.Start(runCtx)
	_ = s.Sleep(ctx, tick/2)
	for range 500 { // idle neighbours, in other buckets (within the ring: none wraps into a burst's)
		if err := h.SetInactivityTimeout(h.Open(), time.Hour+time.Duration(rnd.IntN(300))*tick); err != nil {
			return out, err
		}
	}
	k := int64(1)
	for b := range 1 + rnd.IntN(3) {
		k += 2 + int64(rnd.IntN(3))
		n := budget + 1 + rnd.IntN(2*budget)
		if rnd.IntN(4) == 0 {
			n = budget * (2 + rnd.IntN(2)) // an exact multiple: the last pass ends the bucket without stopping
		}
		deadline := time.Duration(k-1)*tick + tick/4 + time.Duration(rnd.Int64N(int64(tick/2)))
		active := rnd.IntN(2) == 0
		for range n {
			c := h.Open()
			burstOf[c.ID()] = b
			var err error
			if active {
				err = h.SetActiveTimeout(c, deadline-s.Elapsed())
			} else {
				err = h.SetInactivityTimeout(c, deadline-s.Elapsed())
			}
			if err != nil {
				return out, err
			}
		}
		out.bursts = append(out.bursts, burstSeen{n: n, at: time.Duration(k) * tick})
	}
	_ = s.Sleep(ctx, time.Duration(k+2)*tick-s.Elapsed())
	cancel()
	_ = done.Wait(ctx)
	for b := range out.bursts {
		var mine []checks.TimeoutEvent
		for _, e := range fired {
			if int(e.Conn) == b {
				mine = append(mine, e)
			}
		}
		bs := &out.bursts[b]
		passes := checks.GroupByInstant(mine)
		for i, p := range passes {
			bs.sizes = append(bs.sizes, len(p.Conns))
			if i > 0 {
				bs.gaps = append(bs.gaps, (p.At - passes[i-1].At).Duration())
			}
		}
		if got := slices.Max(append([]int{0}, bs.sizes...)); len(mine) != bs.n || got == 0 {
			return out, fmt.Errorf("TW-4: burst %d: %d of its %d connections timed out (passes %v)", b, len(mine), bs.n, bs.sizes)
		}
	}
	return out, nil
}

// TestTW4_FirstPassFiresTheBudget checks TW-4's budget on the production
// configuration. A burst of simultaneous deadlines larger than the claims
// table's budget is fired by its first pass exactly a budget at a time,
// each later pass firing the budget or what is left. The check counts from
// the callbacks (each pass's callbacks share its instant). A budget one
// larger fires one more in the first pass.
func TestTW4_FirstPassFiresTheBudget(t *testing.T) {
	claims.Run(t, claims.Check[burstRun]{
		Claim: "TW-4", Bound: "budget", Options: simtest.Options{Seeds: seeds(6), Config: twSim},
		Fly: func(s *sim.Sim, b claims.Bound) (burstRun, error) {
			r, err := flyBursts(s, int(b.Int()))
			if err != nil {
				return r, err
			}
			if smp := budgetSample(r, b); smp.Wrong > 0 {
				return r, fmt.Errorf("TW-4: %s", smp.Witness)
			}
			return r, nil
		},
		Sample: func(r burstRun) claims.Sample { return budgetSample(r, claims.Get("TW-4", "budget")) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("the first passes of %d bursts larger than the budget fired up to %s connections each (seen from the callbacks); %d passes fired other than the budget or what was left of their burst%s",
				o.Of, o.WorstText(), o.Wrong, failedText(o))
		},
	})
}

func budgetSample(r burstRun, b claims.Bound) claims.Sample {
	var smp claims.Sample
	budget := int(b.Int())
	for i, bs := range r.bursts {
		if len(bs.sizes) == 0 {
			continue
		}
		smp.Observe(float64(bs.sizes[0]), func() string {
			return fmt.Sprintf("burst %d of %d connections: passes fired %v", i, bs.n, bs.sizes)
		})
		left := bs.n
		for j, n := range bs.sizes {
			if want := min(budget, left); n != want {
				smp.Wrongly(func() string {
					return fmt.Sprintf("burst %d of %d connections: pass %d fired %d, want %d (passes fired %v; budget %d)", i, bs.n, j+1, n, want, bs.sizes, budget)
				})
			}
			left -= n
		}
	}
	return smp
}

// TestTW4_ContinuationsOneMillisecondApart checks TW-4's continuation on
// the production configuration: the passes that finish a burst larger than
// the budget come the claims table's continuation after the pass before
// them, measured from outside between the instants their callbacks run.
func TestTW4_ContinuationsOneMillisecondApart(t *testing.T) {
	claims.Run(t, claims.Check[burstRun]{
		Claim: "TW-4", Bound: "continuation", Options: simtest.Options{Seeds: seeds(6), Config: twSim},
		Fly: func(s *sim.Sim, b claims.Bound) (burstRun, error) {
			r, err := flyBursts(s, int(claims.Get("TW-4", "budget").Int()))
			if err != nil {
				return r, err
			}
			if smp := spacingSample(r, b); smp.Wrong > 0 {
				return r, fmt.Errorf("TW-4: %s", smp.Witness)
			}
			return r, nil
		},
		Sample: func(r burstRun) claims.Sample { return spacingSample(r, claims.Get("TW-4", "continuation")) },
		Measured: func(o claims.Outcome) string {
			b := claims.Get("TW-4", "continuation")
			if o.Seen && o.Wrong == 0 && b.Holds(o.Worst) {
				return fmt.Sprintf("every one of %d continuations measured came exactly %s after the pass before it (callback instants)%s", o.Of, b.Format(o.Worst), failedText(o))
			}
			return fmt.Sprintf("%d of %d continuation spacings measured differed from the table's %s; the farthest from it was %s%s", o.Wrong, o.Of, b.Format(b.Value), o.WorstText(), failedText(o))
		},
	})
}

// spacingSample's worst is the spacing farthest from the bound.
func spacingSample(r burstRun, b claims.Bound) claims.Sample {
	var smp claims.Sample
	want := b.Duration()
	var far time.Duration = -1
	for i, bs := range r.bursts {
		for j, g := range bs.gaps {
			smp.Of++
			if d := absDur(g - want); d > far {
				far = d
				smp.Worst, smp.Seen = g.Seconds(), true
				smp.Witness = fmt.Sprintf("burst %d of %d connections: continuation %d came %v after the pass before it (passes fired %v)", i, bs.n, j+1, g, bs.sizes)
			}
			if g != want {
				smp.Wrongly(func() string {
					return fmt.Sprintf("burst %d of %d connections: continuation %d came %v after the pass before it, not %v", i, bs.n, j+1, g, want)
				})
			}
		}
	}
	if smp.Seen && math.Abs(smp.Worst-b.Value) < 1e-12 {
		smp.Worst = b.Value // the exact figure, free of float rounding
	}
	return smp
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TestTW4_BurstsAcrossBudgets fires bursts of simultaneous deadlines larger
// than configured budgets of 1 to 4,096 (1.1 to 4 budgets, some exact
// multiples) on 1 to 3 threads with idle connections around them. Exactly:
// the pass at the tick after the deadline fires the budget and stops, the
// next budget fires a continuation of the claims table later, and so on;
// inactivity_cop_budget_exhausted counts each stop, and there are no other
// passes.
func TestTW4_BurstsAcrossBudgets(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-4", Options: simtest.Options{Seeds: seeds(8), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return scriptedBursts(s) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d bursts were not fired a budget per pass, a continuation apart, with every stop counted in budget_exhausted%s", o.Wrong, o.Of, failedText(o))
		},
	})
}

func scriptedBursts(s *sim.Sim) (claims.Sample, error) {
	var smp claims.Sample
	rnd := s.Rand()
	cont := claims.Get("TW-4", "continuation").Duration()
	tick := claims.Get("TW-2", "tick").Duration()
	threads := 1 + rnd.IntN(3)
	cop := defaultCop()
	budgets := []int{1, 2, 16, 64, 256, 4096} // the smallest there is, 1, among them
	cop.Budget = budgets[rnd.IntN(len(budgets))]
	b := cop.Budget
	var conns []netthreads.ScriptConn
	type burst struct {
		thread int
		pass   time.Duration
		n      int
	}
	var want []burst
	var burstOf []int // by script connection: its burst in want, -1 for an idle neighbour
	for th := range threads {
		for range 500 { // idle neighbours
			conns = append(conns, netthreads.ScriptConn{Thread: th, Ops: []checks.CopOp{{At: 500 * time.Millisecond, Kind: checks.OpSetInactivity, D: time.Hour}}})
			burstOf = append(burstOf, -1)
		}
		k := int64(2)
		for range 1 + rnd.IntN(3) {
			k += 1 + int64(rnd.IntN(5))
			n := b + 1 + rnd.IntN(3*b)
			if rnd.IntN(4) == 0 {
				n = b * (2 + rnd.IntN(2))
			}
			deadline := offGrid(rnd, k-1)
			set := offGrid(rnd, int64(rnd.IntN(int(k-1))))
			if set >= deadline {
				set = 700 * time.Millisecond
			}
			kind := checks.OpSetInactivity
			if rnd.IntN(2) == 0 {
				kind = checks.OpSetActive
			}
			for range n {
				conns = append(conns, netthreads.ScriptConn{Thread: th, Ops: []checks.CopOp{{At: set, Kind: kind, D: deadline - set}}})
				burstOf = append(burstOf, len(want))
			}
			want = append(want, burst{thread: th, pass: time.Duration(k) * tick, n: n})
		}
	}
	end := 20*time.Second + 500*time.Millisecond
	res, err := netthreads.Script{Cop: cop, Threads: threads, Conns: conns, End: end}.Run(s)
	if err != nil {
		return smp, err
	}
	// Each burst is as large as the script ran it (less the connections a
	// shrinker dropped).
	for i := range want {
		want[i].n = 0
	}
	for i, c := range res[0].Applied {
		if b := burstOf[i]; b >= 0 && len(c.Ops) > 0 {
			want[b].n++
		}
	}
	wantAt := make([]map[time.Duration]int, threads)
	wantExhausted := make([]int64, threads)
	wantVisited := make([]int64, threads)
	for th := range threads {
		wantAt[th] = map[time.Duration]int{}
	}
	for _, bu := range want {
		if bu.n == 0 {
			continue
		}
		conts := (bu.n + b - 1) / b
		for i := range conts {
			wantAt[bu.thread][bu.pass+time.Duration(i)*cont] = min(b, bu.n-i*b)
		}
		wantExhausted[bu.thread] += int64(conts - 1)
		wantVisited[bu.thread] += int64(bu.n)
		smp.Of++
	}
	for th, r := range res {
		var err error
		switch {
		case !sameCounts(r.FiredAt, wantAt[th]):
			err = fmt.Errorf("TW-4: thread %d, budget %d: timeouts fired per pass %v; want %v (the budget per pass, continuations %v apart)", th, b, sortedCounts(r.FiredAt), sortedCounts(wantAt[th]), cont)
		case r.Exhausted != wantExhausted[th]:
			err = fmt.Errorf("TW-4: thread %d, budget %d: budget_exhausted %d, want %d", th, b, r.Exhausted, wantExhausted[th])
		case r.Passes != r.RefPasses+wantExhausted[th]:
			err = fmt.Errorf("TW-4: thread %d: %d passes; want %d ticks plus %d continuations", th, r.Passes, r.RefPasses, wantExhausted[th])
		case r.Visited != wantVisited[th]:
			err = fmt.Errorf("TW-4: thread %d: visited %d, want the %d burst connections", th, r.Visited, wantVisited[th])
		}
		if err != nil {
			smp.Wrongly(func() string { return err.Error() })
			return smp, err
		}
		if smp.Witness == "" && r.Exhausted > 0 {
			smp.Witness = fmt.Sprintf("thread %d, budget %d: fired per pass %v, budget_exhausted %d", th, b, sortedCounts(r.FiredAt), r.Exhausted)
		}
	}
	return smp, nil
}

// TestTW4_WorldContinuations checks TW-4 over random swarm workloads: no
// timeout waits longer than the budget continuations its pass needs, and
// every continuation lands a whole number of the claims table's
// continuations after its pass (checks.CheckTimeouts).
func TestTW4_WorldContinuations(t *testing.T) {
	names := metricNames(t)
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-4", Options: simtest.Options{Seeds: seeds(8), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (*flown, error) {
			f, err := fly(s, names, []tweak{oneBurstThread})
			if err != nil {
				return f, err
			}
			_, err = f.sample("TW-4", 0)
			return f, err
		},
		Sample: func(f *flown) claims.Sample {
			if f == nil {
				return claims.Sample{}
			}
			smp, _ := f.sample("TW-4", int64(f.fig.Continued))
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d passes finished in continuations; %d timeouts came later than their continuations allow or off the continuation grid%s", o.Of, o.Wrong, failedText(o))
		},
		Probes: []claims.Probe{{Name: probeContinued, What: "a pass hit the budget and continued", Min: 5}},
	})
}

func sameCounts(a, b map[time.Duration]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a { //windtunnel:unordered comparing
		if b[k] != v {
			return false
		}
	}
	return true
}

// sortedCounts renders a count per instant in time order.
func sortedCounts(m map[time.Duration]int) string {
	keys := make([]time.Duration, 0, len(m))
	for k := range m { //windtunnel:unordered sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(" %v:%d", k, m[k])
	}
	return "[" + s + " ]"
}
