package tw

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestTW1_WheelNeverLater checks TW-1 in the swarm world: after every
// operation (on the connection it touched), after every pass that fired
// (on every connection) and at random instants (every connection, under
// the handler's lock), a live deadline is held by the wheel at that
// deadline or earlier. Activity pushes real deadlines later without
// touching the wheel; setters shorten deadlines below what the wheel
// holds, also from timeout callbacks while the pass still owes budget
// continuations. The figure is how much earlier than the real deadline the
// wheel got to hold one (allowed).
func TestTW1_WheelNeverLater(t *testing.T) {
	names := metricNames(t)
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-1", Options: simtest.Options{Seeds: seeds(20), Config: twSim},
		Fly: func(s *sim.Sim, _ claims.Bound) (*flown, error) {
			f, err := fly(s, names, []tweak{oneBurstThread}, "TW-1")
			if err != nil {
				return f, err
			}
			_, err = f.sample("TW-1", 0)
			return f, err
		},
		Sample: func(f *flown) claims.Sample {
			if f == nil {
				return claims.Sample{}
			}
			st := f.w.Stats()
			smp, _ := f.sample("TW-1", int64(st.ConnChecks))
			smp.Worst, smp.Seen = st.MaxEarly.Seconds(), true
			if smp.Wrong == 0 {
				smp.Witness = st.MaxEarlyWitness
			}
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d of %d connection checks found a live deadline the wheel held later than the real one or not at all; the wheel held a deadline up to %v earlier than the real one (allowed)",
				o.Wrong, o.Of, time.Duration(o.Worst*float64(time.Second)).Round(time.Millisecond))
		},
		Probes: []claims.Probe{
			{Name: netthreads.ProbeShortened, What: "a setter shortened a deadline below the one the wheel held", Min: 50},
			{Name: netthreads.ProbeShortenedInPass, What: "a timeout setter shortened a deadline during a cop pass (from a timeout callback)", Min: 20},
			{Name: netthreads.ProbeActivityPastWheel, What: "activity pushed a deadline later after the wheel's deadline for it had passed (its bucket due at the next pass)", Min: 20},
			{Name: probeContinued, What: "a pass hit the budget and continued", Min: 5},
		},
	})
}

// TestTW1_ProofTwoRounds proves TW-1 on the production handler over two
// rounds of its race. One net thread with three connections: c1 idle
// (inactivity 2.5 s), c2 idle with a long timeout (30 s), c3 with an active
// timeout of 2 s whose callback closes it (so the pass at 3 s still runs
// callbacks after releasing its lock). Round 1 at 3 s: the cop's pass,
// activity on c1 (whose bucket is due at 3 s) and a setter shortening c2 to
// 4.5 s all start at once. Round 2 at 5 s: the second pass, activity on c2
// (due at 5 s if round 1 shortened it first) and a setter shortening c1's
// inactivity timeout to 5.1 s. In every schedule with at most 2
// preemptions, three things hold. After every operation the audit finds no
// connection the wheel holds later than its real deadline or not at all,
// and a shortened deadline is held exactly at its real one. No timeout
// fires at or before its deadline. And every deadline that passed before
// the second pass was fired by it (the harm a missed re-arm does).
func TestTW1_ProofTwoRounds(t *testing.T) {
	tick := claims.Get("TW-2", "tick").Duration()
	claims.Prove(t, claims.ProofCheck{
		Claim:     "TW-1",
		Config:    "one net thread, three connections; two rounds (at 3 s and 5 s) of a cop pass racing activity on a connection whose bucket is due and a setter shortening another's deadline",
		Reduction: sim.ReductionDPOR,
		Body:      func(s *sim.Sim) { twoRounds(s, tick) },
		Probes: []claims.Probe{
			{Name: "tw/proof-activity-while-bucket-due", What: "activity pushed a deadline later while its bucket was due and not yet visited", Min: 1},
			{Name: "tw/proof-shortened-during-pass", What: "a setter shortened a deadline during a cop pass (after its locked section, before its callbacks ended)", Min: 1},
			{Name: "tw/proof-shortened-held-exactly", What: "after a shortening the wheel held exactly the new real deadline (the bound, reached)", Min: 1},
			{Name: "tw/proof-shortened-then-fired", What: "a shortened deadline passed before the second pass, which fired it", Min: 1},
		},
	})
}

