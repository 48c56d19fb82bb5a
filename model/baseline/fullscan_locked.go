package baseline

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
)

// FullScanLocked is the full-scan cop as Apache Traffic Server ran it before
// PR #13821, the baseline of TW-9. Besides visiting every open connection
// once per pass, the old check_inactivity did two lookups per connection
// before reading its deadlines. It looked up the connection's thread
// (get_thread()) and skipped connections that had moved to another thread. It
// try-locked the connection's mutex (get_mutex(), MUTEX_TRY_LOCK) and skipped
// a busy one until the next pass. model.FullScan leaves those lookups out,
// which understates the old cost. This type pays them: one thread comparison
// and one TryLock/Unlock of a per-connection rt.Mutex per visited connection.
//
// Its timeout semantics are model.FullScan's; the differential test in this
// package checks that both fire the same timeouts at the same passes while no
// lock is busy. Like model.FullScan it never reads a clock. It is not safe
// for concurrent use, except that another task may hold a connection's mutex
// (Mutex) while a pass runs.
type FullScanLocked struct {
	f      *model.FullScan
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
		return nil, fmt.Errorf("baseline: NewFullScanLocked needs a Runtime (rt.Real() for a benchmark)")
	}
	return &FullScanLocked{f: model.NewFullScan(), r: r, thread: 1}, nil
}

// Len returns the number of open connections.
func (l *FullScanLocked) Len() int { return l.f.Len() }

// Open adds a connection with no timeout armed, on this cop's thread, with
// its own mutex. The baseline has no queue limit: it never evicts.
func (l *FullScanLocked) Open() *model.FullScanConn {
	c, _ := l.f.Open(time.Time{})
	l.locks = append(l.locks, lockedConn{mu: l.r.NewMutex(fmt.Sprintf("fullscan/conn-%d", c.ID())), thread: l.thread})
	return c
}

// Mutex returns the connection's mutex, which a pass try-locks; nil for a
// closed or foreign connection. Holding it makes passes skip the connection.
func (l *FullScanLocked) Mutex(c *model.FullScanConn) rt.Mutex {
	if !l.f.Owns(c) {
		return nil
	}
	return l.locks[c.Index()].mu
}

// SetInactivityTimeout is model.FullScan.SetInactivityTimeout.
func (l *FullScanLocked) SetInactivityTimeout(c *model.FullScanConn, now time.Time, d time.Duration) error {
	return l.f.SetInactivityTimeout(c, now, d)
}

// SetActiveTimeout is model.FullScan.SetActiveTimeout.
func (l *FullScanLocked) SetActiveTimeout(c *model.FullScanConn, now time.Time, d time.Duration) error {
	return l.f.SetActiveTimeout(c, now, d)
}

// NetActivity is model.FullScan.NetActivity.
func (l *FullScanLocked) NetActivity(c *model.FullScanConn, now time.Time) { l.f.NetActivity(c, now) }

// Close removes the connection; closing twice is a no-op.
func (l *FullScanLocked) Close(c *model.FullScanConn) {
	if !l.f.Owns(c) {
		return
	}
	// model.FullScan.Close moves its last connection into the closed one's place;
	// the lock table follows it.
	i, last := c.Index(), len(l.locks)-1
	l.f.Close(c)
	l.locks[i] = l.locks[last]
	l.locks[last] = lockedConn{}
	l.locks = l.locks[:last]
}

// Pass visits every open connection. It looks up the connection's thread and
// try-locks its mutex, as the old cop did (TW-3: N lookups per pass). It
// skips a connection whose lock is busy (Busy) and times out those whose
// deadline has passed. The Timeouts slice is reused by the next pass.
func (l *FullScanLocked) Pass(now time.Time) FullScanLockedPass {
	var p FullScanLockedPass
	p.FullScanPass = l.f.PassGated(now, func(i int) (bool, func()) {
		lc := &l.locks[i]
		if lc.thread != l.thread { // get_thread(): moved to another net thread
			return false, nil
		}
		if !lc.mu.TryLock() { // get_mutex(): busy, retried next pass
			p.Busy++
			return false, nil
		}
		return true, lc.mu.Unlock
	})
	return p
}

// FullScanLockedPass is what one FullScanLocked pass did.
type FullScanLockedPass struct {
	model.FullScanPass
	// Busy counts connections skipped because their mutex was held.
	Busy int
}
