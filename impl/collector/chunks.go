package collector

import "fmt"

// ChunkPoints is the most points one chunk holds (DR-6, the seed's 1,024).
// The bound is what makes a record cheap under the write lock: appending
// reallocates at most the tail chunk, never the whole history of a key.
const ChunkPoints = 1024

// firstChunkCap is the initial capacity of the first chunk of a key, so
// that a key with a handful of points does not pin 16 KiB. Later chunks of a
// key that already filled one start at ChunkPoints.
const firstChunkCap = 16

// Point is one recorded value. TS is the instant of the value in Unix
// nanoseconds.
type Point struct {
	TS    int64
	Value float64
}

// chunk is a run of at most ChunkPoints points of one key in recorded
// order, with the oldest and newest timestamp among them. The bounds let the
// split decide for a whole chunk at once (DR-6).
type chunk struct {
	pts          []Point
	minTS, maxTS int64
	next         *chunk
}

// series is the buffered points of one key: a singly linked list of chunks in
// recorded order. It is a list, not a slice of chunks, so that the drain's
// put-back joins two series in O(1) under the write lock (DR-2). A slice
// would copy chunk headers proportional to what is buffered.
//
// series is a pure data structure: it never locks and never reads a clock.
type series struct {
	head, tail *chunk
	points     int64
	chunks     int64
}

// drainedTS is THE cutoff rule: a point is drained iff it is older than the
// cutoff; a point exactly at the cutoff is kept. Every decision of the split,
// for whole chunks and for single points, goes through it.
func drainedTS(ts, cutoff int64) bool {
	return ts < cutoff // DR-1: drained iff TS < cutoff
}

// add appends p at the end of s. It reallocates at most the tail chunk
// (DR-6): a full chunk is never grown, a new one is linked instead.
func (s *series) add(p Point) {
	t := s.tail
	if t == nil || len(t.pts) >= ChunkPoints { // DR-6: a chunk never holds more than ChunkPoints
		capacity := firstChunkCap
		if s.head != nil {
			capacity = ChunkPoints
		}
		t = &chunk{pts: make([]Point, 0, capacity), minTS: p.TS, maxTS: p.TS}
		s.link(t)
	}
	if n := len(t.pts); n == cap(t.pts) && n < ChunkPoints {
		// Grow this chunk only, by doubling up to ChunkPoints: the one
		// reallocation a record may cause.
		grown := make([]Point, n, min(2*n, ChunkPoints))
		copy(grown, t.pts)
		t.pts = grown
	}
	t.pts = append(t.pts, p)
	t.minTS, t.maxTS = min(t.minTS, p.TS), max(t.maxTS, p.TS) // DR-6: the split trusts these bounds
	s.points++
}

// link appends chunk c (which must not be linked anywhere) at the end of s.
func (s *series) link(c *chunk) {
	c.next = nil
	if s.tail == nil {
		s.head = c
	} else {
		s.tail.next = c
	}
	s.tail = c
	s.points += int64(len(c.pts))
	s.chunks++
}

// join returns a followed by b, relinking b's chunks after a's in O(1): no
// point is copied. Either may be nil. Both arguments are consumed.
func join(a, b *series) *series {
	switch {
	case a == nil || a.head == nil:
		return b
	case b == nil || b.head == nil:
		return a
	}
	a.tail.next = b.head
	a.tail = b.tail
	a.points += b.points
	a.chunks += b.chunks
	*b = series{}
	return a
}

// splitStats counts the work of one split, for DR-2 and DR-6 accounting.
type splitStats struct {
	chunksMoved  int64 // whole chunks relinked without copying
	chunksSplit  int64 // chunks that straddled the cutoff
	pointsMoved  int64 // every point whose chunk was relinked or copied
	pointsCopied int64 // points copied out of straddling chunks
}

func (a *splitStats) add(b splitStats) {
	a.chunksMoved += b.chunksMoved
	a.chunksSplit += b.chunksSplit
	a.pointsMoved += b.pointsMoved
	a.pointsCopied += b.pointsCopied
}

