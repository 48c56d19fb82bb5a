package tw

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/timerwheel"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// idleVisits is one seed of TestTW3_PassVisitsOnlyDue.
type idleVisits struct {
	smp claims.Sample
}

// TestTW3_PassVisitsOnlyDue is the seed's exact-count benchmark under the
// simulator: 100,000 connections on 2 to 4 net threads of the production
// configuration, idle deadlines spread over the 4,096 s ring, and a few
// hundred connections that come due (some pushed later by activity, some
// with both timeouts). Every idle connection had activity after its timeout
// was set, so the wheel holds an earlier deadline than the real one: a pass
// that visited it would re-arm it at the later one. Visits are observed
// from outside, by comparing every idle connection's wheel deadline before
// and after each of the first passes (none due): 0 visited, also by the
// cop's own visited and lookups counters, while the full scan looks up N
// per pass. The bare wheel, holding 100,000 elements of the test's own
// whose Deadline method counts its calls, reads no deadline in ten idle
// passes. Over all 41 passes the cops visit exactly the connections whose
// bucket came due, as the TW-1 contract predicts (checks.PredictCop), and
// fire exactly the predicted timeouts.
func TestTW3_PassVisitsOnlyDue(t *testing.T) {
	claims.Run(t, claims.Check[idleVisits]{
		Claim: "TW-3", Bound: "visits when none due", Options: simtest.Options{Seeds: seeds(3), Config: twSim},
		Fly:    func(s *sim.Sim, b claims.Bound) (idleVisits, error) { return visitsOnlyDue(s, b) },
		Sample: func(r idleVisits) claims.Sample { return r.smp },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("at most %s connections visited by one idle pass over 100,000 connections (%d observations: each idle pass of each thread, seen from outside by the wheel deadlines a visit would re-arm and by the cop's counters, and a bare wheel counting its elements' Deadline calls)%s",
				o.WorstText(), o.Of, failedText(o))
		},
		More: claims.Hooks[idleVisits]{
			NoteFrom: func(o claims.Outcome) string {
				passes, lookups := o.Tally[tallyRefPasses], o.Tally[tallyRefLookups]
				if passes == 0 {
					return "no run reached its end: the full scan's lookups were not counted"
				}
				return fmt.Sprintf("each thread's full-scan reference, fed the same operations, looked up %d connections in %d passes (%.0f per pass, where the wheel's idle passes visited none); over all passes the wheel visited exactly the due buckets' connections the TW-1 contract predicts",
					lookups, passes, float64(lookups)/float64(passes))
			},
		},
	})
}

