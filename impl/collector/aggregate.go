package collector

import (
	"slices"
	"time"
)

// Bucket is the aggregate of the drained points of one key whose timestamps
// fall in [Start, Start+width), the unit a flush writes to the store.
type Bucket struct {
	Key   string
	Start time.Time // UTC, a multiple of the bucket width since the Unix epoch
	Count int64
	// Sum adds the values in recorded order, so two equal drains give
	// bit-identical sums.
	Sum      float64
	Min, Max float64
}

// Batch is the drained points of one key in recorded order.
type Batch struct {
	Key    string
	Points []Point
}

// keyed is one key's drained series, before it is aggregated or flattened.
type keyed struct {
	key string
	s   series
}

// floorTo returns the start of the width-wide bucket holding ts. Width is
// positive and ts is inside the accepted range, so nothing overflows.
func floorTo(ts, width int64) int64 {
	m := ts % width
	if m < 0 {
		m += width
	}
	return ts - m
}

// aggregate sums the drained series into buckets per key and bucket start,
// sorted by key and then start (DR-1). The key string is shared by the
// buckets of its key: no per-point work touches it, which is the seed's "a
// drained point no longer clones its key".
func aggregate(drained []keyed, width int64) []Bucket {
	var out []Bucket
	// index maps a bucket start to its position in out for the current key.
	// It is only looked up and cleared, never ranged over.
	index := make(map[int64]int)
	for _, d := range drained {
		first := len(out)
		clear(index)
		for c := d.s.head; c != nil; c = c.next {
			for _, p := range c.pts {
				start := floorTo(p.TS, width)
				i, ok := index[start]
				if !ok {
					i = len(out)
					index[start] = i
					out = append(out, Bucket{Key: d.key, Start: time.Unix(0, start).UTC(), Min: p.Value, Max: p.Value})
				}
				b := &out[i]
				b.Count++
				b.Sum += p.Value
				b.Min, b.Max = min(b.Min, p.Value), max(b.Max, p.Value)
			}
		}
		// Points arrive out of order, so buckets were opened out of order.
		slices.SortFunc(out[first:], func(a, b Bucket) int { return a.Start.Compare(b.Start) })
	}
	return out
}

// flatten copies the drained series into batches, sorted by key.
func flatten(drained []keyed) []Batch {
	out := make([]Batch, 0, len(drained))
	for _, d := range drained {
		out = append(out, Batch{Key: d.key, Points: d.s.appendTo(make([]Point, 0, d.s.points))})
	}
	return out
}
