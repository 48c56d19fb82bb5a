package netsim

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
)

// Timeout is one timeout fired, by a thread's wheel cop or by its full-scan
// reference. Instants are virtual time since sim.Epoch.
type Timeout struct {
	ID       uint64
	Kind     inactivitycop.Kind
	Deadline time.Duration
	At       time.Duration // the pass instant (a continuation's for the wheel)
	Open     int           // reference only: open connections at the pass
}

func (t Timeout) String() string {
	return fmt.Sprintf("conn %d %s deadline %v fired at %v", t.ID, t.Kind, t.Deadline, t.At)
}

// connInfo is what the harness remembers about a connection's arming.
type connInfo struct {
	idle       time.Duration // the inactivity timeout last set
	longIdle   bool          // that timeout was longer than the ring (TW-5)
	longActive bool          // the active timeout last set was
}

// Thread is one net thread: a Handler on the simulator with its cop task,
// and a full-scan reference that every operation is mirrored into at the
// same instant (connection i of one is connection i of the other).
type Thread struct {
	w     *World
	Index int
	Cfg   ThreadConfig
	H     *inactivitycop.Handler
	Ref   *model.FullScan

	conns []*inactivitycop.Conn // by ID-1
	refs  []*model.FullScanConn
	info  []connInfo
	open  []int // indices of the open connections, in no particular order
	pos   []int // index in open, -1 once closed

	// Fired are the wheel's timeouts in callback order; RefFired the
	// reference's in pass order.
	Fired, RefFired []Timeout

	// The reference's pass schedule: every tick while the cop runs, and at
	// each restart.
	running   bool
	refNext   time.Duration
	RefPasses int

	cancel      context.CancelFunc
	done        rt.Event
	lastChecked time.Duration // the pass instant the callback last checked after
}

func newThread(w *World, i int, cfg ThreadConfig) (*Thread, error) {
	th := &Thread{w: w, Index: i, Cfg: cfg, Ref: model.NewFullScan(), lastChecked: -1}
	h, err := inactivitycop.NewHandler(w.s, fmt.Sprintf("net-%d", i), cfg.Cop, th.onTimeout)
	if err != nil {
		return nil, err
	}
	th.H = h
	return th, nil
}

// ring returns the thread's ring as a duration.
func (th *Thread) ring() time.Duration { return time.Duration(th.Cfg.Cop.Buckets) * th.Cfg.Cop.Tick }

// Metrics returns the thread's cop counters.
func (th *Thread) Metrics() *inactivitycop.Metrics { return th.H.Metrics() }

// Conn returns connection i of the wheel cop (ID i+1).
func (th *Thread) Conn(i int) *inactivitycop.Conn { return th.conns[i] }

// OpenConns returns the indices of the open connections.
func (th *Thread) OpenConns() []int { return append([]int(nil), th.open...) }

// start runs the cop task from now on; the reference passes now too.
func (th *Thread) start(ctx context.Context) {
	th.running = true
	th.refNext = th.w.now()
	ctx, th.cancel = th.w.s.WithCancel(ctx)
	th.done = th.H.Start(ctx)
}

// stop ends the cop task and waits for it; the reference stops passing.
func (th *Thread) stop() {
	th.flush(th.w.now())
	th.running = false
	th.cancel()
	_ = th.done.Wait(context.Background())
}

// flush runs the reference passes due up to t. The wheel has run them
// already: t is never a pass instant of the workload, and a callback's t
// follows its pass.
func (th *Thread) flush(t time.Duration) {
	for th.running && th.refNext <= t {
		p := th.refNext
		open := th.Ref.Len()
		res := th.Ref.Pass(th.w.at(p))
		for _, to := range res.Timeouts {
			kind := inactivitycop.Inactivity
			if to.Kind == model.ActiveTimeout {
				kind = inactivitycop.Active
			}
			th.RefFired = append(th.RefFired, Timeout{ID: to.ID, Kind: kind, Deadline: to.Deadline.Sub(epoch), At: p, Open: open})
		}
		th.RefPasses++
		th.w.stats.RefLookups += int64(res.Lookups)
		th.refNext = th.w.cfg.Plan.GridAfter(p)
	}
}

