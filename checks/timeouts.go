package checks

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/model"
)

// The timeout checkers of the timer-wheel inactivity cop (TW-2, TW-4, TW-5,
// TW-7, TW-8, TW-10): pure functions over what a net-thread world recorded
// (CopHistory), judged with limits the caller takes from the claims table.
// The world runs the threads, mirrors every operation into the full-scan
// reference (model.FullScan) and records; these functions decide.

// TimeoutEvent is one timeout a cop reported: a fired inactivity or active
// timeout, or an eviction from a full queue.
type TimeoutEvent struct {
	Conn     uint64
	Kind     model.TimeoutKind
	Deadline Instant // the deadline that passed; 0 for an eviction
	// At is when it was reported: for the wheel cop the instant its
	// callback ran (a pass instant, a continuation's, or the opening that
	// evicted it), for the reference its pass instant or opening.
	At Instant
	// Open is, for the reference, the open connections at its pass: the
	// wheel may need ceil(2*Open/Budget) continuations to fire what that
	// pass fired (each connection is visited at most twice by a catch-up).
	Open int
	// Long says the timeout that fired had been set longer than the ring
	// (TW-5's wraparound); recorded for the figures only.
	Long bool
}

func (e TimeoutEvent) String() string {
	if e.Kind == model.EvictionTimeout {
		return fmt.Sprintf("conn %d evicted at %v", e.Conn, e.At)
	}
	return fmt.Sprintf("conn %d %s deadline %v fired at %v", e.Conn, e.Kind, e.Deadline, e.At)
}

// CopHistory is one net thread's recorded run.
type CopHistory struct {
	Thread int
	// Budget is the thread's configured budget (connections a pass visits
	// before it yields); Ring its wheel's buckets.
	Budget, Ring int
	// Fired are the wheel cop's callbacks, in the order they ran; Ref the
	// full-scan reference's timeouts, in pass order.
	Fired, Ref []TimeoutEvent
	// RefPasses counts the reference's passes: every tick while the cop
	// ran, and every restart.
	RefPasses int64
	// Metrics is the thread's metrics registry snapshot at the end, under
	// the names the cop registered them with (stats.Registry.Snapshot).
	Metrics map[string]int64
	// Wheel is the wheel's own cumulative counts (timerwheel.Totals).
	Wheel WheelCounts
	// Audited says the thread ran with the opt-in audit (TW-7).
	Audited bool
	// CatchUps are the thread's first passes after each restart.
	CatchUps []CatchUp
}

// TimeoutLimits are the numbers the timeout checks compare with, from the
// claims table: the tick (TW-2: a timeout fires within one tick of its
// deadline) and the continuation spacing (TW-4: an exhausted pass continues
// this much later).
type TimeoutLimits struct {
	Tick, Continuation time.Duration
}

// TimeoutFigures are what CheckTimeouts measured.
type TimeoutFigures struct {
	// Matched counts the wheel's timeouts matched with the reference's;
	// Aligned of them had their deadline exactly on a tick, Long a timeout
	// longer than the ring, Paused were fired by a catch-up, Evicted were
	// evictions.
	Matched, Aligned, Long, Paused, Evicted int
	// Continued counts the reference passes whose timeouts the wheel
	// finished in a continuation (a callback after the pass instant).
	Continued int
	// MaxLag is the largest delay of a wheel timeout after the reference's
	// pass (budget continuations, TW-4). MaxLate is the largest delay after
	// its deadline of a pass on the tick grid, continuations left out (at
	// most a tick, TW-2). MinMargin is the smallest time from a deadline to
	// its firing (> 0: never early).
	MaxLag, MaxLate, MinMargin time.Duration
	LagWitness, LateWitness    string
}

