package model_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/model"
)

// twin runs the same operations on the timer-wheel cop (impl) and the
// full-scan reference (model) and checks that they agree (TW-1, TW-2, TW-4,
// TW-5). Connection i of one is connection i of the other.
type twin struct {
	cop   *inactivitycop.Cop
	ref   *model.FullScan
	conns []*inactivitycop.Conn
	refs  []*model.FullScanConn
	now   time.Time
	// grid is the last pass instant; passes run on origin + k*tick only.
	grid time.Time
	tick time.Duration
	// continuations counts the continuation passes the wheel needed;
	// evictions the connections both evicted from a full queue.
	continuations, evictions int
}

func newTwin(cfg inactivitycop.Config) (*twin, error) {
	cop, err := inactivitycop.NewCop(cfg, origin)
	if err != nil {
		return nil, err
	}
	return &twin{cop: cop, ref: model.NewFullScanQueue(cfg.MaxConns), now: origin, grid: origin, tick: cfg.Tick}, nil
}

// open opens a connection on both; with a full queue both must evict the
// same connection, reported at now (TW-10).
func (w *twin) open() error {
	c, ce := w.cop.Open(w.now)
	r, re := w.ref.Open(w.now)
	w.conns, w.refs = append(w.conns, c), append(w.refs, r)
	if c.ID() != r.ID() {
		return fmt.Errorf("ids diverge: %d vs %d", c.ID(), r.ID())
	}
	switch {
	case (ce == nil) != (re == nil):
		return fmt.Errorf("TW-10: opening conn %d: the wheel cop evicted %v, the full scan %v", c.ID(), ce, re)
	case ce == nil:
	case ce.Conn.ID() != re.ID || ce.Kind != inactivitycop.Evicted || re.Kind != model.EvictionTimeout || !ce.At.Equal(re.At):
		return fmt.Errorf("TW-10: opening conn %d: the wheel cop evicted conn %d (%v at %v), the full scan conn %d (%v at %v)",
			c.ID(), ce.Conn.ID(), ce.Kind, ce.At.Sub(origin), re.ID, re.Kind, re.At.Sub(origin))
	case !ce.Conn.Closed():
		return fmt.Errorf("TW-10: evicted conn %d is still open", ce.Conn.ID())
	default:
		w.evictions++
	}
	return nil
}

func (w *twin) setInactivity(i int, d time.Duration) error {
	e1, e2 := w.cop.SetInactivityTimeout(w.conns[i], w.now, d), w.ref.SetInactivityTimeout(w.refs[i], w.now, d)
	if (e1 == nil) != (e2 == nil) {
		return fmt.Errorf("SetInactivityTimeout errors differ: %v vs %v", e1, e2)
	}
	return nil
}

func (w *twin) setActive(i int, d time.Duration) error {
	e1, e2 := w.cop.SetActiveTimeout(w.conns[i], w.now, d), w.ref.SetActiveTimeout(w.refs[i], w.now, d)
	if (e1 == nil) != (e2 == nil) {
		return fmt.Errorf("SetActiveTimeout errors differ: %v vs %v", e1, e2)
	}
	return nil
}

func (w *twin) activity(i int) {
	w.cop.NetActivity(w.conns[i], w.now)
	w.ref.NetActivity(w.refs[i], w.now)
}

func (w *twin) close(i int) {
	w.cop.Close(w.conns[i])
	w.ref.Close(w.refs[i])
}

type firing struct {
	id       uint64
	kind     string
	deadline time.Duration
}

func (f firing) String() string { return fmt.Sprintf("conn %d %s@%v", f.id, f.kind, f.deadline) }

func sortFirings(fs []firing) {
	slices.SortFunc(fs, func(a, b firing) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.kind, b.kind))
	})
}

