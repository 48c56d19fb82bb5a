package scenarios

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/netsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestTW5_WraparoundAndFastForward checks TW-5 twice. Scripted: on rings of
// 8 to 32 one-second buckets, connections with timeouts up to five rings
// (some pushed later by activity) are visited exactly as often as the
// contract predicts, once per ring until due, and fire at the first tick
// after the deadline. Swarm: every world pauses at least twice for longer
// than its longest ring (one pause ending off the tick grid, a clock jump):
// each restart's catch-up examines exactly min(missed ticks, ring) distinct
// buckets (the fast-forward), and every timeout, wrapped or caught up, is
// the full scan's (the TW-2 differential).
func TestTW5_WraparoundAndFastForward(t *testing.T) {
	var visits, fired, rearmed int64
	var most claims.Max
	var ssum, wsum simtest.Summary
	var agg *twAgg
	t.Run("script", func(t *testing.T) {
		ssum = simtest.Run(t, simtest.Options{Seeds: twSeeds(10), Config: twSim}, func(s *sim.Sim) error {
			return tw5Script(s, &visits, &fired, &rearmed, &most)
		})
	})
	t.Run("world", func(t *testing.T) {
		wsum, agg = worldTest(t, twSeeds(15), func(c *netsim.Config, rnd *rand.Rand) {
			ring := c.MaxRing()
			long := func() time.Duration { return ring + ring/2 + time.Duration(rnd.Int64N(int64(ring))) }
			c.SetPauses(rnd, []time.Duration{long(), long()}, []bool{false, true})
		}, "TW-5", "TW-2")
	})
	ok := ssum.Failures == 0 && wsum.Failures == 0 && agg.wrappedCatchUps > 0 && agg.offGrid > 0 && rearmed > 0
	claims.Report(t, claims.Record{
		ID: "TW-5", Verdict: claims.Verdict(ok),
		Measured: fmt.Sprintf("scripted rings of 8-32: %d visits for %d timeouts, %d of them re-arms once per ring, exactly as predicted; %d catch-ups (%d after pauses longer than the ring, %d off-grid clock jumps, up to %d missed ticks) each examined min(missed ticks, ring) buckets (at most %d); %d timeouts longer than the ring and %d fired by catch-ups identical to the full scan's",
			visits, fired, rearmed, agg.catchUps, agg.wrappedCatchUps, agg.offGrid, agg.longestPause, agg.examined, agg.st.Long, agg.st.Paused),
		Bound: "revisited once per ring until due; a catch-up examines at most the ring", Value: float64(agg.examined), Unit: "buckets", Seeds: ssum.Seeds + wsum.Seeds,
		Witness: most.Witness,
	})
}

// tw5Script is one scripted seed of TW-5: long timeouts on a small ring.
func tw5Script(s *sim.Sim, visits, fired, rearmed *int64, most *claims.Max) error {
	rnd := s.Rand()
	cop := inactivitycop.DefaultConfig()
	cop.Buckets = 8 << rnd.IntN(3)
	ring := time.Duration(cop.Buckets) * time.Second
	threads := 1 + rnd.IntN(2)
	var conns []netsim.ScriptConn
	for i := range 300 {
		set := offGrid(rnd, int64(rnd.IntN(cop.Buckets)))
		d := time.Duration(500+rnd.Int64N(int64(5*cop.Buckets)*1000)) * time.Millisecond
		c := netsim.ScriptConn{Thread: i % threads, Ops: []netsim.ConnOp{{At: set, Kind: netsim.SetInactivity, D: d}}}
		at := set
		for range rnd.IntN(3) { // activity, sometimes past a ring boundary
			at = offGrid(rnd, int64(at/time.Second)+1+int64(rnd.IntN(cop.Buckets)))
			c.Ops = append(c.Ops, netsim.ConnOp{At: at, Kind: netsim.Activity})
		}
		if rnd.IntN(5) == 0 {
			at = offGrid(rnd, int64(at/time.Second)+1)
			c.Ops = append(c.Ops, netsim.ConnOp{At: at, Kind: netsim.SetActive, D: time.Duration(rnd.Int64N(int64(3 * ring)))})
		}
		conns = append(conns, c)
	}
	end := 10*ring + 1500*time.Millisecond // past every deadline: all fire
	wantVisits, wantFired, err := predictAll(cop, threads, conns, end)
	if err != nil {
		return err
	}
	res, err := netsim.Script{Cop: cop, Threads: threads, Conns: conns, End: end}.Run(s)
	if err != nil {
		return err
	}
	for th, r := range res {
		if r.Visited != wantVisits[th] {
			return fmt.Errorf("TW-5: thread %d, ring %d: %d visits, the once-per-ring rule predicts %d", th, cop.Buckets, r.Visited, wantVisits[th])
		}
		if err := sameTimeouts("TW-5", th, r.Fired, wantFired[th]); err != nil {
			return err
		}
		for _, f := range r.Fired {
			if want := (f.Deadline/time.Second + 1) * time.Second; f.At != want {
				return fmt.Errorf("TW-5: thread %d: %v; want the first tick after the deadline, %v", th, f, want)
			}
		}
		*visits += r.Visited
		*fired += int64(len(r.Fired))
		*rearmed += r.Totals.Rearmed
	}
	for i, c := range conns {
		p, _ := netsim.Predict(int64(cop.Buckets), cop.Tick, c.Ops, end)
		if len(p.Fired) == 0 {
			continue
		}
		last := p.Fired[len(p.Fired)-1]
		most.Observe(float64(p.Visits), func() string {
			return fmt.Sprintf("ring %d: connection %d (operations %v) visited %d times, fired %v at %v: once per ring until due", cop.Buckets, i+1, c.Ops, p.Visits, last.Deadline, last.At)
		})
	}
	return nil
}
