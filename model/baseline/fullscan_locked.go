package model

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// FullScanLocked is the full-scan cop as Apache Traffic Server ran it before
// PR #13821, the baseline of TW-9: besides visiting every open connection
// once per pass, the old check_inactivity looked up each connection's thread
// (get_thread(), skipping connections that had moved to another thread) and
// try-locked its mutex (get_mutex(), MUTEX_TRY_LOCK, skipping a busy one until
// the next pass) before reading its deadlines. FullScan leaves those two
// lookups out, which understates the old cost; this type pays them, one
// thread comparison and one TryLock/Unlock of a per-connection rt.Mutex per
// visited connection.
//
// Its timeout semantics are FullScan's (the differential test in this
// package checks that both fire the same timeouts at the same passes while
// no lock is busy). Like FullScan it never reads a clock; it is not safe for
// concurrent use, except that another task may hold a connection's mutex
// (Mutex) while a pass runs.
type FullScanLocked struct {
	f      *FullScan
	r      rt.Runtime
	thread int          // this cop's net thread
	locks  []lockedConn // by position in f.conns, kept in step with it
}

// lockedConn is the per-connection state the old cop looked up.
type lockedConn struct {
	mu     rt.Mutex
	thread int
}

// NewFullScanLocked returns a cop with no connections whose per-connection
// mutexes come from r (rt.Real() for the benchmark).
func NewFullScanLocked(r rt.Runtime) (*FullScanLocked, error) {
	if r == nil {
		return nil, fmt.Errorf("model: NewFullScanLocked needs a Runtime (rt.Real() for a benchmark)")
	}
	return &FullScanLocked{f: NewFullScan(), r: r, thread: 1}, nil
}

// Len returns the number of open connections.
func (l *FullScanLocked) Len() int { return l.f.Len() }

// Open adds a connection with no timeout armed, on this cop's thread, with
// its own mutex.
func (l *FullScanLocked) Open() *FullScanConn {
	c := l.f.Open()
	l.locks = append(l.locks, lockedConn{mu: l.r.NewMutex(fmt.Sprintf("fullscan/conn-%d", c.id)), thread: l.thread})
	return c
}

// Mutex returns the connection's mutex, which a pass try-locks; nil for a
// closed or foreign connection. Holding it makes passes skip the connection.
func (l *FullScanLocked) Mutex(c *FullScanConn) rt.Mutex {
	if l.f.own(c) != nil {
		return nil
	}
	return l.locks[c.idx].mu
}

// SetInactivityTimeout is FullScan.SetInactivityTimeout.
func (l *FullScanLocked) SetInactivityTimeout(c *FullScanConn, now time.Time, d time.Duration) error {
	return l.f.SetInactivityTimeout(c, now, d)
}

// SetActiveTimeout is FullScan.SetActiveTimeout.
func (l *FullScanLocked) SetActiveTimeout(c *FullScanConn, now time.Time, d time.Duration) error {
	return l.f.SetActiveTimeout(c, now, d)
}

// NetActivity is FullScan.NetActivity.
func (l *FullScanLocked) NetActivity(c *FullScanConn, now time.Time) { l.f.NetActivity(c, now) }

// Close removes the connection; closing twice is a no-op.
func (l *FullScanLocked) Close(c *FullScanConn) {
	if l.f.own(c) != nil {
		return
	}
	// FullScan.Close moves its last connection into the closed one's place;
	// the lock table follows it.
	i, last := c.idx, len(l.locks)-1
	l.f.Close(c)
	l.locks[i] = l.locks[last]
	l.locks[last] = lockedConn{}
	l.locks = l.locks[:last]
}

// Pass visits every open connection: it looks up the connection's thread
// and try-locks its mutex, as the old cop did (TW-3: N lookups per pass),
// skips a connection whose lock is busy (Busy), and times out those whose
// deadline has passed. The Timeouts slice is reused by the next pass.
func (l *FullScanLocked) Pass(now time.Time) FullScanLockedPass {
	f := l.f
	f.timeouts = f.timeouts[:0]
	var p FullScanLockedPass
	for i, c := range f.conns {
		p.Visited++
		p.Lookups++
		lc := &l.locks[i]
		if lc.thread != l.thread { // get_thread(): moved to another net thread
			continue
		}
		if !lc.mu.TryLock() { // get_mutex(): busy, retried next pass
			p.Busy++
			continue
		}
		f.expire(c, now)
		lc.mu.Unlock()
	}
	p.Fired = len(f.timeouts)
	p.Timeouts = f.timeouts
	return p
}

// FullScanLockedPass is what one FullScanLocked pass did.
type FullScanLockedPass struct {
	FullScanPass
	// Busy counts connections skipped because their mutex was held.
	Busy int
}

// expire fires the passed timeouts of one connection, inactivity first, as
// FullScan.Pass does for each connection it visits.
func (f *FullScan) expire(c *FullScanConn, now time.Time) {
	d := c.Deadline()
	if d.IsZero() || !d.Before(now) { // passed only once now is strictly after it (TW-2)
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