func visitsOnlyDue(s *sim.Sim, b claims.Bound) (idleVisits, error) {
	const total = 100_000
	end := 40*time.Second + 500*time.Millisecond
	tick := claims.Get("TW-2", "tick").Duration()
	var out idleVisits
	rnd := s.Rand()
	threads := 2 + rnd.IntN(3)
	cop := defaultCop()
	conns := make([]netthreads.ScriptConn, 0, total)
	idle := make([][]int, threads) // script indices of each thread's idle connections
	for i := range total {
		c := netthreads.ScriptConn{Thread: i % threads}
		open := 500 * time.Millisecond
		if rnd.IntN(400) > 0 { // idle: a deadline beyond the run, inside the ring, pushed later by activity
			d := 60*time.Second + time.Duration(rnd.Int64N(int64(3900*time.Second)))
			c.Ops = []checks.CopOp{{At: open, Kind: checks.OpSetInactivity, D: d}, {At: 1500 * time.Millisecond, Kind: checks.OpActivity}}
			idle[c.Thread] = append(idle[c.Thread], i)
			conns = append(conns, c)
			continue
		}
		// Due within the run, after the idle passes.
		set := offGrid(rnd, int64(rnd.IntN(20)))
		c.Ops = []checks.CopOp{{At: open, Kind: checks.OpSetInactivity, D: 11*time.Second + time.Duration(rnd.Int64N(int64(10*time.Second)))}}
		if set > open {
			c.Ops = append(c.Ops, checks.CopOp{At: set, Kind: checks.OpSetInactivity, D: time.Duration(11+rnd.IntN(9))*time.Second + time.Duration(rnd.IntN(1000))*time.Millisecond})
		}
		last := set
		for range rnd.IntN(3) { // activity pushes it later; the wheel is not touched
			at := offGrid(rnd, int64(last/time.Second)+1+int64(rnd.IntN(4)))
			if at < 35*time.Second {
				c.Ops, last = append(c.Ops, checks.CopOp{At: at, Kind: checks.OpActivity}), at
			}
		}
		if rnd.IntN(3) == 0 {
			at := offGrid(rnd, int64(last/time.Second)+1)
			c.Ops = append(c.Ops, checks.CopOp{At: at, Kind: checks.OpSetActive, D: 11*time.Second + time.Duration(rnd.IntN(5000))*time.Millisecond})
		}
		conns = append(conns, c)
	}
	// Inspections: right after the activity, then after each idle pass.
	probes := []time.Duration{1700 * time.Millisecond}
	for k := 2; k <= 10; k++ {
		probes = append(probes, time.Duration(k)*tick+500*time.Millisecond)
	}
	prev := make([][]time.Time, threads)
	lastVisited := make([]int64, threads)
	inspect := func(th int, at time.Duration, c *inactivitycop.Cop, wc []*inactivitycop.Conn, applied []netthreads.ScriptConn) error {
		changed := int64(0)
		first := prev[th] == nil
		if first {
			prev[th] = make([]time.Time, len(idle[th]))
		}
		for k, i := range idle[th] {
			if len(applied[i].Ops) != len(conns[i].Ops) {
				continue // a shrinker dropped its open or its activity: it is not held early
			}
			held, ok := wc[i].WheelDeadline()
			if !ok || wc[i].Deadline().Equal(held) {
				changed++ // no longer held early: a pass visited and re-armed it (or dropped it)
			} else if !first && !held.Equal(prev[th][k]) {
				changed++
			}
			prev[th][k] = held
		}
		visited := c.Metrics().Visited.Value()
		metric := visited - lastVisited[th]
		lastVisited[th] = visited
		if first {
			return nil
		}
		worst := max(changed, metric)
		out.smp.Observe(float64(worst), func() string {
			return fmt.Sprintf("thread %d (%d idle connections): the pass before +%v re-armed %d of them (observed from outside), the cop counted %d visits", th, len(idle[th]), at, changed, metric)
		})
		if worst != 0 {
			out.smp.Wrongly(func() string {
				return fmt.Sprintf("TW-3: thread %d: the idle pass before +%v visited connections: %d idle connections re-armed (their wheel deadline moved), %d visits counted; none was due", th, at, changed, metric)
			})
			return fmt.Errorf("%s", out.smp.Witness)
		}
		return nil
	}
	res, err := netthreads.Script{Cop: cop, Threads: threads, Conns: conns, End: end, Probes: probes, Inspect: inspect}.Run(s)
	if err != nil {
		return out, err
	}
	// Predicted from the script as it ran (less what a shrinker dropped).
	wantVisits, wantFired, err := predictAll(cop.Buckets, threads, res[0].Applied, end)
	if err != nil {
		return out, err
	}
	out.smp.Tally = map[string]int64{}
	for th, r := range res {
		out.smp.Tally[tallyRefPasses] += r.RefPasses
		out.smp.Tally[tallyRefLookups] += r.RefLookups
		switch {
		case r.Visited != wantVisits[th] || r.Lookups != r.Visited:
			return out, fmt.Errorf("TW-3: thread %d: %d passes visited %d connections (lookups %d); the due buckets hold %d visits", th, r.Passes, r.Visited, r.Lookups, wantVisits[th])
		case r.Totals.Buckets != r.Passes:
			return out, fmt.Errorf("TW-3: thread %d: %d passes examined %d buckets; want one each", th, r.Passes, r.Totals.Buckets)
		}
		if err := sameTimeouts("TW-3", th, r.Fired, wantFired[th]); err != nil {
			return out, err
		}
	}
	// The bare wheel, observed through its elements.
	calls, err := bareWheelIdle(total, tick, cop.Buckets)
	if err != nil {
		return out, err
	}
	out.smp.Observe(float64(calls), func() string {
		return fmt.Sprintf("a bare wheel of %d idle elements read %d deadlines in ten idle passes", total, calls)
	})
	if calls != int64(b.Value) {
		out.smp.Wrongly(nil)
		return out, fmt.Errorf("TW-3: a bare wheel of %d idle elements called Deadline %d times in ten idle passes; none was due", total, calls)
	}
	return out, nil
}

// The Tally keys of TW-3's samples: the full-scan reference's passes and
// lookups over the same script, the figure the wheel's 0 is compared with.
const (
	tallyRefPasses  = "fullscan.passes"
	tallyRefLookups = "fullscan.lookups"
)

// countingTimer is a wheel element of the test's own: it counts the
// wheel's reads of its deadline, which is what a visit is.
type countingTimer struct {
	timerwheel.Element
	at    time.Time
	reads *int64
}

func (c *countingTimer) Deadline() time.Time { *c.reads++; return c.at }
func (c *countingTimer) Expired(time.Time)   {}

// bareWheelIdle schedules n elements beyond ten ticks on a wheel and
// returns how many deadlines ten idle passes read.
func bareWheelIdle(n int, tick time.Duration, buckets int) (int64, error) {
	w, err := timerwheel.New(sim.Epoch, tick, buckets)
	if err != nil {
		return 0, err
	}
	var reads int64
	elems := make([]countingTimer, n)
	for i := range elems {
		elems[i] = countingTimer{at: sim.Epoch.Add(time.Duration(20+i%3000) * tick), reads: &reads}
		w.Schedule(&elems[i], elems[i].at)
	}
	for k := range 10 {
		if _, err := w.Expire(sim.Epoch.Add(time.Duration(k)*tick), 1<<30); err != nil {
			return 0, err
		}
	}
	return reads, nil
}