// sync is called right after an operation on the handler returned: the task
// has not yielded since the handler released its lock, so the cop is exactly
// as the operation left it. It brings the reference to the same instant.
func (th *Thread) sync(t0 time.Duration, op string) {
	if now := th.w.now(); now != t0 {
		th.w.violate("harness", "thread %d: %s started at %v and returned at %v: the mirror would be off", th.Index, op, t0, now)
	}
	th.flush(t0)
}

// openConn opens a connection on both cops and returns its index.
func (th *Thread) openConn() int {
	t0 := th.w.now()
	c := th.H.Open()
	th.sync(t0, "open")
	r := th.Ref.Open()
	if c.ID() != r.ID() {
		th.w.violate("harness", "thread %d: connection ids diverge: wheel %d, reference %d", th.Index, c.ID(), r.ID())
	}
	i := len(th.conns)
	th.conns, th.refs, th.info = append(th.conns, c), append(th.refs, r), append(th.info, connInfo{})
	th.pos = append(th.pos, len(th.open))
	th.open = append(th.open, i)
	th.w.stats.Opened++
	th.checkConn(i, "open", true)
	return i
}

// setInactivity arms (d > 0) or disarms connection i's inactivity timeout.
func (th *Thread) setInactivity(i int, d time.Duration) {
	t0 := th.w.now()
	err := th.H.SetInactivityTimeout(th.conns[i], d)
	th.sync(t0, "set-inactivity")
	rerr := th.Ref.SetInactivityTimeout(th.refs[i], th.w.at(t0), d)
	th.sameErr("SetInactivityTimeout", i, err, rerr)
	if err == nil {
		th.info[i].idle, th.info[i].longIdle = d, d > th.ring()
	}
	th.w.stats.Ops++
	th.checkConn(i, "set-inactivity", true)
}

// setActive arms (d > 0) or disarms connection i's active timeout.
func (th *Thread) setActive(i int, d time.Duration) {
	t0 := th.w.now()
	err := th.H.SetActiveTimeout(th.conns[i], d)
	th.sync(t0, "set-active")
	rerr := th.Ref.SetActiveTimeout(th.refs[i], th.w.at(t0), d)
	th.sameErr("SetActiveTimeout", i, err, rerr)
	if err == nil {
		th.info[i].longActive = d > th.ring()
	}
	th.w.stats.Ops++
	th.checkConn(i, "set-active", true)
}

// activity records network activity on connection i: the inactivity
// deadline moves later, the wheel is not touched (TW-1).
func (th *Thread) activity(i int) {
	t0 := th.w.now()
	th.H.NetActivity(th.conns[i])
	th.sync(t0, "activity")
	th.Ref.NetActivity(th.refs[i], th.w.at(t0))
	th.w.stats.Ops++
	th.w.stats.Activity++
	th.checkConn(i, "activity", true)
}

// closeConn closes connection i on both cops. compare is false inside a
// timeout callback, where the wheel may still owe continuations that the
// reference's pass has already done.
func (th *Thread) closeConn(i int, compare bool) {
	t0 := th.w.now()
	th.H.Close(th.conns[i])
	th.sync(t0, "close")
	th.Ref.Close(th.refs[i])
	if p := th.pos[i]; p >= 0 {
		last := th.open[len(th.open)-1]
		th.open[p], th.pos[last] = last, p
		th.open = th.open[:len(th.open)-1]
		th.pos[i] = -1
	}
	th.w.stats.Ops++
	th.checkConn(i, "close", compare)
}

func (th *Thread) sameErr(op string, i int, err, rerr error) {
	if (err == nil) != (rerr == nil) {
		th.w.violate("TW-2", "thread %d conn %d: %s: the wheel cop returned %v, the full scan %v", th.Index, i+1, op, err, rerr)
	}
}

