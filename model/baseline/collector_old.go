package model

import (
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// OldCollector is the metrics collector as it was before the change in
// seeds/metrics-drain.txt, kept as the performance baseline for DR-2 and
// DR-8: one growing slice of points per key, and a drain that partitions
// every buffered point into new drained and kept slices while it holds the
// write lock that every record needs. Its answers are those of Partition;
// only its locking differs from impl/collector.
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
func (o *OldCollector) Drain(cutoff int64) (drained []Point, held time.Duration) {
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
			if Drained(p.TS, cutoff) {
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
	for _, b := range batches {
		for _, p := range b.pts {
			drained = append(drained, Point{Key: b.key, TS: p.TS, Value: p.Value})
		}
	}
	return drained, held
}
