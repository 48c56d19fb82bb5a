package collector

import (
	"context"
	"fmt"
	"time"
)

// DrainStats reports what one drain did. The counts are exact, so tests
// assert them (DR-2, DR-6); the durations are on the runtime's clock.
type DrainStats struct {
	// Buffered is the number of points the first swap took out.
	Buffered int64
	// Drained and Kept divide Buffered by the cutoff.
	Drained, Kept int64
	// Keys is the number of keys the first swap took out.
	Keys int64
	// RecordedDuringSplit and ChunksRecordedDuringSplit count what was
	// recorded between the two swaps: what the put-back relinks (DR-5).
	RecordedDuringSplit, ChunksRecordedDuringSplit int64
	// MovedUnderLock is the number of points relinked or copied while this
	// drain held the write lock (DR-2). It equals RecordedDuringSplit, and
	// does not depend on Buffered.
	MovedUnderLock int64
	// ChunksMoved, ChunksSplit and PointsCopied describe the split (DR-6):
	// whole chunks are relinked, only straddling chunks are copied.
	ChunksMoved, ChunksSplit, PointsCopied int64
	// WriteLocks is the number of write-lock acquisitions by this drain:
	// exactly 2 (DR-2).
	WriteLocks int
	// LockHeld is the total time the drain held the write lock, and
	// MaxLockHeld its longest single hold.
	LockHeld, MaxLockHeld time.Duration
}

// Drain takes every buffered point older than cutoff (TS < cutoff) and
// returns them aggregated into buckets of the configured width, sorted by
// key and bucket start.
//
// The drain takes the write lock twice, each time only to swap a map (DR-2).
// First it swaps the buffered map out. Then it splits it by cutoff without
// the lock. Then it swaps the kept points back in and appends after them the
// chunks recorded meanwhile (DR-5). Records therefore wait for a map swap,
// not for the split (DR-3). The swap, split and put-back of concurrent drains
// run one at a time (DR-4); the aggregation runs after, outside the drain
// mutex.
//
// Drain fails only on a cutoff outside [MinTime, MaxTime) or when ctx ends
// while it waits for another drain. Once it has swapped the map out it always
// completes, so that no point is lost.
func (c *Collector) Drain(ctx context.Context, cutoff time.Time) ([]Bucket, DrainStats, error) {
	drained, st, err := c.drain(ctx, cutoff)
	if err != nil {
		return nil, st, err
	}
	return aggregate(drained, c.width), st, nil
}

// DrainPoints is Drain without the aggregation: it returns the drained
// points themselves, grouped by key in key order, each key's points in
// recorded order.
func (c *Collector) DrainPoints(ctx context.Context, cutoff time.Time) ([]Batch, DrainStats, error) {
	drained, st, err := c.drain(ctx, cutoff)
	if err != nil {
		return nil, st, err
	}
	return flatten(drained), st, nil
}

func (c *Collector) drain(ctx context.Context, cutoff time.Time) ([]keyed, DrainStats, error) {
	var st DrainStats
	cut, err := toTS(cutoff)
	if err != nil {
		return nil, st, err
	}
	var old map[string]*series
	var drained []keyed
	var kept map[string]*series
	if err := c.drainMu.LockContext(ctx); err != nil {
		return nil, st, fmt.Errorf("collector: waiting for another drain: %w", err)
	}
	defer c.drainMu.Unlock() // DR-4: the swap, split and put-back of concurrent drains run one at a time
	c.writeLocked(&st, func() { old = c.swapOut() })
	drained, kept = c.splitAll(old, cut, &st)
	c.writeLocked(&st, func() { c.putBack(kept, &st) })
	c.m.observe(&st)
	return drained, st, nil
}

// writeLocked runs f holding the data write lock. It is the drain's only way
// to take that lock, and it measures at the lock boundary: the acquisition,
// the hold time, and the points moved while the lock was held. Those count
// points moved by f or by anything else that ran meanwhile (DR-2). A split
// moved under the lock would show up here.
func (c *Collector) writeLocked(st *DrainStats, f func()) {
	c.data.Lock()
	defer c.data.Unlock()
	moved := c.pointsMoved.Value()
	start := c.rt.Now()
	f()
	held := c.rt.Now().Sub(start)
	st.WriteLocks++
	st.MovedUnderLock += c.pointsMoved.Value() - moved
	st.LockHeld += held
	st.MaxLockHeld = max(st.MaxLockHeld, held)
}

// swapOut replaces the buffered map with an empty one and returns the old
// one. The caller holds the write lock; no point is touched (DR-2).
func (c *Collector) swapOut() map[string]*series {
	old := c.series
	c.series = make(map[string]*series)
	c.inFlight = c.buffered
	return old
}

// splitAll splits every key of old by cutoff, without the write lock, in
// key order. It yields after each key and once more at the end: those are
// the scheduling points at which a record can run while the split is in
// progress (DR-3), and they keep a long split from hogging a thread.
func (c *Collector) splitAll(old map[string]*series, cutoff int64, st *DrainStats) ([]keyed, map[string]*series) {
	keys := sortedKeys(old)
	drained := make([]keyed, 0, len(keys))
	kept := make(map[string]*series, len(keys))
	var ss splitStats
	for _, key := range keys {
		s := old[key]
		st.Buffered += s.points
		d, k, one := s.split(cutoff)
		// Counted where the points move, so that writeLocked sees these
		// moves if this loop ever runs under the write lock (DR-2).
		c.pointsMoved.Add(one.pointsMoved)
		ss.add(one)
		st.Drained += d.points
		st.Kept += k.points
		if d.points > 0 {
			drained = append(drained, keyed{key: key, s: d})
		}
		if k.points > 0 {
			kept[key] = &k
		}
		c.rt.Yield() // DR-3: the write lock is free here, mid-split
	}
	c.rt.Yield() // DR-3: and here, after the split, before the put-back
	st.Keys = int64(len(keys))
	st.ChunksMoved, st.ChunksSplit, st.PointsCopied = ss.chunksMoved, ss.chunksSplit, ss.pointsCopied
	return drained, kept
}

// putBack installs kept as the buffered map and relinks after each key's
// kept points the chunks recorded since swapOut, in O(1) per key (DR-2,
// DR-5). The caller holds the write lock.
func (c *Collector) putBack(kept map[string]*series, st *DrainStats) {
	//windtunnel:unordered each key is joined on its own, with no scheduling point
	for key, recent := range c.series {
		st.RecordedDuringSplit += recent.points
		st.ChunksRecordedDuringSplit += recent.chunks
		c.pointsMoved.Add(recent.points)
		kept[key] = join(kept[key], recent) // DR-5: points recorded during the split go after the kept ones
	}
	c.series = kept
	c.buffered -= st.Drained
	c.inFlight = 0
	c.m.buffered.Set(c.buffered)
}
