package netthreads

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
)

// event converts a cop's timeout into the checkers' record.
func event(id uint64, kind inactivitycop.Kind, deadline, at time.Time) checks.TimeoutEvent {
	return checks.TimeoutEvent{Conn: id, Kind: modelKind(kind), Deadline: checks.At(since(deadline)), At: checks.At(since(at))}
}

// modelKind is the reference's name for a kind of timeout.
func modelKind(k inactivitycop.Kind) model.TimeoutKind {
	switch k {
	case inactivitycop.Inactivity:
		return model.InactivityTimeout
	case inactivitycop.Active:
		return model.ActiveTimeout
	case inactivitycop.Evicted:
		return model.EvictionTimeout
	}
	return 0
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

	// Fired are the wheel cop's timeouts and evictions in callback order;
	// RefFired the reference's in pass (and opening) order.
	Fired, RefFired []checks.TimeoutEvent
	// shortened are the instants at which a timeout callback shortened a
	// deadline below the one the wheel held (during a cop pass).
	shortened []time.Duration
	hist      checks.CopHistory

	// The reference's pass schedule: every tick while the cop runs, and at
	// each restart.
	running   bool
	refNext   time.Duration
	RefPasses int

	cancel      context.CancelFunc
	done        rt.Event
	lastChecked time.Duration // the pass instant the callback last checked after
	inCallback  bool          // a setter runs from a timeout callback
}

