package netsim

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
)

// Stats are the figures a run measured, for the claim records.
type Stats struct {
	Opened, Ops, Activity int
	// ConnChecks counts TW-1/TW-6 checks of one connection; FullChecks the
	// checks of a whole thread.
	ConnChecks, FullChecks int
	// MaxEarly is the largest amount by which the wheel held a deadline
	// earlier than the real one (TW-1 allows it), with its witness.
	MaxEarly        time.Duration
	MaxEarlyWitness string
	// Timeouts is the number fired by the wheel cops and matched with the
	// reference; Aligned of them had a deadline exactly on a tick, Long
	// a timeout longer than the ring, Paused were fired by a catch-up.
	Timeouts, Aligned, Long, Paused int
	// MaxLag is the largest delay of a wheel timeout after the reference's
	// pass (budget continuations, TW-4); MaxLate the largest delay after
	// the deadline at a pass on the tick grid (at most a tick, TW-2);
	// MinMargin the smallest time from deadline to firing (> 0: never
	// early).
	MaxLag, MaxLate, MinMargin          time.Duration
	LagWitness, LateWitness             string
	Passes, RefPasses, Exhausted        int64
	Visited, Rearmed, RefLookups        int64
	AuditedPasses, AuditLost, AuditLate int64
}

// Stats returns the figures measured so far (complete once Run returned).
func (w *World) Stats() Stats { return w.stats }

// finish runs the end-of-run checks on every thread.
func (w *World) finish() {
	for _, th := range w.Threads {
		th.flush(w.now())
		th.compare()
		th.checkDrained()
		th.checkCounters()
	}
}

func timeoutKey(a, b Timeout) int {
	return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Deadline, b.Deadline))
}

// compare is TW-2's differential: the wheel cop fired exactly the timeouts
// the full scan fired (same connection, kind and deadline), never before
// the deadline, and at the reference's pass or within its budget
// continuations (TW-4): at most ceil(2*open/budget) continuations later.
func (th *Thread) compare() {
	w := th.w
	wheel, ref := slices.Clone(th.Fired), slices.Clone(th.RefFired)
	slices.SortStableFunc(wheel, timeoutKey)
	slices.SortStableFunc(ref, timeoutKey)
	tick, cont, budget := w.cfg.Plan.Tick, th.Cfg.Cop.Continuation, th.Cfg.Cop.Budget
	i, j := 0, 0
	for i < len(wheel) || j < len(ref) {
		var c int
		switch {
		case i == len(wheel):
			c = 1
		case j == len(ref):
			c = -1
		default:
			c = timeoutKey(wheel[i], ref[j])
		}
		switch {
		case c < 0:
			w.violate("TW-2", "thread %d: the wheel cop fired %v; the full scan never fired it", th.Index, wheel[i])
			i++
			continue
		case c > 0:
			w.violate("TW-2", "thread %d: the full scan fired %v at its pass %v; the wheel cop never did", th.Index, ref[j], ref[j].At)
			j++
			continue
		}
		got, want := wheel[i], ref[j]
		i, j = i+1, j+1
		lag := got.At - want.At
		conts := (2*want.Open + budget - 1) / budget
		switch {
		case lag < 0:
			w.violate("TW-2", "thread %d: %v, before the full scan's pass at %v", th.Index, got, want.At)
		case lag > time.Duration(conts)*cont:
			w.violate("TW-2", "thread %d: %v, %v after the full scan's pass at %v (allowed: one tick plus %d continuations of %v)", th.Index, got, lag, want.At, conts, cont)
			w.violate("TW-4", "thread %d: %v, %v after the full scan's pass at %v: more than %d budget continuations of %v", th.Index, got, lag, want.At, conts, cont)
		}
		st := &w.stats
		st.Timeouts++
		margin := got.At - got.Deadline
		if st.Timeouts == 1 || margin < st.MinMargin {
			st.MinMargin = margin
		}
		if lag > st.MaxLag {
			st.MaxLag = lag
			st.LagWitness = fmt.Sprintf("thread %d (budget %d): %v, %v after the pass at %v with %d connections open", th.Index, budget, got, lag, want.At, want.Open)
		}
		paused := want.At%tick != 0 || want.At-want.Deadline > tick
		if !paused && margin > st.MaxLate {
			st.MaxLate = margin
			st.LateWitness = fmt.Sprintf("thread %d: %v", th.Index, got)
		}
		if paused {
			st.Paused++
		}
		if got.Deadline%tick == 0 {
			st.Aligned++
		}
		if int(got.ID) > len(th.info) {
			continue // not a connection of this thread: reported as unmatched already
		}
		info := th.info[got.ID-1]
		if (got.Kind == inactivitycop.Inactivity && info.longIdle) || (got.Kind == inactivitycop.Active && info.longActive) {
			st.Long++
		}
	}
}

