package tw

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestTW5_WrapAroundScripted checks TW-5's wraparound on rings of 8 to 32
// one-second buckets: connections with timeouts up to five rings (some
// pushed later by activity) are visited exactly as often as the contract
// predicts, once per ring until due, and fire at the first tick after the
// deadline. The figure is the most visits one connection needed.
func TestTW5_WrapAroundScripted(t *testing.T) {
	claims.Run(t, claims.Check[claims.Sample]{
		Claim: "TW-5", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (claims.Sample, error) { return wrapScript(s) },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d connections with timeouts up to five rings, on rings of 8 to 32: %d visited other than once per ring until due or fired other than at the first tick after the deadline; up to %.0f visits for one connection%s",
				o.Of, o.Wrong, o.Worst, failedText(o))
		},
	})
}

func wrapScript(s *sim.Sim) (claims.Sample, error) {
	var smp claims.Sample
	rnd := s.Rand()
	tick := claims.Get("TW-2", "tick").Duration()
	cop := defaultCop()
	cop.Buckets = 8 << rnd.IntN(3)
	ring := time.Duration(cop.Buckets) * tick
	threads := 1 + rnd.IntN(2)
	var conns []netthreads.ScriptConn
	for i := range 300 {
		set := offGrid(rnd, int64(rnd.IntN(cop.Buckets)))
		d := time.Duration(500+rnd.Int64N(int64(5*cop.Buckets)*1000)) * time.Millisecond
		c := netthreads.ScriptConn{Thread: i % threads, Ops: []checks.CopOp{{At: set, Kind: checks.OpSetInactivity, D: d}}}
		at := set
		for range rnd.IntN(3) { // activity, sometimes past a ring boundary
			at = offGrid(rnd, int64(at/time.Second)+1+int64(rnd.IntN(cop.Buckets)))
			c.Ops = append(c.Ops, checks.CopOp{At: at, Kind: checks.OpActivity})
		}
		if rnd.IntN(5) == 0 {
			at = offGrid(rnd, int64(at/time.Second)+1)
			c.Ops = append(c.Ops, checks.CopOp{At: at, Kind: checks.OpSetActive, D: time.Duration(rnd.Int64N(int64(3 * ring)))})
		}
		conns = append(conns, c)
	}
	end := 10*ring + 1500*time.Millisecond // past every deadline: all fire
	res, err := netthreads.Script{Cop: cop, Threads: threads, Conns: conns, End: end}.Run(s)
	if err != nil {
		return smp, err
	}
	// Predicted from the script as it ran (less what a shrinker dropped).
	conns = res[0].Applied
	wantVisits, wantFired, err := predictAll(cop.Buckets, threads, conns, end)
	if err != nil {
		return smp, err
	}
	fail := func(err error) (claims.Sample, error) {
		smp.Wrongly(func() string { return err.Error() })
		return smp, err
	}
	for th, r := range res {
		if r.Visited != wantVisits[th] {
			return fail(fmt.Errorf("TW-5: thread %d, ring %d: %d visits, the once-per-ring rule predicts %d", th, cop.Buckets, r.Visited, wantVisits[th]))
		}
		if err := sameTimeouts("TW-5", th, r.Fired, wantFired[th]); err != nil {
			return fail(err)
		}
		for _, f := range r.Fired {
			if want := (f.Deadline.Duration()/tick + 1) * tick; f.At.Duration() != want {
				return fail(fmt.Errorf("TW-5: thread %d: %v; want the first tick after the deadline, %v", th, f, want))
			}
		}
	}
	for i, c := range conns {
		p, _ := checks.PredictCop(int64(cop.Buckets), tick, c.Ops, end)
		if len(p.Fired) == 0 {
			continue
		}
		last := p.Fired[len(p.Fired)-1]
		smp.Observe(float64(p.Visits), func() string {
			return fmt.Sprintf("ring %d: connection %d (operations %v) visited %d times, fired %v at %v: once per ring until due", cop.Buckets, i+1, c.Ops, p.Visits, last.Deadline, last.At)
		})
	}
	return smp, nil
}

