package baseline

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
)

// OldCollector is the metrics collector as it was before the change in
// ../shared/seeds/metrics-drain.txt. It is the baseline for DR-8 (its lock
// waits) and DR-11 (its flush output). It keeps one growing slice of points
// per key. Its drain and prune partition every buffered point into new slices
// while they hold the write lock that every record needs. Its answers are
// those of the plain partition; only its locking and its copying differ from
// impl/collector.
type OldCollector struct {
	r    rt.Runtime
	mu   rt.RWMutex
	data map[string][]oldPoint
}

type oldPoint struct {
	TS    int64
	Value float64
}

// NewOldCollector returns an empty baseline collector on r.
func NewOldCollector(r rt.Runtime) *OldCollector {
	return &OldCollector{r: r, mu: r.NewRWMutex("oldcollector.data"), data: make(map[string][]oldPoint)}
}

// Record appends a point under the write lock. Growing the key's slice may
// copy every point of the key, as the old design did.
func (o *OldCollector) Record(key string, ts int64, value float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.data[key] = append(o.data[key], oldPoint{TS: ts, Value: value})
}

// Len returns the number of buffered points.
func (o *OldCollector) Len() int64 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	var n int64
	for _, pts := range o.data { //windtunnel:unordered a sum
		n += int64(len(pts))
	}
	return n
}

// Drain takes the points with TS < cutoff, grouped by key in key order and
// in recorded order per key, and returns how long it held the write lock,
// on the runtime's clock. The whole partition runs under the lock: that is
// the stall the change removed.
func (o *OldCollector) Drain(cutoff int64) (drained []model.Point, held time.Duration) {
	type batch struct {
		key string
		pts []oldPoint
	}
	var batches []batch
	o.mu.Lock()
	start := o.r.Now()
	keys := make([]string, 0, len(o.data))
	for k := range o.data { //windtunnel:unordered sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var d, kept []oldPoint
		for _, p := range o.data[k] {
			if model.Drained(p.TS, cutoff) {
				d = append(d, p)
			} else {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			delete(o.data, k)
		} else {
			o.data[k] = kept
		}
		if len(d) > 0 {
			batches = append(batches, batch{key: k, pts: d})
		}
	}
	held = o.r.Now().Sub(start)
	o.mu.Unlock()
	// Outside the lock, so sized exactly: DR-8 measures only the section
	// above, and DR-11's flushes drain up to 1.2 million points here.
	n := 0
	for _, b := range batches {
		n += len(b.pts)
	}
	if n > 0 {
		drained = make([]model.Point, 0, n)
	}
	for _, b := range batches {
		for _, p := range b.pts {
			drained = append(drained, model.Point{Key: b.key, TS: p.TS, Value: p.Value})
		}
	}
	return drained, held
}

// Prune discards the points with TS < cutoff under the write lock, point
// by point, and returns how many it discarded.
func (o *OldCollector) Prune(cutoff int64) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n int64
	keys := make([]string, 0, len(o.data))
	for k := range o.data { //windtunnel:unordered sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var kept []oldPoint
		for _, p := range o.data[k] {
			if model.Drained(p.TS, cutoff) {
				n++
			} else {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			delete(o.data, k)
		} else {
			o.data[k] = kept
		}
	}
	return n
}

// Flush is the old flush: it drains the points with TS < cutoff and sums each
// drained point into the bucket of its key and width-wide bucket start. Each
// drained point carries its own copy of its key: the clone per point that the
// change removed. The buckets come out sorted by key and start. Each bucket
// adds its values in drained order, which is recorded order per key.
func (o *OldCollector) Flush(cutoff, width int64) []model.Bucket {
	drained, _ := o.Drain(cutoff)
	type slot struct {
		key   string
		start int64
	}
	sums := map[slot]*model.Bucket{} // looked up only; the order comes from slots
	var slots []slot
	for _, p := range drained {
		key := strings.Clone(p.Key)
		s := slot{key, model.BucketStart(p.TS, width)}
		b := sums[s]
		if b == nil {
			b = &model.Bucket{Key: key, Start: s.start, Min: p.Value, Max: p.Value}
			sums[s] = b
			slots = append(slots, s)
		}
		b.Count++
		b.Sum += p.Value
		b.Min, b.Max = min(b.Min, p.Value), max(b.Max, p.Value)
	}
	slices.SortFunc(slots, func(a, b slot) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.start, b.start)) })
	out := make([]model.Bucket, 0, len(slots))
	for _, s := range slots {
		out = append(out, *sums[s])
	}
	return out
}
