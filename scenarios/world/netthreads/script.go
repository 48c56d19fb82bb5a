package netthreads

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/impl/timerwheel"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/scenarios/claims/series"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
)

// ScriptConn is one scripted connection: the thread it lives on and its
// operations in time order. It is opened at its first operation's instant.
type ScriptConn struct {
	Thread int
	Ops    []checks.CopOp
}

// ThreadResult is what one thread of a scripted run did.
type ThreadResult struct {
	// Fired are the wheel cop's timeouts in callback order, each at the
	// instant its callback ran; Conn is the script's connection index + 1.
	Fired []checks.TimeoutEvent
	// Passes, Visited, Fired, Lookups and Exhausted are the cop's metrics
	// at the end; Totals the wheel's.
	Passes, Visited, FiredMetric, Lookups, Exhausted int64
	Totals                                           timerwheel.Totals
	// RefPasses and RefLookups are the full-scan reference's over the same
	// passes (every tick from 0 to the end).
	RefPasses, RefLookups int64
	// FiredAt counts the timeouts fired, by callback instant.
	FiredAt map[time.Duration]int
	// Probes are the metrics at the probe instants, in order.
	Probes []Probe
	// Metrics is the cop's registry snapshot at the end, under the names
	// it registered its counters with.
	Metrics map[string]int64
	// Applied is the script as it ran, the same slice in every thread's
	// result: every connection (by script index) with the operations
	// applied to it, in order, less the ones a shrinker dropped
	// (sim.Keep). A check predicts from it, not from the script it wrote:
	// a prediction that expects a dropped operation fails on any code, and
	// such a failure is the edit's, not the code's.
	Applied []ScriptConn
}

// Probe is a thread's metrics at one instant of a scripted run.
type Probe struct {
	At                                       time.Duration
	Passes, Visited, Fired, Lookups, Buckets int64
	RefLookups                               int64
}

// Script is a scripted run: connections with operations at fixed instants
// on Threads Handlers configured by Cop, from tick 0 until End (off the
// grid). All operations of one instant on one thread run under one lock
// hold, through the Cop's API, and are mirrored into a full-scan reference;
// the cop task is the Handler's own Run. Operations must lie off the tick
// grid and outside the budget continuations of the pass before. The
// queue (Cop.MaxConns) must hold every scripted connection of a thread.
type Script struct {
	Cop     inactivitycop.Config
	Threads int
	Conns   []ScriptConn
	End     time.Duration
	// Probes are instants (off the grid) at which each thread's metrics
	// are recorded; OnProbe, if set, may end the run early with an error.
	Probes  []time.Duration
	OnProbe func(thread int, p Probe) error
	// Inspect, if set, runs at each probe instant with the thread's cop,
	// under its lock, the cops' connections by script index (every
	// thread's; nil before it opened) and the script applied so far (as
	// ThreadResult.Applied): an inspection of the state from outside the
	// cop's own counters. An error ends the run.
	Inspect func(thread int, at time.Duration, cop *inactivitycop.Cop, conns []*inactivitycop.Conn, applied []ScriptConn) error
}