func twoRounds(s *sim.Sim, tick time.Duration) {
	ctx := context.Background()
	at := func(d time.Duration) time.Time { return sim.Epoch.Add(d) }
	var h *inactivitycop.Handler
	fired := map[uint64][]inactivitycop.Timeout{}
	inCallbacks := 0 // the pass whose callbacks are running, 0 if none
	h, err := inactivitycop.NewHandler(s, "proof", defaultCop(), func(to inactivitycop.Timeout) {
		if !to.At.After(to.Deadline) {
			s.Failf("TW-2: %v timeout of conn %d fired at +%v, not after its deadline +%v", to.Kind, to.Conn.ID(), to.At.Sub(sim.Epoch), to.Deadline.Sub(sim.Epoch))
		}
		fired[to.Conn.ID()] = append(fired[to.Conn.ID()], to)
		if to.Conn.ID() == 3 {
			h.Close(to.Conn) // a yield while the pass is still delivering
		}
	})
	if err != nil {
		s.Failf("setup: %v", err)
	}
	c1, c2, c3 := h.Open(), h.Open(), h.Open()
	must := func(err error) {
		if err != nil {
			s.Failf("setter: %v", err)
		}
	}
	must(h.SetInactivityTimeout(c1, 2500*time.Millisecond))
	must(h.SetInactivityTimeout(c2, 30*time.Second))
	must(h.SetActiveTimeout(c3, 2*time.Second))
	audit := func(after string) {
		h.Do(func(cop *inactivitycop.Cop, now time.Time) {
			a := cop.Audit()
			if len(a.Late) > 0 || len(a.Lost) > 0 {
				s.Failf("TW-1: after %s at +%v: %d late and %d lost connection(s) in the wheel", after, now.Sub(sim.Epoch), len(a.Late), len(a.Lost))
			}
		})
	}
	// shorten runs a setter that must leave c's deadline earlier; it
	// reports whether it ran during pass n's callbacks.
	shorten := func(c *inactivitycop.Conn, set func() error) {
		during := inCallbacks
		must(set())
		if during != 0 && inCallbacks == during {
			s.Probe("tw/proof-shortened-during-pass")
		}
		h.Do(func(*inactivitycop.Cop, time.Time) {
			held, ok := c.WheelDeadline()
			if real := c.Deadline(); ok && held.Equal(real) {
				s.Probe("tw/proof-shortened-held-exactly")
			}
		})
		audit("a shortening")
	}
	// activity makes activity on c, noting whether its bucket was due and
	// not yet visited (the wheel still holds a deadline whose tick began).
	activity := func(c *inactivitycop.Conn) {
		h.Do(func(cop *inactivitycop.Cop, now time.Time) {
			if held, ok := c.WheelDeadline(); ok && held.Sub(sim.Epoch)/tick+1 <= now.Sub(sim.Epoch)/tick {
				s.Probe("tw/proof-activity-while-bucket-due")
			}
			cop.NetActivity(c, now)
		})
		audit("activity")
	}
	sleepTo := func(d time.Duration) { _ = s.Sleep(ctx, d-s.Elapsed()) }
	var c2Deadline time.Time // round 1's shortened deadline
	wg := s.NewWaitGroup("tasks")
	wg.Add(3)
	s.Go("cop", func() {
		defer wg.Done()
		for n, p := range []time.Duration{3 * time.Second, 5 * time.Second} {
			sleepTo(p)
			inCallbacks = n + 1
			h.Pass()
			inCallbacks = 0
			audit("a cop pass")
		}
	})
	s.Go("activity", func() {
		defer wg.Done()
		sleepTo(3 * time.Second)
		activity(c1)
		sleepTo(5 * time.Second)
		activity(c2)
	})
	s.Go("setter", func() {
		defer wg.Done()
		sleepTo(3 * time.Second)
		shorten(c2, func() error { return h.SetInactivityTimeout(c2, 1500*time.Millisecond) })
		c2Deadline = at(4500 * time.Millisecond)
		sleepTo(5 * time.Second)
		shorten(c1, func() error { return h.SetInactivityTimeout(c1, 100*time.Millisecond) })
	})
	_ = wg.Wait(ctx)
	audit("the end")
	// The second pass fired c2 unless round 2's activity pushed its
	// deadline past it first.
	h.Do(func(cop *inactivitycop.Cop, now time.Time) {
		if d := c2.InactivityDeadline(); !d.IsZero() && d.Before(at(5*time.Second)) {
			s.Failf("TW-1: c2's shortened deadline +%v passed before the pass at +5s, which did not fire it (the wheel held it too late)", d.Sub(sim.Epoch))
		}
	})
	for _, to := range fired[c2.ID()] {
		if to.Deadline.Equal(c2Deadline) {
			s.Probe("tw/proof-shortened-then-fired")
		}
	}
}
