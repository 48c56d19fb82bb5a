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

// TestTW2_SameAsFullScan checks TW-2 in the swarm world: every operation is
// mirrored into the full-scan reference cop at the same instant, which
// passes at every tick and restart. The wheel cop must fire exactly the
// reference's timeouts (connection, kind, deadline), never at or before the
// deadline, and at the reference's pass or within its budget
// continuations; after the drain nothing may stay armed. Every world has a
// thread with deadlines exactly on ticks (where "passed" means strictly
// after), a thread whose bursts exceed its budget, and two pauses longer
// than the ring, one ending off the tick grid. The figure is the latest a
// timeout fired after its deadline at a pass on the grid; the random
// workload samples it, TestTW2_LateByAtMostATick drives it to the bound.
func TestTW2_SameAsFullScan(t *testing.T) {
	names := metricNames(t)
	claims.Run(t, claims.Check[*flown]{
		Claim: "TW-2", Bound: "tick", Options: simtest.Options{Seeds: seeds(20), Config: twSim}, Sampled: true,
		Fly: func(s *sim.Sim, _ claims.Bound) (*flown, error) {
			f, err := fly(s, names, []tweak{oneBurstThread, oneAlignedThread, pausesBeyondTheRing}, "TW-2")
			if err != nil {
				return f, err
			}
			_, err = f.sample("TW-2", 0)
			return f, err
		},
		Sample: func(f *flown) claims.Sample {
			if f == nil {
				return claims.Sample{}
			}
			smp, _ := f.sample("TW-2", int64(f.fig.Matched))
			if f.fig.Matched > 0 {
				smp.Worst, smp.Seen = f.fig.MaxLate.Seconds(), true
				if smp.Wrong == 0 {
					smp.Witness = f.fig.LateWitness
				}
			}
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d timeouts compared with the full scan's, %d differed; on the tick grid the latest fired %s after its deadline%s",
				o.Of, o.Wrong, o.WorstText(), failedText(o))
		},
		Probes: []claims.Probe{
			{Name: probeOnTick, What: "a deadline exactly on a pass instant (fired one tick later, not at it)", Min: 20},
			{Name: probeContinued, What: "a pass hit the budget and continued", Min: 5},
			{Name: netthreads.ProbeJumpPastRing, What: "a pause or clock jump longer than the ring", Min: 5},
			{Name: netthreads.ProbeJumpOffGrid, What: "a restart off the tick grid (a clock jump)", Min: 3},
			{Name: netthreads.ProbeShortenedBeforeContinuation, What: "a timeout callback shortened a deadline, and its pass continued after it", Min: 1},
		},
	})
}

// lateness is one seed of TestTW2_LateByAtMostATick.
type lateness struct {
	smp    claims.Sample
	rounds int
}

// TestTW2_LateByAtMostATick drives TW-2's lateness to its bound on the
// production configuration. Pass instants are learnt from outside, from
// the instant a timeout callback runs. In each callback, at a pass instant
// P, the chain arms the next round. It sets a deadline 1 ns after P (with a
// 1 ns timeout: the latest a timeout can come, a tick minus 1 ns). It sets
// deadlines exactly one tick of the claims table after P, by an inactivity
// timeout, an active timeout and activity on an armed connection. Those
// fall on the next pass instant: not passed there, fired one tick later,
// exactly at the bound. Each lateness is the callback's instant minus the
// deadline the chain computed. A tick 1% longer fires the 1 ns deadline
// more than a tick late; a comparison that fires at the deadline itself, or
// a re-arm a tick late, fires the on-pass deadlines wrong.
func TestTW2_LateByAtMostATick(t *testing.T) {
	claims.Run(t, claims.Check[lateness]{
		Claim: "TW-2", Bound: "tick", Options: simtest.Options{Seeds: seeds(10), Config: twSim},
		Fly: func(s *sim.Sim, b claims.Bound) (lateness, error) {
			return lateChain(s, b.Duration(), 8+s.Rand().IntN(8))
		},
		Sample: func(r lateness) claims.Sample { return r.smp },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d timeouts placed 1 ns after or exactly one tick after a pass instant observed from outside: the latest fired %s after its deadline; %d fired at or before it, or not within the bound%s",
				o.Of, o.WorstText(), o.Wrong, failedText(o))
		},
	})
}