// checkDrained: after the drain every deadline has passed, so no open
// connection of either cop may still be armed (TW-2: every connection is
// timed out once its deadline has passed).
func (th *Thread) checkDrained() {
	w := th.w
	th.H.Do(func(cop *inactivitycop.Cop, now time.Time) {
		for _, c := range cop.Conns() {
			if d := c.Deadline(); !d.IsZero() {
				w.violate("TW-2", "thread %d conn %d: still armed at %v after the drain, deadline %v", th.Index, c.ID(), since(now), since(d))
			}
		}
		if n := cop.Wheel().Len(); n != 0 {
			w.violate("TW-6", "thread %d: the wheel still holds %d elements after the drain", th.Index, n)
		}
	})
	for _, i := range th.open {
		if d := th.refs[i].Deadline(); !d.IsZero() {
			w.violate("harness", "thread %d conn %d: the reference is still armed after the drain, deadline %v", th.Index, i+1, since(d))
		}
	}
}

// checkCounters compares the cop's metrics with what the harness saw
// (TW-8) and with the audit's findings (TW-7).
func (th *Thread) checkCounters() {
	w := th.w
	m := th.H.Metrics()
	var tot struct{ visited, rearmed int64 }
	th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
		t := cop.Wheel().Totals()
		tot.visited, tot.rearmed = t.Visited, t.Rearmed
	})
	passes, exhausted, visited := m.Passes.Value(), m.BudgetExhausted.Value(), m.Visited.Value()
	if got := m.Fired.Value(); got != int64(len(th.Fired)) {
		w.violate("TW-8", "thread %d: inactivity_cop_fired is %d, the callback saw %d timeouts", th.Index, got, len(th.Fired))
	}
	if want := int64(th.RefPasses) + exhausted; passes != want {
		w.violate("TW-8", "thread %d: inactivity_cop_passes is %d; the harness counts %d passes on the tick grid and at restarts plus %d continuations (inactivity_cop_budget_exhausted)",
			th.Index, passes, th.RefPasses, exhausted)
	}
	if visited != tot.visited {
		w.violate("TW-8", "thread %d: inactivity_cop_visited is %d, the wheel re-read %d deadlines", th.Index, visited, tot.visited)
	}
	if l := m.Lookups.Value(); l != visited {
		w.violate("TW-8", "thread %d: inactivity_cop_lookups is %d, visited %d: one lookup per visited connection", th.Index, l, visited)
	}
	if pt, pm := m.PassTimeUS.Value(), m.PassMaxUS.Value(); pt != 0 || pm != 0 {
		w.violate("TW-8", "thread %d: pass_time_us %d and pass_max_us %d: under the simulator a pass takes no virtual time", th.Index, pt, pm)
	}
	// Continuation passes that fired something are visible to the harness
	// as callbacks off the reference's pass instants.
	refAt := map[time.Duration]bool{}
	for _, t := range th.RefFired {
		refAt[t.At] = true
	}
	var conts []time.Duration
	for _, t := range th.Fired {
		if !refAt[t.At] && (len(conts) == 0 || conts[len(conts)-1] != t.At) {
			conts = append(conts, t.At)
		}
	}
	if int64(len(conts)) > exhausted {
		w.violate("TW-8", "thread %d: the callbacks came from %d continuation passes, inactivity_cop_budget_exhausted is %d", th.Index, len(conts), exhausted)
	}
	if th.Cfg.Cop.Audit {
		lost, late := m.AuditLost.Value(), m.AuditLate.Value()
		if lost != 0 || late != 0 {
			w.violate("TW-7", "thread %d: the audit found %d lost and %d late connections over %d passes", th.Index, lost, late, passes)
		}
		w.stats.AuditedPasses += passes
		w.stats.AuditLost += lost
		w.stats.AuditLate += late
	}
	st := &w.stats
	st.Passes += passes
	st.RefPasses += int64(th.RefPasses)
	st.Exhausted += exhausted
	st.Visited += visited
	st.Rearmed += tot.rearmed
}