// TestTW5_CatchUpAfterLongPauses checks TW-5's fast-forward in the swarm
// world: every world pauses twice for longer than its longest ring, the
// second time restarting off the tick grid (a clock jump). Each restart's
// catch-up examines exactly min(missed ticks, ring) buckets, and
// every timeout, wrapped or caught up, is the full scan's (TW-2's
// differential).
func TestTW5_CatchUpAfterLongPauses(t *testing.T) {
	catchUpCheck(t, pausesBeyondTheRing, "catch-ups after pauses and clock jumps", []claims.Probe{
		{Name: netthreads.ProbeJumpPastRing, What: "a pause or clock jump longer than the ring", Min: 10},
		{Name: netthreads.ProbeJumpOffGrid, What: "a restart off the tick grid (a clock jump)", Min: 5},
	})
}

// TestTW5_FastForwardAtTheRing checks TW-5's fast-forward at its boundary:
// every world pauses once for one tick more than the ring of one of its
// threads, the shortest jump the claim says is fast-forwarded, and once for
// exactly that ring, the longest a catch-up walks whole. The pauses of
// TestTW5_CatchUpAfterLongPauses, half a ring past it and more, cannot tell
// a fast-forward from one that waits for a jump one tick longer: that one
// examines a bucket twice after a jump of ring+1 ticks, ring+1 buckets in
// all, and fires every timeout on time.
func TestTW5_FastForwardAtTheRing(t *testing.T) {
	catchUpCheck(t, pausesAtTheRing, "catch-ups after pauses of about a ring", []claims.Probe{
		{Name: netthreads.ProbeJumpOnePastRing, What: "a pause or clock jump that missed one tick more than the ring", Min: 8},
		{Name: netthreads.ProbeJumpExactlyRing, What: "a pause or clock jump that missed exactly the ring's ticks", Min: 8},
	})
}

// TestTW5_CatchUpAfterShortPauses checks TW-5's catch-up, and TW-2's
// timeouts against the full scan, after pauses of a few ticks that restart
// exactly on the tick grid (pausesOfAFewTicks). The catch-up pass must
// examine every missed tick, the one that has just begun included, and fire
// what the full scan fires there. A pass that reckons the tick two past its
// cursor as not yet begun when it lands exactly on its start examines one
// bucket too few. It fires its timeouts a tick late, up to two ticks after
// their deadlines. The pauses of the other TW-5 checks, a ring long, and a
// cop passing every tick never land there.
func TestTW5_CatchUpAfterShortPauses(t *testing.T) {
	catchUpCheck(t, pausesOfAFewTicks, "catch-ups after pauses of a few ticks", []claims.Probe{
		{Name: netthreads.ProbeFewTicksOnGrid, What: "a pause of two to four ticks that restarted exactly on the tick grid", Min: 20},
	})
}

// catchUpCheck is TW-5's catch-up check over worlds whose pauses pauses
// sets: every restart's catch-up examines exactly min(missed ticks, ring)
// buckets and, in one pass, visits each connection the reference says the
// wheel holds at most once (all of them over the whole ring)
// (CatchUp.Check), and every timeout is the full scan's
// (TW-2's differential). what names the catch-ups in the measured text.
func catchUpCheck(t *testing.T, pauses tweak, what string, probes []claims.Probe) {
	names := metricNames(t)
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-5", Options: simtest.Options{Seeds: seeds(12), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (*flown, error) {
			f, err := fly(s, names, []tweak{pauses}, "TW-2")
			if err != nil {
				return f, err
			}
			if _, err := f.sample("TW-5", 0); err != nil {
				return f, err
			}
			_, err = f.sample("TW-2", 0)
			return f, err
		},
		Sample: func(f *flown) claims.Sample {
			if f == nil {
				return claims.Sample{}
			}
			smp, _ := f.sample("TW-5", int64(len(f.catchUps)))
			smp.Wrong += int64(f.vs.Count("TW-2"))
			for _, cu := range f.catchUps {
				smp.Observe(float64(cu.Examined), func() string {
					return fmt.Sprintf("thread %d: the catch-up at %v after %d missed ticks on a ring of %d examined %d buckets over %d passes (off the grid: %v)",
						cu.Thread, cu.At, cu.PauseTicks, cu.Ring, cu.Examined, cu.Passes, cu.OffGridJump)
				})
				smp.Of--
			}
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d %s, up to %.0f buckets examined by one; %d examined other than min(missed ticks, ring), visited a connection twice in one pass or (over the whole ring) left one out, or fired other than the full scan%s",
				o.Of, what, o.Worst, o.Wrong, failedText(o))
		},
		Probes: probes,
	})
}