// CheckTimeouts is TW-2's differential and the timeliness checks of TW-2,
// TW-4 and TW-10 for one thread. The wheel cop must report exactly the
// reference's timeouts and evictions (same connection, kind and deadline).
// Each timeout must come strictly after its deadline, at the reference's pass
// or in its budget continuations. Those land a whole number of continuation
// spacings after the pass, at most ceil(2*open/budget) of them. An eviction
// must come at the reference's instant, in the reference's order, once, and
// nothing of that connection after it. Violations are added to vs.
func CheckTimeouts(h CopHistory, lim TimeoutLimits, vs *Violations) TimeoutFigures {
	var f TimeoutFigures
	wheel, ref := slices.Clone(h.Fired), slices.Clone(h.Ref)
	slices.SortStableFunc(wheel, eventKey)
	slices.SortStableFunc(ref, eventKey)
	claimOf := func(e TimeoutEvent) string {
		if e.Kind == model.EvictionTimeout {
			return "TW-10"
		}
		return "TW-2"
	}
	continued := map[Instant]bool{}
	i, j := 0, 0
	for i < len(wheel) || j < len(ref) {
		var c int
		switch {
		case i == len(wheel):
			c = 1
		case j == len(ref):
			c = -1
		default:
			c = eventKey(wheel[i], ref[j])
		}
		switch {
		case c < 0:
			vs.Add(claimOf(wheel[i]), wheel[i].At, "thread %d: the wheel cop reported %v; the full scan never did", h.Thread, wheel[i])
			i++
			continue
		case c > 0:
			vs.Add(claimOf(ref[j]), ref[j].At, "thread %d: the full scan reported %v; the wheel cop never did", h.Thread, ref[j])
			j++
			continue
		}
		got, want := wheel[i], ref[j]
		i, j = i+1, j+1
		f.Matched++
		lag := (got.At - want.At).Duration()
		if got.Kind == model.EvictionTimeout {
			f.Evicted++
			if lag != 0 {
				vs.Add("TW-10", got.At, "thread %d: %v; the full scan evicted it at %v, when the opening that evicts it ran", h.Thread, got, want.At)
			}
			continue
		}
		conts := (2*want.Open + h.Budget - 1) / max(h.Budget, 1)
		switch {
		case got.At <= got.Deadline:
			vs.Add("TW-2", got.At, "thread %d: %v: not after its deadline", h.Thread, got)
		case lag < 0:
			vs.Add("TW-2", got.At, "thread %d: %v, before the full scan's pass at %v", h.Thread, got, want.At)
		case lag > time.Duration(conts)*lim.Continuation:
			vs.Add("TW-2", got.At, "thread %d: %v, %v after the full scan's pass at %v (allowed: one tick plus %d continuations of %v)", h.Thread, got, lag, want.At, conts, lim.Continuation)
			vs.Add("TW-4", got.At, "thread %d: %v, %v after the full scan's pass at %v: more than %d budget continuations of %v", h.Thread, got, lag, want.At, conts, lim.Continuation)
		case lim.Continuation > 0 && lag%lim.Continuation != 0:
			vs.Add("TW-4", got.At, "thread %d: %v, %v after the full scan's pass at %v: not a whole number of %v continuations", h.Thread, got, lag, want.At, lim.Continuation)
		}
		if lag > 0 {
			continued[want.At] = true
		}
		margin := (got.At - got.Deadline).Duration()
		if f.Matched == 1 || margin < f.MinMargin {
			f.MinMargin = margin
		}
		if lag > f.MaxLag {
			f.MaxLag = lag
			f.LagWitness = fmt.Sprintf("thread %d (budget %d): %v, %v after the pass at %v with %d connections open", h.Thread, h.Budget, got, lag, want.At, want.Open)
		}
		paused := lim.Tick > 0 && (want.At.Duration()%lim.Tick != 0 || (want.At-want.Deadline).Duration() > lim.Tick)
		late := margin - lag
		switch {
		case paused:
			f.Paused++
		case late > f.MaxLate:
			f.MaxLate = late
			f.LateWitness = fmt.Sprintf("thread %d: %v", h.Thread, got)
		}
		if lim.Tick > 0 && got.Deadline.Duration()%lim.Tick == 0 {
			f.Aligned++
		}
		if got.Long {
			f.Long++
		}
	}
	f.Continued = len(continued)
	checkEvictions(h, vs)
	return f
}

// checkEvictions is TW-10 in callback order: the evictions come in the
// reference's order, each connection is evicted at most once, and nothing
// is reported for a connection after its eviction.
func checkEvictions(h CopHistory, vs *Violations) {
	var got, want []uint64
	gone := map[uint64]Instant{}
	for _, e := range h.Fired {
		if at, ok := gone[e.Conn]; ok {
			vs.Add("TW-10", e.At, "thread %d: %v, after its eviction at %v: an evicted connection must leave the wheel and never fire again", h.Thread, e, at)
			continue
		}
		if e.Kind == model.EvictionTimeout {
			gone[e.Conn] = e.At
			got = append(got, e.Conn)
		}
	}
	for _, e := range h.Ref {
		if e.Kind == model.EvictionTimeout {
			want = append(want, e.Conn)
		}
	}
	if !slices.Equal(got, want) {
		k := 0
		for k < min(len(got), len(want)) && got[k] == want[k] {
			k++
		}
		vs.Add("TW-10", 0, "thread %d: the wheel cop evicted %d connections, the full scan %d; they part at eviction %d (wheel %v, full scan %v): the eviction order (least recently active first) differs",
			h.Thread, len(got), len(want), k+1, at(got, k), at(want, k))
	}
}