// Run runs the script under s and returns each thread's results.
func (sc Script) Run(s *sim.Sim) ([]ThreadResult, error) {
	cop, threads, conns, end := sc.Cop, sc.Threads, sc.Conns, sc.End
	if threads < 1 {
		return nil, fmt.Errorf("netthreads: a script needs at least one thread")
	}
	if end%cop.Tick == 0 {
		return nil, fmt.Errorf("netthreads: a script must end off the tick grid, got %v", end)
	}
	type step struct {
		at   time.Duration
		conn int
		op   checks.CopOp
	}
	total := len(sc.Probes)
	for _, c := range conns {
		total += len(c.Ops)
	}
	// Sized up front: TW-3's 200,000 operations grown by doubling were a
	// third of its run (a shrink re-runs it tens of times).
	steps := make([]step, 0, total)
	for i, c := range conns {
		if c.Thread < 0 || c.Thread >= threads || len(c.Ops) == 0 {
			return nil, fmt.Errorf("netthreads: script connection %d: bad thread %d or no operation", i, c.Thread)
		}
		for _, op := range c.Ops {
			if op.At <= 0 || op.At%cop.Tick == 0 || op.At >= end {
				return nil, fmt.Errorf("netthreads: script connection %d: %v at %v must lie in (0, %v) off the tick grid", i, op.Kind, op.At, end)
			}
			steps = append(steps, step{op.At, i, op})
		}
	}
	for _, p := range sc.Probes {
		if p <= 0 || p%cop.Tick == 0 || p >= end {
			return nil, fmt.Errorf("netthreads: probe at %v must lie in (0, %v) off the tick grid", p, end)
		}
		steps = append(steps, step{at: p, conn: -1})
	}
	// Stably by time, then connection: sorted as small keys, with their
	// place before sorting as the last key, and gathered after. With
	// 100,000 connections (TW-3), Go's stable sort moving the steps
	// themselves was a tenth of the check's time.
	type stepKey struct {
		at  time.Duration
		tie uint64 // conn+1 (a probe's conn is -1) in the high half, seq in the low
	}
	keys := make([]stepKey, len(steps))
	for i, st := range steps {
		keys[i] = stepKey{st.at, uint64(st.conn+1)<<32 | uint64(i)}
	}
	slices.SortFunc(keys, func(a, b stepKey) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.tie, b.tie)
	})
	sorted := make([]step, len(steps))
	for i, k := range keys {
		sorted[i] = steps[uint32(k.tie)]
	}
	steps = sorted

	res := make([]ThreadResult, threads)
	applied := make([]ScriptConn, len(conns))
	appliedOps := make([]checks.CopOp, 0, total) // one array, each connection's window of it
	for i, c := range conns {
		applied[i].Thread = c.Thread
		applied[i].Ops = appliedOps[len(appliedOps) : len(appliedOps) : len(appliedOps)+len(c.Ops)]
		appliedOps = appliedOps[:len(appliedOps)+len(c.Ops)]
	}
	hs := make([]*inactivitycop.Handler, threads)
	refs := make([]*model.FullScan, threads)
	wc := make([]*inactivitycop.Conn, len(conns))
	rc := make([]*model.FullScanConn, len(conns))
	ids := make([][]int, threads) // script index by the cop's ID-1
	next := make([]time.Duration, threads)
	for t := range threads {
		h, err := inactivitycop.NewHandler(s, fmt.Sprintf("net-%d", t), cop, func(to inactivitycop.Timeout) {
			r := &res[t]
			at := s.Elapsed()
			e := event(uint64(ids[t][to.Conn.ID()-1]+1), to.Kind, to.Deadline, epoch.Add(at))
			r.Fired = append(r.Fired, e)
			r.FiredAt[at]++
		})
		if err != nil {
			return nil, err
		}
		hs[t], refs[t] = h, model.NewFullScan()
		res[t].FiredAt = map[time.Duration]int{}
	}
	// flush runs thread t's reference passes up to instant u.
	flush := func(t int, u time.Duration) {
		for ; next[t] <= u; next[t] += cop.Tick {
			p := refs[t].Pass(epoch.Add(next[t]))
			res[t].RefPasses++
			res[t].RefLookups += int64(p.Lookups)
		}
	}
	ctx, cancel := s.WithCancel(context.Background())
	done := make([]rt.Event, threads)
	for t := range threads {
		done[t] = hs[t].Start(ctx)
	}
	var opErr error
	// mine[t] are the steps of one instant that thread t applies, in their
	// sorted order: the probes and its own connections' operations. Handed
	// out once per instant rather than scanned by every thread: TW-3's
	// first instant opens 100,000 connections, which each of up to four
	// threads went through to find its own.
	mine := make([][]int, threads)
	for k := 0; k < len(steps) && opErr == nil; {
		at := steps[k].at
		if d := at - s.Elapsed(); d > 0 {
			_ = s.Sleep(context.Background(), d)
		}
		j := k
		for j < len(steps) && steps[j].at == at {
			j++
		}
		for t := range mine {
			mine[t] = mine[t][:0]
		}
		for i := k; i < j; i++ {
			if c := steps[i].conn; c >= 0 {
				mine[conns[c].Thread] = append(mine[conns[c].Thread], i)
				continue
			}
			for t := range mine {
				mine[t] = append(mine[t], i)
			}
		}
		for t := range threads {
			flush(t, at)
			hs[t].Do(func(c *inactivitycop.Cop, now time.Time) {
				for _, i := range mine[t] {
					st := steps[i]
					if st.conn < 0 {
						m := c.Metrics()
						p := Probe{At: at, Passes: m.Passes.Value(), Visited: m.Visited.Value(),
							Fired: m.Fired.Value(), Lookups: m.Lookups.Value(), Buckets: c.Wheel().Totals().Buckets, RefLookups: res[t].RefLookups}
						res[t].Probes = append(res[t].Probes, p)
						if sc.OnProbe != nil && opErr == nil {
							opErr = sc.OnProbe(t, p)
						}
						if sc.Inspect != nil && opErr == nil {
							opErr = sc.Inspect(t, at, c, wc, applied)
						}
						continue
					}
					// A scripted operation is one a shrinker may drop.
					if !s.Keep(sim.KeepOperation) {
						continue
					}
					op := record.NoEvent
					if s.Recording() {
						op = s.OpBegin("net-%d script conn %d: %v %v", t, st.conn, st.op.Kind, st.op.D)
					} else {
						s.OpBegin("")
					}
					applied[st.conn].Ops = append(applied[st.conn].Ops, st.op)
					err := applyOp(c, refs[t], &wc[st.conn], &rc[st.conn], st.op, now)
					if op != record.NoEvent {
						if err != nil {
							s.OpEnd(op, "error: %v", err)
						} else {
							s.OpEnd(op, "ok")
						}
					}
					if err != nil && opErr == nil {
						opErr = fmt.Errorf("connection %d: %v: %w", st.conn, st.op.Kind, err)
					}
					if wc[st.conn] != nil && int(wc[st.conn].ID()) > len(ids[t]) {
						ids[t] = append(ids[t], st.conn)
					}
				}
			})
		}
		k = j
	}
	if d := end - s.Elapsed(); d > 0 && opErr == nil {
		_ = s.Sleep(context.Background(), d)
	}
	cancel()
	for t := range threads {
		_ = done[t].Wait(context.Background())
		flush(t, s.Elapsed())
		m := hs[t].Metrics()
		r := &res[t]
		r.Passes, r.Visited, r.FiredMetric, r.Lookups, r.Exhausted = m.Passes.Value(), m.Visited.Value(), m.Fired.Value(), m.Lookups.Value(), m.BudgetExhausted.Value()
		hs[t].Do(func(c *inactivitycop.Cop, _ time.Time) { r.Totals = c.Wheel().Totals() })
		var reg stats.Registry
		m.Register(&reg)
		metrics, err := series.Scrape(&reg, "inactivity_cop") // what a scraper reads (record.go)
		if err != nil && opErr == nil {
			opErr = fmt.Errorf("thread %d: %w", t, err)
		}
		r.Metrics = metrics
		r.Applied = applied
	}
	return res, opErr
}

// applyOp does one scripted operation on the cop and its reference; the
// connection is opened on both by its first operation.
func applyOp(c *inactivitycop.Cop, ref *model.FullScan, w **inactivitycop.Conn, r **model.FullScanConn, op checks.CopOp, now time.Time) error {
	if *w == nil {
		var evicted *inactivitycop.Timeout
		*w, evicted = c.Open(now)
		*r, _ = ref.Open(now)
		if evicted != nil {
			return fmt.Errorf("the queue of %d connections is full: a script's connections must fit", c.Config().MaxConns)
		}
	}
	switch op.Kind {
	case checks.OpSetInactivity:
		_ = ref.SetInactivityTimeout(*r, now, op.D)
		return c.SetInactivityTimeout(*w, now, op.D)
	case checks.OpSetActive:
		_ = ref.SetActiveTimeout(*r, now, op.D)
		return c.SetActiveTimeout(*w, now, op.D)
	case checks.OpActivity:
		c.NetActivity(*w, now)
		ref.NetActivity(*r, now)
	case checks.OpClose:
		c.Close(*w)
		ref.Close(*r)
	default:
		return fmt.Errorf("unknown operation %v", op.Kind)
	}
	return nil
}
