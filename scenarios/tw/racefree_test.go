package tw

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims/racefree"
)

// TestTW2_RealGoroutinesRaceFree runs one net thread's handler on real
// goroutines (rt.Real). Its cop task passes every millisecond over a ring
// of 16 buckets with a budget of 8, while workers open connections, arm
// them, keep some active and let others time out, and close them. From
// outside, through onTimeout, a connection armed for an hour and kept
// active is never timed out (never before its deadline). One armed for a
// millisecond and left idle is timed out, once, within a wall-clock limit
// (once its deadline has passed). Once everything is closed the thread
// holds no connection and the wheel no element (TW-2). An
// inspector reads the thread through Do all along, and finds the wheel
// holding every live deadline no later than the real one (TW-1).
//
// Under the race detector (make race, and the audit's Race mutants) it is
// TW-2's check for what the simulator cannot see. The simulator runs one
// task at a time, so a lock left out where no scheduling point lies inside
// (the handler's Close, SetActiveTimeout, Do) changes nothing a simulated
// check observes, while real goroutines race with the pass on the
// connection and the wheel. An hour's deadline lies beyond the 16 ms ring,
// so passes revisit the active connections once per ring (TW-5). A worker
// sleeps between its activities, and passes come between them even with
// one processor (GOMAXPROCS=1, where the audit runs Race mutants).
func TestTW2_RealGoroutinesRaceFree(t *testing.T) {
	const workers, rounds, activities = 4, 40, 3
	const long, short = time.Hour, time.Millisecond
	const timeoutLimit = 20 * time.Second // wall clock, for a 1 ms deadline on a 1 ms tick
	r := racefree.Preempting(rt.Real())   // yields inside every lock it makes, as the simulator does
	cfg := inactivitycop.DefaultConfig()
	cfg.Tick, cfg.Buckets, cfg.Budget, cfg.Continuation = time.Millisecond, 16, 8, 100*time.Microsecond

	// What onTimeout saw, from the cop task and from openings; read by
	// the workers and, after the run, by the check.
	seenMu := r.NewMutex("racefree.seen")
	seen := map[*inactivitycop.Conn]int{}
	var wrongKind []inactivitycop.Kind
	h, err := inactivitycop.NewHandler(r, "racefree", cfg, func(to inactivitycop.Timeout) {
		seenMu.Lock()
		seen[to.Conn]++
		if to.Kind != inactivitycop.Inactivity {
			wrongKind = append(wrongKind, to.Kind)
		}
		seenMu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	timeouts := func(c *inactivitycop.Conn) int {
		seenMu.Lock()
		defer seenMu.Unlock()
		return seen[c]
	}
	ctx, stop := context.WithCancel(context.Background())
	copDone := h.Start(ctx)

	kept := make([][]*inactivitycop.Conn, workers)
	idle := make([][]*inactivitycop.Conn, workers)
	worker := func(w int) error {
		for i := range rounds {
			active, quiet := h.Open(), h.Open()
			kept[w], idle[w] = append(kept[w], active), append(idle[w], quiet)
			if err := h.SetInactivityTimeout(active, long); err != nil {
				return fmt.Errorf("arm for %v: %w", long, err)
			}
			if err := h.SetActiveTimeout(active, 2*long); err != nil {
				return fmt.Errorf("arm the active timeout for %v: %w", 2*long, err)
			}
			if err := h.SetInactivityTimeout(quiet, short); err != nil {
				return fmt.Errorf("arm for %v: %w", short, err)
			}
			for a := range activities {
				if err := r.Sleep(ctx, time.Duration(500+(w*rounds+i+a)%1000)*time.Microsecond); err != nil {
					return err
				}
				h.NetActivity(active)
				// Re-armed after each activity, as a service extends a
				// connection's life: the sleep that follows is a window in
				// which only the handler's lock orders the write with the
				// inspector's and the passes' reads.
				if err := h.SetActiveTimeout(active, 2*long); err != nil {
					return fmt.Errorf("re-arm the active timeout for %v: %w", 2*long, err)
				}
			}
			for start := r.Now(); timeouts(quiet) == 0; {
				if r.Now().Sub(start) > timeoutLimit {
					return fmt.Errorf("TW-2 on real goroutines: worker %d round %d: a connection idle past its %v deadline was not timed out within %v of wall-clock time", w, i, short, timeoutLimit)
				}
				r.Yield()
			}
			h.Close(quiet) // closing is the handler's business (NewHandler)
			h.Close(active)
			r.Yield()
		}
		return nil
	}
	// The inspector reads the thread as a debugging endpoint would (Do),
	// and checks TW-1 on every connection it finds open: the wheel holds a
	// live deadline, and no later than the real one.
	inspections, seenOpen := 0, 0
	inspector := func() error { // one reading a round, in the background
		var err error
		h.Do(func(cop *inactivitycop.Cop, now time.Time) {
			for _, c := range cop.Conns() {
				seenOpen++
				real := c.Deadline()
				at, held := c.WheelDeadline()
				switch {
				case !real.IsZero() && !held:
					err = fmt.Errorf("TW-1 on real goroutines: conn %d has a live deadline %v away that the wheel does not hold", c.ID(), real.Sub(now))
				case !real.IsZero() && at.After(real):
					err = fmt.Errorf("TW-1 on real goroutines: conn %d: the wheel holds %v, later than the real deadline %v", c.ID(), at.Sub(now), real.Sub(now))
				}
			}
		})
		if err != nil {
			return err
		}
		inspections++
		return r.Sleep(ctx, 500*time.Microsecond)
	}
	racefree.Concurrently(t, r, append(racefree.Workers("worker", workers, worker), racefree.Goroutine{Name: "inspector", Run: inspector, Background: true})...)
	stop()
	if err := copDone.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	seenMu.Lock()
	defer seenMu.Unlock()
	early, twice := 0, 0
	for w := range workers {
		for i, c := range kept[w] {
			if n := seen[c]; n > 0 {
				early++
				if early == 1 {
					t.Errorf("TW-2 on real goroutines: worker %d round %d: a connection armed for %v and active every millisecond or two was timed out %d time(s)", w, i, long, n)
				}
			}
		}
		for i, c := range idle[w] {
			if n := seen[c]; n > 1 {
				twice++
				if twice == 1 {
					t.Errorf("TW-2 on real goroutines: worker %d round %d: an idle connection was timed out %d times", w, i, n)
				}
			}
		}
	}
	if len(wrongKind) > 0 {
		t.Errorf("TW-2 on real goroutines: %d timeouts of another kind than inactivity (first %v): no connection was evicted or armed otherwise", len(wrongKind), wrongKind[0])
	}
	var left, inWheel int
	h.Do(func(cop *inactivitycop.Cop, _ time.Time) { left, inWheel = cop.Len(), cop.Wheel().Len() })
	if left != 0 || inWheel != 0 {
		t.Errorf("TW-2 on real goroutines: every connection closed, yet the thread holds %d and the wheel %d", left, inWheel)
	}
	passes := h.Metrics().Passes.Value()
	t.Logf("TW-2 on real goroutines: %d connections kept active, %d left idle, %d passes; %d active ones timed out, %d idle ones timed out more than once; %d inspections found %d open connections, each with the wheel no later than its deadline (TW-1)",
		workers*rounds, workers*rounds, passes, early, twice, inspections, seenOpen)
}