func at(ids []uint64, k int) any {
	if k < len(ids) {
		return ids[k]
	}
	return "none"
}

func eventKey(a, b TimeoutEvent) int {
	return cmp.Or(cmp.Compare(a.Conn, b.Conn), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Deadline, b.Deadline))
}

// CopMetricNames are the series CheckCopMetrics reads from a history's
// metrics snapshot. The caller takes the seed's names from the claims
// table; the other three are the project's own.
// WheelCounts are a wheel's cumulative counts: its passes, the deadlines
// it re-read, and what became of them.
type WheelCounts struct {
	Passes, Visited, Fired, Rearmed, Dropped, Exhausted int64
}

type CopMetricNames struct {
	// The seed's six (TW-8).
	Passes, Visited, Fired, PassTimeUS, PassMaxUS, BudgetExhausted string
	// The project's: per-connection lookups (TW-3), evictions (TW-10),
	// the audit's findings (TW-7).
	Lookups, Evicted, AuditLost, AuditLate string
}

// checkWheelCounts holds the wheel's own totals, a public surface of
// their own, to the same account as the cop's metrics: a pass per pass on
// the tick grid or at a restart plus one per continuation, an element
// fired per connection whose timeouts a callback reported at an instant,
// and each re-read deadline fired, re-armed or dropped.
func checkWheelCounts(h CopHistory, n CopMetricNames, firedConns, exhausted int64, okE bool, vs *Violations) {
	w := h.Wheel
	if okE && w.Passes != h.RefPasses+exhausted {
		vs.Add("TW-8", 0, "thread %d: the wheel counts %d passes; the harness counts %d passes on the tick grid and at restarts plus %d continuations (%s)",
			h.Thread, w.Passes, h.RefPasses, exhausted, n.BudgetExhausted)
	}
	if w.Fired != firedConns {
		vs.Add("TW-8", 0, "thread %d: the wheel counts %d fired, the callback saw timeouts of %d connections at their instants", h.Thread, w.Fired, firedConns)
	}
	if w.Fired+w.Rearmed+w.Dropped != w.Visited {
		vs.Add("TW-8", 0, "thread %d: the wheel counts %d visited but %d fired, %d re-armed and %d dropped", h.Thread, w.Visited, w.Fired, w.Rearmed, w.Dropped)
	}
	if okE && w.Exhausted != exhausted {
		vs.Add("TW-8", 0, "thread %d: the wheel counts %d exhausted passes, %s is %d", h.Thread, w.Exhausted, n.BudgetExhausted, exhausted)
	}
}

// CheckCopMetrics compares one thread's counters with what its history shows
// (TW-8, and TW-7's and TW-10's counters). Every name must be registered.
// fired must equal the timeout callbacks, and evicted the eviction callbacks.
// passes must equal the reference's passes (ticks and restarts) plus
// budget_exhausted. Every continuation seen from outside (a callback off the
// reference's pass instants) must be counted in budget_exhausted. visited,
// the deadlines the wheel re-read, must equal lookups. Pass times must be 0,
// since a pass takes no virtual time. With the audit on, it must have found
// nothing.
func CheckCopMetrics(h CopHistory, n CopMetricNames, vs *Violations) {
	get := func(claim, name string) (int64, bool) {
		if name == "" {
			return 0, false
		}
		v, ok := h.Metrics[name]
		if !ok {
			vs.Add(claim, 0, "thread %d: the cop registered no series %s", h.Thread, name)
		}
		return v, ok
	}
	var fired, evicted int64
	type connAt struct {
		conn uint64
		at   Instant
	}
	firedConns := map[connAt]bool{} // a wheel element fires both its timeouts at once
	refAt := map[Instant]bool{}
	for _, e := range h.Ref {
		refAt[e.At] = true
	}
	var conts []Instant
	for _, e := range h.Fired {
		if e.Kind == model.EvictionTimeout {
			evicted++
			continue
		}
		fired++
		firedConns[connAt{e.Conn, e.At}] = true
		if !refAt[e.At] && (len(conts) == 0 || conts[len(conts)-1] != e.At) {
			conts = append(conts, e.At)
		}
	}
	if v, ok := get("TW-8", n.Fired); ok && v != fired {
		vs.Add("TW-8", 0, "thread %d: %s is %d, the callback saw %d timeouts", h.Thread, n.Fired, v, fired)
	}
	exhausted, okE := get("TW-8", n.BudgetExhausted)
	if v, ok := get("TW-8", n.Passes); ok && okE && v != h.RefPasses+exhausted {
		vs.Add("TW-8", 0, "thread %d: %s is %d; the harness counts %d passes on the tick grid and at restarts plus %d continuations (%s)",
			h.Thread, n.Passes, v, h.RefPasses, exhausted, n.BudgetExhausted)
	}
	if okE && int64(len(conts)) > exhausted {
		vs.Add("TW-8", 0, "thread %d: the callbacks came from %d continuation passes, %s is %d", h.Thread, len(conts), n.BudgetExhausted, exhausted)
	}
	visited, okV := get("TW-8", n.Visited)
	if okV && visited != h.Wheel.Visited {
		vs.Add("TW-8", 0, "thread %d: %s is %d, the wheel re-read %d deadlines", h.Thread, n.Visited, visited, h.Wheel.Visited)
	}
	checkWheelCounts(h, n, int64(len(firedConns)), exhausted, okE, vs)
	if l, ok := get("TW-8", n.Lookups); ok && okV && l != visited {
		vs.Add("TW-8", 0, "thread %d: %s is %d, %s %d: one lookup per visited connection", h.Thread, n.Lookups, l, n.Visited, visited)
	}
	for _, name := range []string{n.PassTimeUS, n.PassMaxUS} {
		if v, ok := get("TW-8", name); ok && v != 0 {
			vs.Add("TW-8", 0, "thread %d: %s is %d: under the simulator a pass takes no virtual time", h.Thread, name, v)
		}
	}
	if v, ok := get("TW-10", n.Evicted); ok && v != evicted {
		vs.Add("TW-10", 0, "thread %d: %s is %d, the callback saw %d evictions", h.Thread, n.Evicted, v, evicted)
	}
	if h.Audited {
		lost, _ := get("TW-7", n.AuditLost)
		late, _ := get("TW-7", n.AuditLate)
		if lost != 0 || late != 0 {
			vs.Add("TW-7", 0, "thread %d: the audit found %d lost and %d late connections", h.Thread, lost, late)
		}
	}
}