// lateChain runs rounds of the chain on one handler and measures each
// timeout's lateness from its callback.
func lateChain(s *sim.Sim, tick time.Duration, rounds int) (lateness, error) {
	var out lateness
	ctx := context.Background()
	type armed struct {
		deadline time.Duration
		how      string
	}
	want := map[uint64]armed{} // by connection: the deadline the chain set
	var h *inactivitycop.Handler
	var failure error
	fail := func(err error) {
		if failure == nil {
			failure = err
		}
	}
	// next arms round r at the pass instant p (now).
	var next func(r int, p time.Duration)
	h, err := inactivitycop.NewHandler(s, "net-0", defaultCop(), func(to inactivitycop.Timeout) {
		now := s.Elapsed()
		a, ok := want[to.Conn.ID()]
		if !ok {
			return
		}
		delete(want, to.Conn.ID())
		late := now - a.deadline
		out.smp.Observe(late.Seconds(), func() string {
			return fmt.Sprintf("conn %d (%s): deadline +%v, its callback ran at +%v: %v late", to.Conn.ID(), a.how, a.deadline, now, late)
		})
		switch {
		case since(to.Deadline) != a.deadline:
			out.smp.Wrongly(func() string {
				return fmt.Sprintf("conn %d (%s): reported deadline +%v, set +%v", to.Conn.ID(), a.how, since(to.Deadline), a.deadline)
			})
		case late <= 0:
			out.smp.Wrongly(func() string {
				return fmt.Sprintf("conn %d (%s): fired at +%v, not after its deadline +%v", to.Conn.ID(), a.how, now, a.deadline)
			})
		case late > tick:
			out.smp.Wrongly(func() string {
				return fmt.Sprintf("conn %d (%s): fired at +%v, %v after its deadline +%v: more than a tick", to.Conn.ID(), a.how, now, late, a.deadline)
			})
		}
		if a.how == "1 ns timeout" {
			next(out.rounds, now)
		}
	})
	if err != nil {
		return out, err
	}
	arm := func(c *inactivitycop.Conn, how string, set func() error, deadline time.Duration) {
		if err := set(); err != nil {
			fail(err)
		}
		want[c.ID()] = armed{deadline: deadline, how: how}
	}
	var pending *inactivitycop.Conn // armed a tick before activity puts it on a pass instant
	next = func(r int, p time.Duration) {
		if r >= rounds {
			return
		}
		out.rounds++
		a, b, c := h.Open(), h.Open(), h.Open()
		arm(a, "1 ns timeout", func() error { return h.SetInactivityTimeout(a, time.Nanosecond) }, p+time.Nanosecond)
		arm(b, "inactivity timeout of a tick", func() error { return h.SetInactivityTimeout(b, tick) }, p+tick)
		arm(c, "active timeout of a tick", func() error { return h.SetActiveTimeout(c, tick) }, p+tick)
		if pending != nil { // armed at the last pass instant with a tick: activity now moves it to p+tick
			h.NetActivity(pending)
			want[pending.ID()] = armed{deadline: p + tick, how: "activity onto the next pass instant"}
		}
		// Armed with a tick now, its deadline is the next pass instant,
		// where it has not passed; the activity at that instant moves it
		// onto the pass after (the wheel still holds the first).
		pending = h.Open()
		if err := h.SetInactivityTimeout(pending, tick); err != nil {
			fail(err)
		}
	}
	runCtx, cancel := s.WithCancel(ctx)
	done := h.Start(runCtx)
	_ = s.Sleep(ctx, tick/2+time.Duration(s.Rand().Int64N(int64(tick/4))))
	// The chain's first link: a 1 ns timeout now fires at the next pass.
	first := h.Open()
	at := s.Elapsed() + time.Nanosecond
	if err := h.SetActiveTimeout(first, time.Nanosecond); err != nil {
		return out, err
	}
	want[first.ID()] = armed{deadline: at, how: "1 ns timeout"}
	_ = s.Sleep(ctx, time.Duration(rounds+4)*tick)
	cancel()
	_ = done.Wait(ctx)
	if failure != nil {
		return out, failure
	}
	if out.rounds < rounds {
		return out, fmt.Errorf("TW-2: the chain stopped after %d of %d rounds: a 1 ns timeout did not fire within a tick", out.rounds, rounds)
	}
	if out.smp.Wrong > 0 {
		return out, fmt.Errorf("TW-2: %s", out.smp.Witness)
	}
	return out, nil
}

func since(t time.Time) time.Duration { return t.Sub(sim.Epoch) }

// failedText adds the failed seeds to a measured text.
func failedText(o claims.Outcome) string {
	if o.Failed == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of %d seeds failed (%s)", o.Failed, o.Seeds, o.FirstFailure)
}
