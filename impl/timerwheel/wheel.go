package timerwheel

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Defaults from the seed (Apache Traffic Server PR #13821).
const (
	// DefaultTick is the length of one tick: the cop runs once a second.
	DefaultTick = time.Second
	// DefaultBuckets is the ring size: 4,096 one-second buckets, about 68
	// minutes before a deadline wraps.
	DefaultBuckets = 4096
	// MaxBuckets bounds the ring so that a bad configuration cannot allocate
	// without limit.
	MaxBuckets = 1 << 24
)

// ErrReentrant is returned by Expire when it is called from Expired.
var ErrReentrant = errors.New("timerwheel: Expire called from inside a pass")

// Wheel is a single-level timer wheel. The zero value is not usable; use New.
// It is not safe for concurrent use.
type Wheel struct {
	origin   time.Time
	tick     time.Duration
	mask     int64
	buckets  []*Element // heads of doubly linked lists
	deferred *Element   // elements re-armed or scheduled during a pass
	current  *Element   // the rest of the bucket at the cursor, once started
	started  bool       // the bucket at the cursor is detached into current
	cursor   int64      // the next tick to visit; never passes an unfinished bucket
	n        int
	expiring bool
	totals   Totals
	// fastCursors bounds the cursors for which (cursor+2)*tick fits in a
	// Duration, so that lastBegun may multiply instead of divide.
	fastCursors int64
}

// head returns the head pointer of the list a slot marker names.
func (w *Wheel) head(slot int32) **Element {
	switch slot {
	case deferredSlot:
		return &w.deferred
	case currentSlot:
		return &w.current
	}
	return &w.buckets[slot]
}

// New returns an empty wheel whose tick 0 starts at origin. tick must be
// positive and buckets a power of two between 1 and MaxBuckets.
func New(origin time.Time, tick time.Duration, buckets int) (*Wheel, error) {
	if tick <= 0 {
		return nil, fmt.Errorf("timerwheel: tick must be positive, got %v", tick)
	}
	if buckets < 1 || buckets > MaxBuckets || bits.OnesCount(uint(buckets)) != 1 {
		return nil, fmt.Errorf("timerwheel: buckets must be a power of two in [1, %d], got %d", MaxBuckets, buckets)
	}
	return &Wheel{
		origin:      origin,
		tick:        tick,
		mask:        int64(buckets - 1),
		buckets:     make([]*Element, buckets),
		fastCursors: math.MaxInt64/int64(tick) - 2,
	}, nil
}

// Origin returns the instant tick 0 starts at.
func (w *Wheel) Origin() time.Time { return w.origin }

// Tick returns the length of one tick.
func (w *Wheel) Tick() time.Duration { return w.tick }

// Buckets returns the number of buckets in the ring.
func (w *Wheel) Buckets() int { return len(w.buckets) }

// Len returns the number of scheduled elements.
func (w *Wheel) Len() int { return w.n }

// Cursor returns the next tick a pass will visit. Every tick before it has
// been visited completely.
func (w *Wheel) Cursor() int64 { return w.cursor }

// TickOf returns the tick that contains t: floor((t-origin)/tick). Instants
// more than about 292 years from the origin saturate.
func (w *Wheel) TickOf(t time.Time) int64 {
	d := t.Sub(w.origin)
	k := int64(d / w.tick)
	if d < 0 && d%w.tick != 0 {
		k-- // floor, not truncation, before the origin
	}
	return k
}

// TickStart returns the instant tick k starts at.
func (w *Wheel) TickStart(k int64) time.Time {
	return w.origin.Add(time.Duration(k) * w.tick)
}

// Schedule puts t in the wheel with wheel deadline at, which must not be
// later than t's real deadline (TW-1). It cancels first, so scheduling a
// scheduled element moves it (TW-6); it is O(1). A zero at cancels. An
// element scheduled in another wheel is moved to this one.
func (w *Wheel) Schedule(t Timer, at time.Time) {
	e := t.element()
	e.unlink() // TW-6: schedule cancels first
	if at.IsZero() {
		return
	}
	e.owner = t
	e.at = at
	if w.expiring {
		w.link(e, &w.deferred, deferredSlot)
		return
	}
	w.insert(e)
}

// Cancel removes t from the wheel that holds it, in O(1). Cancelling an
// unscheduled element is a no-op (TW-6).
func (w *Wheel) Cancel(t Timer) {
	t.element().unlink()
}

// insert links e into the bucket of the first tick that starts after its
// wheel deadline, clamped into the ring: a deadline behind the cursor goes to
// the next bucket a pass will start.
func (w *Wheel) insert(e *Element) {
	k := w.TickOf(e.at) + 1
	k = max(k, w.floor())     // clamp: never behind the cursor
	slot := int32(k & w.mask) // beyond the ring: wraps, revisited once per ring (TW-5)
	w.link(e, &w.buckets[slot], slot)
}

// floor is the earliest tick whose bucket a pass has yet to start.
func (w *Wheel) floor() int64 {
	if w.started {
		return w.cursor + 1
	}
	return w.cursor
}

func (w *Wheel) link(e *Element, head **Element, slot int32) {
	e.w = w
	w.n++
	e.push(head, slot)
}