// CatchUp is the first pass of a thread after a restart and its
// continuations, as the wheel counted them (TW-5).
type CatchUp struct {
	Thread     int
	PauseTicks int64 // ticks from the cursor at the stop to the restart's tick, inclusive
	Ring       int
	Examined   int64 // buckets examined: the wheel's bucket count, a bucket a continuation resumes counted once
	Passes     int64
	Visited    int64
	// Armed is the harness's count, from the reference, of the open
	// connections with a live deadline at the stop: what the wheel holds.
	Armed       int64
	OffGridJump bool
	At          Instant // the restart
}

// Check is TW-5's fast-forward check: a catch-up examines each missed
// tick's bucket once, but never more than the ring. A catch-up of one
// pass visits each connection the wheel holds at most once (once per ring),
// and every one of them when it examines the whole ring; what a callback
// re-arms during the pass waits for a later one. With continuations an
// element re-armed by one may wrap into a bucket the next still examines,
// so only the bucket count is exact then.
func (cu CatchUp) Check() error {
	if want := min(cu.PauseTicks, int64(cu.Ring)); cu.Examined != want {
		return fmt.Errorf("thread %d: the catch-up after a pause of %d ticks examined %d buckets over %d passes; with a ring of %d it must examine %d, each missed tick's once (fast-forward)",
			cu.Thread, cu.PauseTicks, cu.Examined, cu.Passes, cu.Ring, want)
	}
	if cu.Passes != 1 {
		return nil
	}
	if cu.Visited > cu.Armed {
		return fmt.Errorf("thread %d: the catch-up after a pause of %d ticks visited %d connections in one pass, more than the %d the wheel held: one was visited twice in a pass (once per ring)",
			cu.Thread, cu.PauseTicks, cu.Visited, cu.Armed)
	}
	if cu.PauseTicks >= int64(cu.Ring) && cu.Visited != cu.Armed {
		return fmt.Errorf("thread %d: the catch-up after a pause of %d ticks examined the whole ring of %d but visited %d of the %d connections the wheel held",
			cu.Thread, cu.PauseTicks, cu.Ring, cu.Visited, cu.Armed)
	}
	return nil
}

// FiredPass is the callbacks of one instant, in callback order: one pass
// (or continuation) seen from outside.
type FiredPass struct {
	At    Instant
	Conns []uint64
}

// GroupByInstant groups events by their instant, in order of first
// appearance: what each pass fired, as its callbacks showed it.
func GroupByInstant(events []TimeoutEvent) []FiredPass {
	var out []FiredPass
	for _, e := range events {
		if len(out) == 0 || out[len(out)-1].At != e.At {
			out = append(out, FiredPass{At: e.At})
		}
		last := &out[len(out)-1]
		last.Conns = append(last.Conns, e.Conn)
	}
	return out
}