func newThread(w *World, i int, cfg ThreadConfig) (*Thread, error) {
	th := &Thread{w: w, Index: i, Cfg: cfg, Ref: model.NewFullScanQueue(cfg.Cop.MaxConns), lastChecked: -1}
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
			th.RefFired = append(th.RefFired, checks.TimeoutEvent{Conn: to.ID, Kind: to.Kind, Deadline: checks.At(to.Deadline.Sub(epoch)), At: checks.At(p), Open: open})
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

// opBegin records the invocation of one operation on the thread's cop (and
// counts it); the typed parameters keep a run that does not record from
// formatting or boxing anything. i < 0 is an open.
func (th *Thread) opBegin(what string, i int, d time.Duration) record.EventID {
	s := th.w.s
	if !s.Recording() {
		s.OpBegin("")
		return record.NoEvent
	}
	switch {
	case i < 0:
		return s.OpBegin("net-%d %s", th.Index, what)
	case d != 0:
		return s.OpBegin("net-%d %s conn %d %v", th.Index, what, i+1, d)
	}
	return s.OpBegin("net-%d %s conn %d", th.Index, what, i+1)
}

// opEnd records the answer of the operation begun as op and makes it the
// event the checks that follow blame (see World.violate); restore the
// previous one with the returned value.
func (th *Thread) opEnd(op record.EventID, err error, answer string) (prev record.EventID) {
	w := th.w
	prev = w.blameOn
	if op == record.NoEvent {
		return prev
	}
	if err != nil {
		w.blameOn = w.s.OpEnd(op, "error: %v", err)
	} else {
		w.blameOn = w.s.OpEnd(op, "%s", answer)
	}
	return prev
}

// openConn opens a connection on both cops and returns its index. With a
// full queue both evict a connection (TW-10): the wheel cop reports it
// through the callback before Open returns, the reference returns it.
// Callers ask sim.Keep(sim.KeepOperation) first: an open a shrinker drops
// is not made at all.
func (th *Thread) openConn() int {
	op := th.opBegin("open", -1, 0)
	t0 := th.w.now()
	th.flush(t0) // the wheel passed at t0's passes already: the world acts only after them
	victim := th.Ref.NextEviction()
	armed := victim != nil && !victim.Deadline().IsZero()
	c := th.H.Open()
	th.sync(t0, "open")
	r, evicted := th.Ref.Open(th.w.at(t0))
	answer := ""
	if op != record.NoEvent {
		answer = fmt.Sprintf("conn %d", c.ID())
		if evicted != nil {
			answer += fmt.Sprintf(", evicting conn %d", evicted.ID)
		}
	}
	prev := th.opEnd(op, nil, answer)
	defer func() { th.w.blameOn = prev }()
	if c.ID() != r.ID() {
		th.w.violate("harness", "thread %d: connection ids diverge: wheel %d, reference %d", th.Index, c.ID(), r.ID())
	}
	i := len(th.conns)
	th.conns, th.refs, th.info = append(th.conns, c), append(th.refs, r), append(th.info, connInfo{})
	th.pos = append(th.pos, len(th.open))
	th.open = append(th.open, i)
	th.w.stats.Opened++
	if evicted != nil {
		th.RefFired = append(th.RefFired, checks.TimeoutEvent{Conn: evicted.ID, Kind: evicted.Kind, At: checks.At(t0)})
		j := int(evicted.ID - 1)
		th.w.stats.Evicted++
		th.w.s.Probe(ProbeEvicted)
		if armed && victim.ID() == evicted.ID {
			th.w.s.Probe(ProbeEvictedArmed) // left in the wheel, it would fire later
		}
		th.forget(j)
		th.checkConn(j, "eviction", true)
		th.staleHandle(j)
	}
	th.checkConn(i, "open", true)
	return i
}

// forget takes connection i off the list of open connections.
func (th *Thread) forget(i int) {
	if p := th.pos[i]; p >= 0 {
		last := th.open[len(th.open)-1]
		th.open[p], th.pos[last] = last, p
		th.open = th.open[:len(th.open)-1]
		th.pos[i] = -1
	}
}

// shortenedBelow counts the probes of a setter that left connection i
// with a real deadline earlier than the one the wheel held before it
// (held, was), so that the setter had to re-arm (TW-1).
func (th *Thread) shortenedBelow(i int, held time.Time, was bool, inCallback bool) {
	real := th.refs[i].Deadline()
	if !was || real.IsZero() || !real.Before(held) {
		return
	}
	th.w.s.Probe(ProbeShortened)
	if inCallback {
		th.w.s.Probe(ProbeShortenedInPass)
		th.shortened = append(th.shortened, th.w.now())
	}
}

// setInactivity arms (d > 0) or disarms connection i's inactivity timeout.
// Like every operation on a connection (setActive, activity, closeConn), it
// is one a shrinker may drop (sim.Keep): then neither cop sees it.
func (th *Thread) setInactivity(i int, d time.Duration) {
	if th.w.s.KeepFor(sim.KeepOperation, connLabel(i)) {
		th.doSetInactivity(i, d)
	}
}

// doSetInactivity is setInactivity without asking Keep (the caller did).
func (th *Thread) doSetInactivity(i int, d time.Duration) {
	op := th.opBegin("set-inactivity", i, d)
	held, was := th.conns[i].WheelDeadline()
	t0 := th.w.now()
	err := th.H.SetInactivityTimeout(th.conns[i], d)
	th.sync(t0, "set-inactivity")
	rerr := th.Ref.SetInactivityTimeout(th.refs[i], th.w.at(t0), d)
	prev := th.opEnd(op, err, "ok")
	th.sameErr("SetInactivityTimeout", i, err, rerr)
	if err == nil {
		th.info[i].idle, th.info[i].longIdle = d, d > th.ring()
	}
	th.w.stats.Ops++
	th.shortenedBelow(i, held, was, th.inCallback)
	th.checkConn(i, "set-inactivity", true)
	th.w.blameOn = prev
}

// setActive arms (d > 0) or disarms connection i's active timeout.
func (th *Thread) setActive(i int, d time.Duration) {
	if th.w.s.KeepFor(sim.KeepOperation, connLabel(i)) {
		th.doSetActive(i, d)
	}
}

// doSetActive is setActive without asking Keep (the caller did).
func (th *Thread) doSetActive(i int, d time.Duration) {
	op := th.opBegin("set-active", i, d)
	held, was := th.conns[i].WheelDeadline()
	t0 := th.w.now()
	err := th.H.SetActiveTimeout(th.conns[i], d)
	th.sync(t0, "set-active")
	rerr := th.Ref.SetActiveTimeout(th.refs[i], th.w.at(t0), d)
	prev := th.opEnd(op, err, "ok")
	th.sameErr("SetActiveTimeout", i, err, rerr)
	if err == nil {
		th.info[i].longActive = d > th.ring()
	}
	th.w.stats.Ops++
	th.shortenedBelow(i, held, was, th.inCallback)
	th.checkConn(i, "set-active", true)
	th.w.blameOn = prev
}

// activity records network activity on connection i: the inactivity
// deadline moves later, the wheel is not touched (TW-1).
func (th *Thread) activity(i int) {
	if !th.w.s.KeepFor(sim.KeepOperation, connLabel(i)) {
		return
	}
	op := th.opBegin("activity", i, 0)
	t0 := th.w.now()
	if at, held := th.conns[i].WheelDeadline(); held && !at.After(th.w.at(t0)) && !th.refs[i].InactivityDeadline().IsZero() {
		// The wheel's deadline for it has passed: its bucket comes due at
		// the next pass, which must find the later deadline and re-arm.
		th.w.s.Probe(ProbeActivityPastWheel)
	}
	th.H.NetActivity(th.conns[i])
	th.sync(t0, "activity")
	th.Ref.NetActivity(th.refs[i], th.w.at(t0))
	prev := th.opEnd(op, nil, "ok")
	th.w.stats.Ops++
	th.w.stats.Activity++
	th.checkConn(i, "activity", true)
	th.w.blameOn = prev
}

// closeConn closes connection i on both cops. compare is false inside a
// timeout callback, where the wheel may still owe continuations that the
// reference's pass has already done.
func (th *Thread) closeConn(i int, compare bool) {
	if !th.w.s.KeepFor(sim.KeepOperation, connLabel(i)) {
		return
	}
	if compare {
		// Negative timeouts are refused and change nothing (TW-2: both
		// cops refuse them, the deadlines stay the reference's).
		th.doSetInactivity(i, -time.Nanosecond)
		th.doSetActive(i, -time.Nanosecond)
		th.foreignHandle(i)
	}
	op := th.opBegin("close", i, 0)
	t0 := th.w.now()
	th.H.Close(th.conns[i])
	th.sync(t0, "close")
	th.Ref.Close(th.refs[i])
	prev := th.opEnd(op, nil, "closed")
	th.forget(i)
	th.w.stats.Ops++
	th.checkConn(i, "close", compare)
	th.w.blameOn = prev
	if compare {
		th.staleHandle(i)
	}
}

// foreignHandle hands open connection i to the next thread's handler, as
// a caller that mixed up its threads would: its setters must be refused,
// its activity and close ignored, and neither thread's wheel or queue may
// change (TW-6, TW-10); connection i keeps the reference's deadlines
// (TW-2). A world of one thread has no other handler.
func (th *Thread) foreignHandle(i int) {
	if len(th.w.Threads) < 2 {
		return
	}
	o := th.w.Threads[(th.Index+1)%len(th.w.Threads)]
	c, r := th.conns[i], th.refs[i]
	t0 := th.w.now()
	at := th.w.at(t0)
	err := o.H.SetInactivityTimeout(c, th.w.cfg.Plan.Tick)
	th.sameErr("SetInactivityTimeout on another thread's handler", i, err, o.Ref.SetInactivityTimeout(r, at, th.w.cfg.Plan.Tick))
	err = o.H.SetActiveTimeout(c, th.w.cfg.Plan.Tick)
	th.sameErr("SetActiveTimeout on another thread's handler", i, err, o.Ref.SetActiveTimeout(r, at, th.w.cfg.Plan.Tick))
	o.H.NetActivity(c)
	o.Ref.NetActivity(r, at)
	o.H.Close(c)
	o.Ref.Close(r)
	th.checkConn(i, "another thread's handler used it", true)
	for _, x := range []*Thread{th, o} {
		x.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
			x.checkQueue(cop, "after another thread's handler used a connection")
		})
	}
}

