package simbus

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"time"
)

// maxGaps bounds the reconnect gaps one subscriber may accumulate: with
// MeanEvery >= 1ms this is at least 17 minutes of virtual time even in the
// worst case, and hours with realistic settings.
const maxGaps = 1 << 20

// outages are the intervals when one subscriber is disconnected: fixed
// partition windows and reconnect gaps drawn lazily from the world's source
// as virtual time is needed (each draw happens at a publish, in publish
// order, so it is deterministic).
type outages struct {
	partitions []Window // sorted, disjoint
	rc         Reconnect
	gaps       []Window // sorted, disjoint
	drawn      int      // gaps drawn, kept or not
	genUntil   time.Duration
}

// newOutages returns the outages of a link with faults f from instant from.
// keep decides whether each partition window is injected (sim.Keep), in
// time order.
func newOutages(f Faults, from time.Duration, keep func(Window) bool) *outages {
	o := &outages{rc: f.Reconnect, genUntil: from}
	for _, w := range f.sortedPartitions() {
		if keep(w) {
			o.partitions = append(o.partitions, w)
		}
	}
	return o
}

// hit returns the cause of a loss if the subscriber is disconnected at any
// instant of [from, to], or CauseNone. ok is false when the gap limit is
// exceeded. newGap is called for every gap drawn and says whether it is
// injected (sim.Keep). A gap it drops is drawn all the same, so the draws
// that follow stay where they were, and the link stays up.
func (o *outages) hit(r *rand.Rand, from, to time.Duration, newGap func(Window) bool) (Cause, bool) {
	if intersects(o.partitions, from, to) {
		return CausePartition, true
	}
	if !o.rc.on() {
		return CauseNone, true
	}
	// Bounded by maxGaps: every iteration draws one gap.
	for o.genUntil <= to {
		if o.drawn >= maxGaps {
			return CauseNone, false
		}
		start := o.genUntil + time.Duration(r.ExpFloat64()*float64(o.rc.MeanEvery))
		w := Window{Start: start, End: start + uniform(r, o.rc.MinGap, o.rc.MaxGap)}
		o.drawn++
		o.genUntil = w.End
		if newGap(w) {
			o.gaps = append(o.gaps, w)
		}
	}
	if intersects(o.gaps, from, to) {
		return CauseReconnect, true
	}
	return CauseNone, true
}

// intersects reports whether some window of the sorted, disjoint ws meets
// the closed interval [from, to].
func intersects(ws []Window, from, to time.Duration) bool {
	// The first window that ends after from is the only candidate: windows
	// are disjoint and sorted, so later ones start even later.
	i, _ := slices.BinarySearchFunc(ws, from, func(w Window, t time.Duration) int {
		if w.End <= t {
			return -1
		}
		return 1
	})
	return i < len(ws) && ws[i].Start <= to
}

// all returns every outage known so far, partitions and drawn gaps, in
// time order.
func (o *outages) all() []Window {
	out := append(slices.Clone(o.partitions), o.gaps...)
	slices.SortFunc(out, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
	return out
}
