package drain

import (
	"context"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// The lock names impl/collector gives its two locks.
const (
	dataLockName  = "collector.data"
	drainLockName = "collector.drain"
)

// Probe is an rt.Runtime wrapper for the collector under test. It observes
// the collector from outside its code, through the runtime seam only:
//
//   - It numbers every acquisition of the collector's write lock (the data
//     RWMutex) and knows whether that lock is held. Under the simulator a
//     task runs without interruption between an acquisition and its next rt
//     call. So the number right after a Record, Prune or Query returns is
//     that operation's own position in the lock order (DR-2, DR-5, DR-7).
//   - It keeps the drain mutex, so a test can probe it with TryLock (DR-4).
//   - It calls OnYield at every Yield of the collector. The collector
//     yields only inside a drain, between its two swaps: after each key of
//     the split and once after the split. DR-3 needs this: the probe must
//     guard the whole interval, not only its start.
//   - While Inspecting, it walks the collector's buffered map right after
//     each acquisition of the write lock and right before each release
//     (inspect.go). So the chunk checks see which chunks each locked
//     section moved, copied or left alone (DR-2, DR-6, DR-10).
type Probe struct {
	rt.Runtime

	// OnYield, if set, runs on the drain's task at each of its yields,
	// before the task yields.
	OnYield func()
	// Clock, if set, is called at each acquisition and release of the
	// write lock to timestamp it in the lock log (a World passes its logical
	// clock, which advances at each call).
	Clock func() int64

	// Inspecting turns the inspections on (the world turns them off during
	// a preload).
	Inspecting bool

	data      *lockLog
	drain     rt.Mutex
	inspector *inspector
}

// holdStep is how far the probe's clock moves at each reading taken while
// the write lock is held (times 1 to 7 by the acquisition's number), so
// that a drain's holds take time and differ (DR-8's gauge).
const holdStep = time.Microsecond

// Now implements rt.Runtime. Outside the write lock it is the simulator's
// clock. Inside, each reading is one more step ahead of it, as if the
// section were slow, and the probe keeps the span the readings of each hold
// cover: the hold as the code under the lock could measure it.
func (p *Probe) Now() time.Time {
	now := p.Runtime.Now()
	l := p.data
	if l == nil || !l.held {
		return now
	}
	seq := l.writes
	if l.holdSeq != seq {
		l.holdSeq, l.holdReads = seq, 0
	}
	t := now.Add(time.Duration(l.holdReads) * holdStep * time.Duration(1+seq%7))
	if l.holdReads > 0 {
		span := t.Sub(l.holdFirst)
		l.sections[len(l.sections)-1].Held = span
		if span > l.holdMax {
			l.holdMax = span
		}
	} else {
		l.holdFirst = t
	}
	l.holdReads++
	return t
}

// LongestHold is the longest span of clock readings the probe handed out
// within one hold of the write lock (0 when no hold read the clock twice).
func (p *Probe) LongestHold() time.Duration {
	if p.data == nil {
		return 0
	}
	return p.data.holdMax
}

// lockLog records the write-lock acquisitions of the collector's data lock.
type lockLog struct {
	rt.RWMutex
	p        *Probe
	writes   int64                 // acquisitions so far; the n-th has sequence number n
	held     bool                  // the write lock is held right now
	sections []checks.WriteSection // indexed by sequence number - 1
	liveAt   mapRef                // the live map at the current acquisition

	holdSeq   int64         // the acquisition the readings below belong to
	holdReads int           // clock readings within it so far
	holdFirst time.Time     // its first reading
	holdMax   time.Duration // the longest span of readings within one hold
}

// NewRWMutex implements rt.Runtime; it wraps the collector's data lock.
func (p *Probe) NewRWMutex(name string) rt.RWMutex {
	l := p.Runtime.NewRWMutex(name)
	if name != dataLockName {
		return l
	}
	p.data = &lockLog{RWMutex: l, p: p}
	return p.data
}

// NewMutex implements rt.Runtime; it keeps the collector's drain mutex.
func (p *Probe) NewMutex(name string) rt.Mutex {
	l := p.Runtime.NewMutex(name)
	if name == drainLockName {
		p.drain = l
	}
	return l
}

// Yield implements rt.Runtime: it runs OnYield, then yields.
func (p *Probe) Yield() {
	if f := p.OnYield; f != nil {
		f()
	}
	p.Runtime.Yield()
}

// Writes returns the number of write-lock acquisitions so far. Right after a
// Record or Prune returns, it is that operation's own sequence number; right
// after a Query or Snapshot returns, the number of writes it saw.
// expect makes room for n more write sections. A preload takes the write
// lock once per point, up to 1.2 million times (DR-10's 400,000 points
// per key), and growing the list by doubling was a tenth of the DR
// family's time.
func (p *Probe) expect(n int) {
	if p.data != nil && n > 0 {
		p.data.sections = slices.Grow(p.data.sections, n)
	}
}

func (p *Probe) Writes() int64 {
	if p.data == nil {
		return 0
	}
	return p.data.writes
}

// WriteHeld reports whether the write lock is held at this instant.
func (p *Probe) WriteHeld() bool { return p.data != nil && p.data.held }

// AcquiredAt returns the Clock reading at write acquisition seq (1-based)
// and at its release (0 while it is held, or without a Clock).
func (p *Probe) AcquiredAt(seq int64) (acquired, released int64) {
	if p.data == nil || seq < 1 || seq > int64(len(p.data.sections)) {
		return 0, 0
	}
	w := p.data.sections[seq-1]
	return w.Acquired, w.Released
}

// Sections returns the write sections so far, one per acquisition.
func (p *Probe) Sections() []checks.WriteSection {
	if p.data == nil {
		return nil
	}
	return p.data.sections
}

// DrainMutexHeld reports whether the drain mutex is held, probing it with
// TryLock (a scheduling point) and releasing it if the probe took it.
func (p *Probe) DrainMutexHeld() bool {
	if p.drain == nil {
		return false
	}
	if p.drain.TryLock() {
		p.drain.Unlock()
		return false
	}
	return true
}

func (p *Probe) now() int64 {
	if p.Clock == nil {
		return 0
	}
	return p.Clock()
}

// The write half is counted. Under the simulator no task runs between the
// inner acquisition and the bookkeeping below, nor between the inner release
// and the reset of held, so the log is exactly what other tasks can observe.

func (l *lockLog) onAcquire() {
	l.writes++
	l.held = true
	w := checks.WriteSection{Acquired: l.p.now()}
	if ins := l.p.inspector; ins != nil && l.p.Inspecting {
		l.liveAt = ins.live()
		w.Before = ins.walk(l.liveAt)
	}
	l.sections = append(l.sections, w)
}

// beforeRelease inspects the collector while the lock is still held.
func (l *lockLog) beforeRelease() {
	w := &l.sections[len(l.sections)-1]
	if ins := l.p.inspector; ins != nil && w.Before != nil {
		now := ins.live()
		w.After = ins.walk(now)
		if now.id() != l.liveAt.id() {
			w.OldAfter = ins.walk(l.liveAt)
		}
	}
	l.liveAt = mapRef{}
}

func (l *lockLog) Lock() {
	l.RWMutex.Lock()
	l.onAcquire()
}

func (l *lockLog) TryLock() bool {
	ok := l.RWMutex.TryLock()
	if ok {
		l.onAcquire()
	}
	return ok
}

func (l *lockLog) LockContext(ctx context.Context) error {
	err := l.RWMutex.LockContext(ctx)
	if err == nil {
		l.onAcquire()
	}
	return err
}

func (l *lockLog) Unlock() {
	l.beforeRelease()
	l.RWMutex.Unlock()
	l.held = false
	l.sections[len(l.sections)-1].Released = l.p.now()
}