// staleHandle uses closed connection i's handle as a client that missed
// the close would: both setters must be refused on both cops, activity
// ignored, and nothing of the connection may come back to the wheel (TW-6)
// or the queue (TW-10), where it would time out or be evicted again.
func (th *Thread) staleHandle(i int) {
	th.doSetInactivity(i, th.w.cfg.Plan.Tick)
	th.doSetActive(i, th.w.cfg.Plan.Tick)
	t0 := th.w.now()
	th.H.NetActivity(th.conns[i])
	th.sync(t0, "activity on a closed connection")
	th.Ref.NetActivity(th.refs[i], th.w.at(t0))
	th.checkConn(i, "activity on a closed connection", true)
	th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
		th.checkQueue(cop, "after a closed connection's handle was used")
	})
}

func (th *Thread) sameErr(op string, i int, err, rerr error) {
	if (err == nil) != (rerr == nil) {
		th.w.violate("TW-2", "thread %d conn %d: %s: the wheel cop returned %v, the full scan %v", th.Index, i+1, op, err, rerr)
	}
}

// checkConn checks connection i right after an operation: the wheel holds
// its live deadline no later than the real one (TW-1), it is scheduled
// exactly when it has a live deadline (TW-6), and, when compare is set, its
// deadlines equal the reference's (TW-2). A connection the reference just
// evicted must be closed and out of the wheel (TW-10). It reports whether
// the connection has a live deadline (open, with a deadline set).
func (th *Thread) checkConn(i int, op string, compare bool) (live bool) {
	th.w.stats.ConnChecks++
	c, r := th.conns[i], th.refs[i]
	at, held := c.WheelDeadline()
	real := c.Deadline()
	closed := c.Closed()
	switch {
	case op == "eviction" && (!closed || held):
		th.w.violate("TW-10", "thread %d conn %d: evicted from the full queue at %v but closed=%v and still in the wheel=%v (deadline %v): it would fire again",
			th.Index, c.ID(), th.w.now(), c.Closed(), held, since(real))
	case closed && held:
		th.w.violate("TW-6", "thread %d conn %d: still in the wheel (at %v) after %s closed it", th.Index, c.ID(), at.Sub(epoch), op)
	case closed:
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
	if compare && (!c.InactivityDeadline().Equal(r.InactivityDeadline()) || !c.ActiveDeadline().Equal(r.ActiveDeadline()) || c.InactivityTimeout() != r.InactivityTimeout()) {
		th.w.violate("TW-2", "thread %d conn %d after %s at %v: wheel cop deadlines inactivity %v (timeout %v) active %v, full scan %v (timeout %v) and %v",
			th.Index, c.ID(), op, th.w.now(), since(c.InactivityDeadline()), c.InactivityTimeout(), since(c.ActiveDeadline()),
			since(r.InactivityDeadline()), r.InactivityTimeout(), since(r.ActiveDeadline()))
	}
	return !closed && !real.IsZero()
}

// checkAll checks every connection and the wheel's size (TW-1, TW-6). It
// takes the handler's lock, so it sees the cop between passes and
// operations.
func (th *Thread) checkAll(why string) {
	th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
		th.w.stats.FullChecks++
		live := 0
		for i := range th.conns {
			if th.checkConn(i, why, false) {
				live++
			}
		}
		if n := cop.Wheel().Len(); n != live {
			th.w.violate("TW-6", "thread %d %s at %v: the wheel holds %d elements, %d connections have a live deadline", th.Index, why, th.w.now(), n, live)
		}
		th.checkQueue(cop, why)
	})
}

