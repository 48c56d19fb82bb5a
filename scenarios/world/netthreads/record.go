package netthreads

import (
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/impl/timerwheel"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
)

// The probes the world counts (sim.Sim.Probe): rare interleavings the TW
// checks require their seeds to reach.
const (
	// ProbeShortened: a setter left a connection with a deadline earlier
	// than the one the wheel held, so it had to re-arm (TW-1).
	ProbeShortened = "tw/setter-shortened-below-wheel"
	// ProbeShortenedInPass: the same from a timeout callback, during a cop
	// pass (its remaining continuations run after it).
	ProbeShortenedInPass = "tw/setter-shortened-during-pass"
	// ProbeShortenedBeforeContinuation: a callback shortened a deadline
	// and its pass then continued (a continuation fired after it).
	ProbeShortenedBeforeContinuation = "tw/setter-shortened-before-continuation"
	// ProbeActivityPastWheel: activity pushed a deadline later after the
	// wheel's deadline for it had passed: its bucket comes due at the next
	// pass, which must re-arm, not fire (TW-1).
	ProbeActivityPastWheel = "tw/activity-after-wheel-deadline"
	// ProbeJumpPastRing: a pause or clock jump longer than the ring.
	ProbeJumpPastRing = "tw/jump-longer-than-ring"
	// ProbeJumpOffGrid: a restart off the tick grid (a clock jump).
	ProbeJumpOffGrid = "tw/jump-off-grid"
	// ProbeJumpOnePastRing: a pause or clock jump that missed exactly one
	// tick more than the ring, the shortest the fast-forward must shorten
	// (TW-5): a catch-up that does not examines one bucket twice, ring+1
	// in all, which a pause well past the ring never shows.
	ProbeJumpOnePastRing = "tw/jump-one-tick-past-ring"
	// ProbeJumpExactlyRing: a pause or clock jump that missed exactly as
	// many ticks as the ring, the longest the catch-up must walk whole.
	ProbeJumpExactlyRing = "tw/jump-exactly-ring"
	// ProbeFewTicksOnGrid: a pause that missed two to four ticks and
	// restarted exactly where a tick begins. Its catch-up pass must take
	// in the tick that just began, a few past the cursor's: where the
	// arithmetic of which ticks have begun has its edges, which a pause
	// about a ring long never reaches.
	ProbeFewTicksOnGrid = "tw/few-ticks-pause-on-grid"
	// ProbeEvicted: a connection evicted from a full queue (TW-10).
	ProbeEvicted = "tw/evicted"
	// ProbeEvictedArmed: an evicted connection had a deadline armed: left
	// in the wheel, it would fire later.
	ProbeEvictedArmed = "tw/evicted-while-armed"
	// ProbeReportedAfterEviction: a pass's timeout of a connection was
	// reported after that connection's eviction was. The pass fired it
	// first, under the lock, and reports once it has released the lock; an
	// Open in between evicted the connection and reported at once. The
	// handler hears of a timeout of a connection it was told is gone, though
	// nothing fired after the eviction. TestHandlerRealEviction met it with
	// real goroutines under load; the swarm world, which opens off the pass
	// instants, never does, and TestTW10_EvictionDuringAPassDirected
	// reaches it on purpose.
	ProbeReportedAfterEviction = "tw/timeout-reported-after-eviction"
)

// Stats are the world's own counts of what it did.
type Stats struct {
	Opened, Ops, Activity, Evicted int
	// ConnChecks counts TW-1/TW-6 checks of one connection; FullChecks the
	// checks of a whole thread.
	ConnChecks, FullChecks int
	// MaxEarly is the largest amount by which the wheel held a deadline
	// earlier than the real one (TW-1 allows it), with its witness.
	MaxEarly        time.Duration
	MaxEarlyWitness string
	// Passes, Exhausted and Visited are the cops' counters summed; Rearmed
	// the wheels' re-arms; RefPasses and RefLookups the full scans'.
	Passes, RefPasses, Exhausted        int64
	Visited, Rearmed, RefLookups        int64
	AuditedPasses, AuditLost, AuditLate int64
}

// Stats returns the counts so far (complete once Run returned).
func (w *World) Stats() Stats { return w.stats }

// History returns what each thread recorded, for the checkers of package
// checks (complete once Run returned).
func (w *World) History() []checks.CopHistory {
	out := make([]checks.CopHistory, len(w.Threads))
	for i, th := range w.Threads {
		out[i] = th.hist
		out[i].Fired, out[i].Ref = th.Fired, th.RefFired
	}
	return out
}

// finish records the end of the run on every thread and runs the world's
// own last check: after the drain nothing is armed.
func (w *World) finish() {
	for _, th := range w.Threads {
		th.flush(w.now())
		th.checkDrained()
		th.record()
	}
}

// record takes the thread's counters, as registered, for its history.
func (th *Thread) record() {
	w := th.w
	m := th.H.Metrics()
	var reg stats.Registry
	m.Register(&reg)
	var tot timerwheel.Totals
	th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) { tot = cop.Wheel().Totals() })
	th.hist.Thread = th.Index
	th.hist.Budget, th.hist.Ring = th.Cfg.Cop.Budget, th.Cfg.Cop.Buckets
	th.hist.RefPasses = int64(th.RefPasses)
	// Read as a Prometheus server reads it, through the text exposition:
	// a counter the cop counts right but exports wrong is what TW-8 is
	// about too.
	metrics, err := series.Scrape(&reg, "inactivity_cop")
	if err != nil {
		w.violate("TW-8", "thread %d: %v", th.Index, err)
	}
	th.hist.Metrics = metrics
	th.hist.Wheel = checks.WheelCounts{Passes: tot.Passes, Visited: tot.Visited, Fired: tot.Fired,
		Rearmed: tot.Rearmed, Dropped: tot.Dropped, Exhausted: tot.Exhausted}
	th.hist.Audited = th.Cfg.Cop.Audit
	for _, p := range th.shortened {
		for _, f := range th.Fired {
			if d := f.At.Duration() - p; d > 0 && d < w.cfg.Plan.Quiet {
				w.s.Probe(ProbeShortenedBeforeContinuation)
				break
			}
		}
	}
	st := &w.stats
	st.Passes += m.Passes.Value()
	st.RefPasses += int64(th.RefPasses)
	st.Exhausted += m.BudgetExhausted.Value()
	st.Visited += m.Visited.Value()
	st.Rearmed += tot.Rearmed
	if th.Cfg.Cop.Audit {
		st.AuditedPasses += m.Passes.Value()
		st.AuditLost += m.AuditLost.Value()
		st.AuditLate += m.AuditLate.Value()
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
