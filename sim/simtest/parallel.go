package simtest

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/windtunnel/windtunnel/sim"
)

// runAhead1 is runOnce for a seed run ahead of its report: abandon, once
// true, ends it early (its result is then discarded).
func (h *harness) runAhead1(seed uint64, abandon *atomic.Bool) (sim.Result, any, string) {
	cfg := h.config(seed)
	cfg.Abandon = abandon
	return h.runConfig(cfg)
}

// Seeds are independent: each runs on a simulator of its own, so the
// harness runs them on every core (-sim.parallel, default GOMAXPROCS) and
// reports them in plan order, one subtest each, exactly as a sequential run
// would: the same subtests, values, failures, corpus entries and stats. The
// subtest of seed i waits for seed i's run; a failing seed's artifacts are
// written by its subtest, on the test's goroutine. Once a seed has failed
// (without -sim.keepgoing) no later seed is started, and the ones already
// running are abandoned (sim.Config.Abandon: they stop within a few
// thousand steps instead of running to their end) and discarded.
//
// A body must then be safe to run on several goroutines at once: it builds
// its world from its *sim.Sim and shares nothing mutable with other seeds
// (what claims.Run's checks do). Options.Sequential opts out.

// ahead runs the plan's seeds ahead of their subtests.
type ahead struct {
	mu      sync.Mutex
	cond    *sync.Cond
	results []*outcome
	done    []bool
	next    int  // the next seed index to start
	halt    bool // a failure was reported: start nothing more
	active  bool
	paused  bool // pause ended the runs ahead
	// abandon[i] ends seed i's run early: set for the runs in flight after
	// a failing seed (their reports will never be made), and for every run
	// when the report stops (stop).
	abandon []atomic.Bool
	workers sync.WaitGroup
}

// parallelism is how many seeds run at once.
func (h *harness) parallelism() int {
	n := h.st.parallel
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if h.opts.Sequential || h.st.trace != "" || len(h.plan) < 2 {
		return 1
	}
	return min(n, len(h.plan))
}

// runAhead starts the workers; with parallelism 1 nothing runs ahead and
// every subtest runs its own seed.
func (h *harness) runAhead() *ahead {
	a := &ahead{results: make([]*outcome, len(h.plan)), done: make([]bool, len(h.plan)), abandon: make([]atomic.Bool, len(h.plan))}
	a.cond = sync.NewCond(&a.mu)
	n := h.parallelism()
	if n <= 1 {
		return a
	}
	a.active = true
	for range n {
		a.workers.Add(1)
		go func() {
			defer a.workers.Done()
			for {
				a.mu.Lock()
				if a.halt || a.next >= len(h.plan) {
					a.mu.Unlock()
					return
				}
				i := a.next
				a.next++
				a.mu.Unlock()
				res, value, failure := h.runAhead1(h.plan[i].seed, &a.abandon[i])
				o := &outcome{res: res, value: value, failure: failure}
				if failure == "" && h.st.twice(h.plan[i]) {
					again, _, _ := h.runAhead1(h.plan[i].seed, &a.abandon[i])
					o.again = &again
				}
				a.mu.Lock()
				a.results[i], a.done[i] = o, true
				if failure != "" && !h.st.keepGoing && !res.Abandoned {
					a.halt = true // later seeds are not reported: stop the ones running
					for j := i + 1; j < a.next; j++ {
						a.abandon[j].Store(true)
					}
				}
				a.cond.Broadcast()
				a.mu.Unlock()
			}
		}()
	}
	return a
}

// result waits for seed i's run (nil when nothing runs ahead, or when the
// runs ahead were paused before seed i's was finished or after it was
// abandoned: its subtest then runs it).
func (a *ahead) result(i int) *outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.active {
		if a.paused && a.done[i] && !a.results[i].res.Abandoned {
			return a.results[i]
		}
		return nil
	}
	for !a.done[i] {
		a.cond.Wait()
	}
	return a.results[i]
}

// pause stops the runs ahead and waits for them to end: a shrink's control
// runs (faultswitch) switch the fault under test off for the whole binary,
// which no other run may see. The finished runs are kept; every other seed
// is run by its own subtest from then on.
func (a *ahead) pause() {
	if !a.active {
		return
	}
	a.stop()
	a.mu.Lock()
	a.active, a.paused = false, true
	a.mu.Unlock()
}

// stop ends the workers and waits for them.
func (a *ahead) stop() {
	if !a.active {
		return
	}
	a.mu.Lock()
	a.halt = true
	for j := range a.next {
		a.abandon[j].Store(true)
	}
	a.mu.Unlock()
	a.workers.Wait()
}