// checkConn checks connection i right after an operation: the wheel holds
// its live deadline no later than the real one (TW-1), it is scheduled
// exactly when it has a live deadline (TW-6), and, when compare is set, its
// deadlines equal the reference's (TW-2).
func (th *Thread) checkConn(i int, op string, compare bool) {
	th.w.stats.ConnChecks++
	c, r := th.conns[i], th.refs[i]
	at, held := c.WheelDeadline()
	real := c.Deadline()
	switch {
	case c.Closed() && held:
		th.w.violate("TW-6", "thread %d conn %d: still in the wheel (at %v) after %s closed it", th.Index, c.ID(), at.Sub(epoch), op)
	case c.Closed():
	case real.IsZero() && held:
		th.w.violate("TW-6", "thread %d conn %d: no deadline but still in the wheel (at %v) after %s", th.Index, c.ID(), at.Sub(epoch), op)
	case !real.IsZero() && !held:
		th.w.violate("TW-1", "thread %d conn %d: live deadline %v that the wheel does not hold, after %s at %v", th.Index, c.ID(), real.Sub(epoch), op, th.w.now())
	case !real.IsZero() && at.After(real):
		th.w.violate("TW-1", "thread %d conn %d: the wheel holds %v, later than the real deadline %v, after %s at %v", th.Index, c.ID(), at.Sub(epoch), real.Sub(epoch), op, th.w.now())
	case !real.IsZero():
		if early := real.Sub(at); early > th.w.stats.MaxEarly {
			th.w.stats.MaxEarly = early
			th.w.stats.MaxEarlyWitness = fmt.Sprintf("thread %d conn %d at %v: real deadline %v, wheel %v (activity pushed it later; the wheel was not touched)", th.Index, c.ID(), th.w.now(), real.Sub(epoch), at.Sub(epoch))
		}
	}
	if compare && (!c.InactivityDeadline().Equal(r.InactivityDeadline()) || !c.ActiveDeadline().Equal(r.ActiveDeadline())) {
		th.w.violate("TW-2", "thread %d conn %d after %s at %v: wheel cop deadlines inactivity %v active %v, full scan %v and %v",
			th.Index, c.ID(), op, th.w.now(), since(c.InactivityDeadline()), since(c.ActiveDeadline()), since(r.InactivityDeadline()), since(r.ActiveDeadline()))
	}
}

// checkAll checks every connection and the wheel's size (TW-1, TW-6). It
// takes the handler's lock, so it sees the cop between passes and
// operations.
func (th *Thread) checkAll(why string) {
	th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
		th.w.stats.FullChecks++
		live := 0
		for i := range th.conns {
			th.checkConn(i, why, false)
			if !th.conns[i].Closed() && !th.conns[i].Deadline().IsZero() {
				live++
			}
		}
		if n := cop.Wheel().Len(); n != live {
			th.w.violate("TW-6", "thread %d %s at %v: the wheel holds %d elements, %d connections have a live deadline", th.Index, why, th.w.now(), n, live)
		}
	})
}

// onTimeout is the handler's callback: it runs in the cop task right after
// a pass released the lock.
func (th *Thread) onTimeout(to inactivitycop.Timeout) {
	at, dl := to.At.Sub(epoch), to.Deadline.Sub(epoch)
	th.Fired = append(th.Fired, Timeout{ID: to.Conn.ID(), Kind: to.Kind, Deadline: dl, At: at})
	if at <= dl {
		th.w.violate("TW-2", "thread %d conn %d: %s timeout fired at %v, not after its deadline %v", th.Index, to.Conn.ID(), to.Kind, at, dl)
	}
	if at != th.lastChecked { // the first callback of a pass sees the cop as the pass left it
		th.lastChecked = at
		th.checkAll("after the pass")
	}
	i := int(to.Conn.ID() - 1)
	if th.pos[i] >= 0 && th.w.s.Rand().IntN(100) < th.w.cfg.CloseOnTimeoutPct {
		th.closeConn(i, false)
	}
}