// checkQueue holds the cop's connection queue (Cop.Conns, the next to be
// evicted first) to the reference's: the open connections, least recently
// opened or active first (TW-10). Every operation reaches both cops with no
// scheduling point between them, so the two agree whenever another task
// looks.
func (th *Thread) checkQueue(cop *inactivitycop.Cop, why string) {
	want := th.Ref.Queue()
	got := make([]uint64, 0, len(want))
	for _, c := range cop.Conns() {
		got = append(got, c.ID())
	}
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	th.w.violate("TW-10", "thread %d %s at %v: the cop's queue holds %d connections, the reference's %d; they first differ at place %d (least recently active first): cop %v, reference %v",
		th.Index, why, th.w.now(), len(got), len(want), i+1, window(got, i), window(want, i))
}

// window is up to three IDs of ids from place i, for a message.
func window(ids []uint64, i int) []uint64 { return ids[min(i, len(ids)):min(i+3, len(ids))] }

// onTimeout is the handler's callback: it runs in the cop task right after
// a pass released the lock, or, for an eviction, in the task whose Open
// evicted the connection, before Open returns. It records what it is told
// at the instant it runs (from outside: the callback's own clock), checks
// the cop after each pass, sometimes closes the connection, and sometimes
// shortens another connection's deadline while the pass may still owe
// continuations (a setter during a cop pass).
func (th *Thread) onTimeout(to inactivitycop.Timeout) {
	now := th.w.now()
	e := event(to.Conn.ID(), to.Kind, to.Deadline, epoch.Add(now))
	if to.Kind == inactivitycop.Evicted {
		e.Deadline = 0
		th.Fired = append(th.Fired, e)
		return
	}
	i := int(to.Conn.ID() - 1)
	if i < len(th.info) {
		in := th.info[i]
		e.Long = (to.Kind == inactivitycop.Inactivity && in.longIdle) || (to.Kind == inactivitycop.Active && in.longActive)
	}
	th.Fired = append(th.Fired, e)
	if now != th.lastChecked { // the first callback of a pass sees the cop as the pass left it
		th.lastChecked = now
		th.checkAll("after the pass")
	}
	rnd := th.w.s.Rand()
	if i < len(th.pos) && th.pos[i] >= 0 && rnd.IntN(100) < th.w.cfg.CloseOnTimeoutPct {
		th.closeConn(i, false)
	}
	if th.w.cfg.ShortenInPassPct > 0 && len(th.open) > 0 && rnd.IntN(100) < th.w.cfg.ShortenInPassPct {
		th.shortenInPass(th.open[rnd.IntN(len(th.open))])
	}
}

// shortenInPass shortens connection j's deadline from inside a timeout
// callback, to an allowed deadline (outside every quiet window), if that is
// earlier than its current one. Only a connection with nothing due now is
// touched: the reference has passed at this instant already, and a
// connection it fired here may still be waiting for the wheel's
// continuation, which must see the deadline the reference saw.
func (th *Thread) shortenInPass(j int) {
	now := th.w.at(th.w.now())
	real := th.refs[j].Deadline()
	if real.IsZero() || !real.After(now) || !th.conns[j].Deadline().Equal(real) {
		return
	}
	d := th.pickDeadline()
	if !th.w.at(d).Before(real) {
		return
	}
	th.inCallback = true
	defer func() { th.inCallback = false }()
	if th.refs[j].ActiveDeadline().Equal(real) {
		th.setActive(j, d-th.w.now())
		return
	}
	th.setInactivity(j, d-th.w.now())
}

// connLabel labels an operation on connection i (sim.Sim.KeepFor) as the
// checks name it ("conn 7"), so that a shrinker keeps the operations of
// the connection a failure names.
func connLabel(i int) string { return "conn " + strconv.Itoa(i+1) }