// pass advances to the k-th next grid instant. k > 1 means the cop was
// stalled and skipped passes, possibly for longer than the ring. It runs the
// reference's pass there and the wheel's pass with its 1 ms continuations,
// and compares what they fired.
func (w *twin) pass(k int) error {
	w.grid = w.grid.Add(time.Duration(k) * w.tick)
	w.now = w.grid
	var want []firing
	for _, x := range w.ref.Pass(w.grid).Timeouts {
		want = append(want, firing{x.ID, x.Kind.String(), x.Deadline.Sub(origin)})
	}
	var got []firing
	// A chain visits a connection at most once per bucket it examines. A
	// deadline beyond the ring wraps into a bucket that may come up again in
	// the same catch-up: re-armed at tick t+ring, it sits in the bucket of
	// tick t. So that bound, not one visit per connection, is what makes a
	// runaway chain an error.
	maxPasses := len(w.conns)*(w.cop.Config().Buckets+1) + 1
	for c := 0; ; c++ {
		if c > maxPasses {
			return fmt.Errorf("more than %d continuations", maxPasses)
		}
		r := w.cop.Pass(w.now)
		for _, x := range r.Timeouts {
			if !x.Deadline.Before(x.At) {
				return fmt.Errorf("TW-2: conn %d fired at %v, before its deadline %v passed", x.Conn.ID(), x.At.Sub(origin), x.Deadline.Sub(origin))
			}
			got = append(got, firing{x.Conn.ID(), x.Kind.String(), x.Deadline.Sub(origin)})
		}
		if r.Buckets > w.cop.Config().Buckets+1 {
			return fmt.Errorf("TW-5: a pass examined %d buckets", r.Buckets)
		}
		if !r.Exhausted {
			break
		}
		w.continuations++
		w.now = w.now.Add(w.cop.Config().Continuation)
	}
	sortFirings(want)
	sortFirings(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("TW-2: at %v the full scan fired %v, the wheel %v", w.grid.Sub(origin), want, got)
	}
	return nil
}

// check asserts, after every step, that both cops hold the same deadlines
// and that the wheel holds every live deadline no later than the real one
// (TW-1), which is also what the audit reports (TW-7).
func (w *twin) check() error {
	for i, c := range w.conns {
		r := w.refs[i]
		if c.Closed() != r.Closed() || !c.Deadline().Equal(r.Deadline()) {
			return fmt.Errorf("conn %d: wheel cop deadline %v closed %v, full scan %v closed %v",
				c.ID(), c.Deadline().Sub(origin), c.Closed(), r.Deadline().Sub(origin), r.Closed())
		}
		real := c.Deadline()
		if _, held := c.WheelDeadline(); c.Closed() && held {
			return fmt.Errorf("TW-10: closed conn %d is still in the wheel", c.ID())
		}
		if c.Closed() || real.IsZero() {
			continue
		}
		at, held := c.WheelDeadline()
		if !held || at.After(real) {
			return fmt.Errorf("TW-1: conn %d real deadline %v, wheel holds %v (%v)", c.ID(), real.Sub(origin), at.Sub(origin), held)
		}
	}
	if a := w.cop.Audit(); len(a.Lost)+len(a.Late) > 0 {
		return fmt.Errorf("TW-7: audit found %d lost, %d late", len(a.Lost), len(a.Late))
	}
	return nil
}

// TW-5 regression (found by TestWheelCopMatchesFullScanWithBudget): on an
// 8-bucket ring, three 9 s deadlines wrap into the bucket of a 1.15 s one.
// A budget-1 catch-up over two ticks visits them there, re-arms two of them
// at 10.05 s into the bucket of tick 2, and meets them again when it reaches
// tick 2: six visits for four connections. The chain still ends, fires
// exactly what the full scan fires, and never early.
func TestWrappedDeadlinesRevisitedInOneChain(t *testing.T) {
	cfg := inactivitycop.DefaultConfig()
	cfg.Buckets, cfg.Budget = 8, 1
	w, err := newTwin(cfg)
	require.NoError(t, err)
	w.now = origin.Add(50 * time.Millisecond)
	require.NoError(t, w.open())
	for i := 1; i <= 3; i++ {
		require.NoError(t, w.open())
		require.NoError(t, w.setInactivity(i, 9*time.Second))
	}
	require.NoError(t, w.pass(1))
	w.now = w.grid.Add(50 * time.Millisecond)
	w.activity(2)
	w.activity(3)
	require.NoError(t, w.setInactivity(0, 100*time.Millisecond))
	before := w.continuations
	require.NoError(t, w.pass(2))
	assert.Equal(t, 5, w.continuations-before, "six visits at one per pass: five continuations")
	require.NoError(t, w.check())
}
