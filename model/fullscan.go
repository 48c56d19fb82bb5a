package model

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The full-scan inactivity cop: Apache Traffic Server's cop before PR #13821.
// It is the reference for the timer-wheel cop (TW-2: same connections timed
// out). It is also its baseline: the old cop visits every connection and does
// N mutex/thread lookups per pass (TW-3), and TW-9 compares pass times.
//
// The semantics here are the specification both cops share:
//
//   - A connection may have an inactivity timeout (a duration: its deadline
//     is last activity + timeout) and an active timeout (an absolute deadline
//     set once). Its deadline is the earlier of the armed ones.
//   - A deadline has passed once now is strictly after it. A pass at exactly
//     the deadline does not time the connection out; the next one does.
//   - A pass fires every timeout of a connection that has passed, the
//     inactivity one first. Firing disarms it (an inactivity timeout must be
//     set again to be re-armed); one not yet passed stays armed.
//   - Activity only pushes the inactivity deadline later.
//   - A cop with a queue limit (NewFullScanQueue) keeps at most that many
//     connections open. Opening one more first evicts the least recently
//     active connection: the one whose opening or last activity is oldest
//     (setting a timeout is not activity). The evicted connection is closed
//     and reported once as an EvictionTimeout at the opening instant (TW-10).
//     It never times out again.

// TimeoutKind says which timeout of a connection fired.
type TimeoutKind uint8

const (
	// InactivityTimeout: no activity for the inactivity timeout.
	InactivityTimeout TimeoutKind = iota + 1
	// ActiveTimeout: the connection's total lifetime budget ran out.
	ActiveTimeout
	// EvictionTimeout: the connection was evicted from a full queue.
	EvictionTimeout
)

func (k TimeoutKind) String() string {
	switch k {
	case InactivityTimeout:
		return "inactivity"
	case ActiveTimeout:
		return "active"
	case EvictionTimeout:
		return "evicted"
	}
	return fmt.Sprintf("TimeoutKind(%d)", uint8(k))
}

// ErrFullScanConn is returned for a closed connection or one of another cop.
var ErrFullScanConn = errors.New("model: connection is closed or belongs to another full-scan cop")

// FullScanConn is one connection of a FullScan cop.
type FullScanConn struct {
	f                 *FullScan
	id                uint64
	idx               int    // position in f.conns; -1 once closed
	active            uint64 // f.clock at its opening or last activity
	inactivityTimeout time.Duration
	inactivityAt      time.Time
	activeAt          time.Time
}

// ID returns the connection's number: 1, 2, 3... in the order opened.
func (c *FullScanConn) ID() uint64 { return c.id }

// Closed reports whether the connection was closed.
func (c *FullScanConn) Closed() bool { return c.idx < 0 }

// InactivityDeadline returns the inactivity deadline, zero if none.
func (c *FullScanConn) InactivityDeadline() time.Time { return c.inactivityAt }

// InactivityTimeout returns the armed inactivity timeout (0: none).
func (c *FullScanConn) InactivityTimeout() time.Duration { return c.inactivityTimeout }

// ActiveDeadline returns the active-timeout deadline, zero if none.
func (c *FullScanConn) ActiveDeadline() time.Time { return c.activeAt }

// Deadline returns the earlier of the armed deadlines, zero if none.
func (c *FullScanConn) Deadline() time.Time { return earliest(c.inactivityAt, c.activeAt) }

// earliest returns the earlier of two instants where zero means none.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// FullScanTimeout is one timeout a pass fired.
type FullScanTimeout struct {
	ID       uint64
	Kind     TimeoutKind
	Deadline time.Time // the deadline that passed; zero for an eviction
	At       time.Time // the pass instant, or the opening that evicted it
}

// FullScanPass is what one pass did. Visited and Lookups are always the
// number of open connections: that is the cost the wheel removes.
type FullScanPass struct {
	Visited, Lookups, Fired int
	// Timeouts lists the connections timed out, in scan order. The slice is
	// reused by the next pass.
	Timeouts []FullScanTimeout
}

// FullScan is the cop that walks every open connection once per pass. It
// is a sequential model: not safe for concurrent use, and it never reads a
// clock (every call takes now).
type FullScan struct {
	conns    []*FullScanConn
	nextID   uint64
	timeouts []FullScanTimeout
	limit    int    // the queue limit; 0: none
	clock    uint64 // counts openings and activity, for the eviction order
}

// NewFullScan returns a cop with no connections and no queue limit.
func NewFullScan() *FullScan { return &FullScan{} }

// NewFullScanQueue returns a cop that keeps at most limit connections
// open, evicting the least recently active one to open another (TW-10).
// A limit of 0 or less means none.
func NewFullScanQueue(limit int) *FullScan { return &FullScan{limit: max(limit, 0)} }

// Len returns the number of open connections.
func (f *FullScan) Len() int { return len(f.conns) }

// Queue returns the IDs of the open connections in eviction order: the
// least recently active (opened or NetActivity) first (TW-10).
func (f *FullScan) Queue() []uint64 {
	open := slices.Clone(f.conns)
	slices.SortFunc(open, func(a, b *FullScanConn) int { return cmp.Compare(a.active, b.active) })
	ids := make([]uint64, len(open))
	for i, c := range open {
		ids[i] = c.id
	}
	return ids
}