// split consumes s and divides its points by cutoff into drained
// (drainedTS) and kept, each in recorded order (DR-1). A chunk entirely on
// one side is relinked whole; only a chunk straddling the cutoff is copied
// into two new chunks (DR-6).
func (s *series) split(cutoff int64) (drained, kept series, st splitStats) {
	// The walk is bounded by s.chunks: a corrupted list cannot loop forever.
	c := s.head
	for i := int64(0); c != nil && i < s.chunks; i++ {
		next := c.next
		n := int64(len(c.pts))
		st.pointsMoved += n
		switch {
		case drainedTS(c.maxTS, cutoff):
			drained.link(c)
			st.chunksMoved++
		case !drainedTS(c.minTS, cutoff):
			kept.link(c)
			st.chunksMoved++
		default:
			d, k := splitChunk(c, cutoff)
			drained.link(d)
			kept.link(k)
			st.chunksSplit++
			st.pointsCopied += n
		}
		c = next
	}
	*s = series{}
	return drained, kept, st
}

// splitChunk copies the points of a chunk that straddles cutoff into two
// new, non-empty chunks with their own bounds.
func splitChunk(c *chunk, cutoff int64) (drained, kept *chunk) {
	nd := 0
	for _, p := range c.pts {
		if drainedTS(p.TS, cutoff) {
			nd++
		}
	}
	drained = &chunk{pts: make([]Point, 0, nd)}
	kept = &chunk{pts: make([]Point, 0, len(c.pts)-nd)}
	for _, p := range c.pts {
		if drainedTS(p.TS, cutoff) {
			drained.pts = append(drained.pts, p)
		} else {
			kept.pts = append(kept.pts, p)
		}
	}
	drained.minTS, drained.maxTS = bounds(drained.pts)
	kept.minTS, kept.maxTS = bounds(kept.pts)
	return drained, kept
}

// bounds returns the smallest and largest timestamp of pts, which must not
// be empty.
func bounds(pts []Point) (lo, hi int64) {
	lo, hi = pts[0].TS, pts[0].TS
	for _, p := range pts[1:] {
		lo, hi = min(lo, p.TS), max(hi, p.TS)
	}
	return lo, hi
}

// appendTo appends the points of s in recorded order to dst.
func (s *series) appendTo(dst []Point) []Point {
	for c := s.head; c != nil; c = c.next {
		dst = append(dst, c.pts...)
	}
	return dst
}

// appendRange appends the points of s with from <= TS < to, in recorded
// order, skipping chunks whose bounds lie outside the range.
func (s *series) appendRange(dst []Point, from, to int64) []Point {
	for c := s.head; c != nil; c = c.next {
		if c.maxTS < from || c.minTS >= to {
			continue
		}
		for _, p := range c.pts {
			if from <= p.TS && p.TS < to {
				dst = append(dst, p)
			}
		}
	}
	return dst
}

// check verifies the structural invariants of s (DR-6): every chunk holds
// between 1 and ChunkPoints points, its bounds are its true oldest and
// newest timestamps, and the counts and the tail pointer agree with the
// list.
func (s *series) check() error {
	var points, chunks int64
	var last *chunk
	for c := s.head; c != nil; c = c.next {
		if chunks > s.chunks {
			return fmt.Errorf("chunk list longer than its count %d (a cycle?)", s.chunks)
		}
		chunks++
		if len(c.pts) == 0 || len(c.pts) > ChunkPoints {
			return fmt.Errorf("chunk %d holds %d points, want 1..%d", chunks-1, len(c.pts), ChunkPoints)
		}
		if lo, hi := bounds(c.pts); lo != c.minTS || hi != c.maxTS {
			return fmt.Errorf("chunk %d bounds [%d,%d], its points span [%d,%d]", chunks-1, c.minTS, c.maxTS, lo, hi)
		}
		points += int64(len(c.pts))
		last = c
	}
	if chunks != s.chunks || points != s.points || last != s.tail {
		return fmt.Errorf("series counts %d chunks/%d points, list has %d/%d (tail ok: %v)",
			s.chunks, s.points, chunks, points, last == s.tail)
	}
	return nil
}
