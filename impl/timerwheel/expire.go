package timerwheel

import (
	"fmt"
	"time"
)

// Pass is what one Expire call did. The counts are exact, so tests and the
// cop's metrics can assert them (TW-3, TW-8).
type Pass struct {
	// Buckets is the number of buckets examined, empty or not; at most the
	// ring size thanks to the fast-forward (TW-5).
	Buckets int
	// Visited is the number of elements whose real deadline was re-read.
	Visited int
	// Fired is the number of elements whose deadline had passed.
	Fired int
	// Rearmed is the number of elements not yet due, put back at their real
	// deadline.
	Rearmed int
	// Dropped is the number of elements found without a real deadline.
	Dropped int
	// Exhausted reports that the pass stopped at the budget with work left;
	// the cursor stays on the unfinished bucket (TW-4).
	Exhausted bool
}

// Totals are cumulative counts over every pass of a wheel.
type Totals struct {
	Passes, Buckets, Visited, Fired, Rearmed, Dropped, Exhausted int64
}

// Totals returns the cumulative counts.
func (w *Wheel) Totals() Totals { return w.totals }

func (t *Totals) add(p *Pass) {
	t.Passes++
	t.Buckets += int64(p.Buckets)
	t.Visited += int64(p.Visited)
	t.Fired += int64(p.Fired)
	t.Rearmed += int64(p.Rearmed)
	t.Dropped += int64(p.Dropped)
	if p.Exhausted {
		t.Exhausted++
	}
}

// Passed reports whether a deadline has passed at instant now. It has only
// once now is strictly after it: a pass at exactly the deadline does not fire
// it, the next one does. Every due decision of the wheel, and of the cop that
// fires on its behalf, is this one line.
func Passed(deadline, now time.Time) bool {
	return deadline.Before(now) // TW-2: a deadline has passed only once now is strictly after it
}

// Expire runs one pass at instant now: it visits, in tick order, every
// element of every bucket whose tick has begun, at most budget of them. For
// each it re-reads the real deadline: passed (now strictly after it) fires,
// not yet due is re-armed at the real deadline (TW-1), none is dropped. A
// pass that reaches the budget with work left returns Exhausted and leaves
// the rest, cursor included, for the next call (TW-4). budget must be
// positive; Expire must not be called from Expired.
func (w *Wheel) Expire(now time.Time, budget int) (Pass, error) {
	if budget < 1 {
		return Pass{}, fmt.Errorf("timerwheel: budget must be positive, got %d", budget)
	}
	if w.expiring {
		return Pass{}, ErrReentrant
	}
	var p Pass
	last := w.lastBegun(now) // TW-3: only buckets whose tick has begun
	if last == w.cursor && !w.started && w.buckets[last&w.mask] == nil {
		// The common idle pass, once a tick: one empty bucket (TW-9).
		w.cursor++
		p.Buckets = 1
		w.totals.add(&p)
		return p, nil
	}
	w.expiring = true
	defer w.endPass() // insert what the pass deferred, even if Expired panics
	w.sweep(now, last, budget, &p)
	w.totals.add(&p)
	return p, nil
}

// sweep is the body of a pass up to tick last. It visits at most budget
// elements, and examines at most len(buckets) buckets (plus an unfinished
// one it resumes) because of the fast-forward.
func (w *Wheel) sweep(now time.Time, last int64, budget int, p *Pass) {
	for ; w.cursor <= last; w.cursor++ {
		if !w.started {
			if ring := int64(len(w.buckets)); last-w.cursor >= ring {
				w.cursor = last - ring + 1 // TW-5: a jump longer than the ring fast-forwards
			}
			w.detach()
		}
		p.Buckets++
		for w.current != nil {
			if p.Visited == budget {
				p.Exhausted = true // TW-4: stop here; the cursor stays on this bucket
				return
			}
			e := w.current
			e.unlink()
			p.Visited++
			w.visit(e, now, p)
		}
		w.started = false
	}
}

// lastBegun is TickOf(now) without a division in the common cases, a pass
// in the cursor's tick or the next one: the idle pass is the hot one (TW-9).
func (w *Wheel) lastBegun(now time.Time) int64 {
	if w.cursor < w.fastCursors {
		d := now.Sub(w.origin)
		start := time.Duration(w.cursor) * w.tick // no overflow below fastCursors
		switch {
		case d >= start && d-start < w.tick:
			return w.cursor
		case d >= start+w.tick && d-start < 2*w.tick:
			return w.cursor + 1
		}
	}
	return w.TickOf(now)
}

// detach moves the bucket at the cursor into current, in O(1).
func (w *Wheel) detach() {
	slot := w.cursor & w.mask
	w.current = w.buckets[slot]
	w.buckets[slot] = nil
	if w.current != nil {
		w.current.slot = currentSlot
	}
	w.started = true
}

// visit re-reads one element's real deadline and fires, re-arms or drops it.
func (w *Wheel) visit(e *Element, now time.Time, p *Pass) {
	t := e.owner
	real := t.Deadline()
	switch {
	case real.IsZero():
		p.Dropped++
	case Passed(real, now):
		p.Fired++
		t.Expired(now)
	default:
		e.at = real // TW-1: re-arm at the real deadline, never later
		w.link(e, &w.deferred, deferredSlot)
		p.Rearmed++
	}
}

// endPass inserts the elements deferred during the pass into their buckets.
// Deferring them is what keeps a pass from visiting an element twice: a
// re-armed deadline beyond the ring wraps into a bucket this very pass may
// still have to examine.
func (w *Wheel) endPass() {
	for w.deferred != nil { // bounded: each element leaves the list once
		e := w.deferred
		e.unlink()
		w.insert(e)
	}
	w.expiring = false
}