// NextEviction returns the connection the next Open evicts: the least
// recently active one when the queue is full, else nil.
func (f *FullScan) NextEviction() *FullScanConn {
	if f.limit <= 0 || len(f.conns) < f.limit {
		return nil
	}
	victim := f.conns[0]
	for _, o := range f.conns[1:] {
		if o.active < victim.active {
			victim = o
		}
	}
	return victim
}

// Open adds a connection with no timeout armed at instant now. If the
// queue is full, the least recently active connection is closed first and
// returned as its EvictionTimeout; evicted is nil otherwise.
func (f *FullScan) Open(now time.Time) (c *FullScanConn, evicted *FullScanTimeout) {
	if victim := f.NextEviction(); victim != nil {
		evicted = &FullScanTimeout{ID: victim.id, Kind: EvictionTimeout, At: now}
		f.Close(victim)
	}
	f.nextID++
	f.clock++
	c = &FullScanConn{f: f, id: f.nextID, idx: len(f.conns), active: f.clock}
	f.conns = append(f.conns, c)
	return c, evicted
}

func (f *FullScan) own(c *FullScanConn) error {
	if c == nil || c.f != f || c.idx < 0 {
		return ErrFullScanConn
	}
	return nil
}

// SetInactivityTimeout arms the inactivity timeout at now+d; 0 disarms it.
func (f *FullScan) SetInactivityTimeout(c *FullScanConn, now time.Time, d time.Duration) error {
	if err := f.own(c); err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("model: negative inactivity timeout %v", d)
	}
	c.inactivityTimeout, c.inactivityAt = d, time.Time{}
	if d > 0 {
		c.inactivityAt = now.Add(d)
	}
	return nil
}

// SetActiveTimeout arms the active timeout at now+d; 0 disarms it.
func (f *FullScan) SetActiveTimeout(c *FullScanConn, now time.Time, d time.Duration) error {
	if err := f.own(c); err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("model: negative active timeout %v", d)
	}
	c.activeAt = time.Time{}
	if d > 0 {
		c.activeAt = now.Add(d)
	}
	return nil
}

// NetActivity pushes an armed inactivity deadline to now + timeout, never
// earlier, and makes the connection the most recently active one (armed or
// not). It ignores closed and foreign connections.
func (f *FullScan) NetActivity(c *FullScanConn, now time.Time) {
	if f.own(c) != nil {
		return
	}
	f.clock++
	c.active = f.clock
	if c.inactivityTimeout <= 0 {
		return
	}
	if at := now.Add(c.inactivityTimeout); at.After(c.inactivityAt) {
		c.inactivityAt = at
	}
}

// Close removes the connection; closing twice is a no-op.
func (f *FullScan) Close(c *FullScanConn) {
	if f.own(c) != nil {
		return
	}
	last := f.conns[len(f.conns)-1]
	f.conns[c.idx], last.idx = last, c.idx
	f.conns = f.conns[:len(f.conns)-1]
	c.idx = -1
	c.inactivityTimeout, c.inactivityAt, c.activeAt = 0, time.Time{}, time.Time{}
}

// Pass visits every open connection, looking each one up (the old cop's
// get_mutex/get_thread), and times out those whose deadline has passed.
func (f *FullScan) Pass(now time.Time) FullScanPass { return f.PassGated(now, nil) }

// PassGated is Pass with a gate in front of each open connection. It serves
// the baselines that reproduce the old cop's per-connection locking
// (model/baseline.FullScanLocked). The call gate(i) says whether the pass may
// examine the i-th open connection now; false skips it until the next pass.
// The release func, if not nil, runs after the connection was examined. A nil
// gate examines every connection.
func (f *FullScan) PassGated(now time.Time, gate func(i int) (ok bool, release func())) FullScanPass {
	f.timeouts = f.timeouts[:0]
	p := FullScanPass{}
	for i, c := range f.conns {
		p.Visited++
		p.Lookups++
		var release func()
		if gate != nil {
			var ok bool
			if ok, release = gate(i); !ok {
				continue
			}
		}
		f.expire(c, now)
		if release != nil {
			release()
		}
	}
	p.Fired = len(f.timeouts)
	p.Timeouts = f.timeouts
	return p
}

// expire fires the passed timeouts of one connection, inactivity first.
func (f *FullScan) expire(c *FullScanConn, now time.Time) {
	d := c.Deadline()
	if d.IsZero() || !d.Before(now) { // a deadline has passed only once now is strictly after it (TW-2)
		return
	}
	if !c.inactivityAt.IsZero() && c.inactivityAt.Before(now) {
		f.timeouts = append(f.timeouts, FullScanTimeout{ID: c.id, Kind: InactivityTimeout, Deadline: c.inactivityAt, At: now})
		c.inactivityTimeout, c.inactivityAt = 0, time.Time{}
	}
	if !c.activeAt.IsZero() && c.activeAt.Before(now) {
		f.timeouts = append(f.timeouts, FullScanTimeout{ID: c.id, Kind: ActiveTimeout, Deadline: c.activeAt, At: now})
		c.activeAt = time.Time{}
	}
}

// Owns reports whether c is an open connection of f.
func (f *FullScan) Owns(c *FullScanConn) bool { return f.own(c) == nil }

// Index is the connection's position among the open ones (PassGated's i),
// or -1 once it is closed. Closing a connection moves the last open one
// into its place.
func (c *FullScanConn) Index() int { return c.idx }
