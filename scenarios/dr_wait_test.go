package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// DR-8's workload, after the seed: 120 s of points per key (400,000 per
// key, one every 300 µs, up to 5 ms out of order), a flush that drains the
// older half, and a recorder at 20,000 records/s.
const (
	drWaitKeys     = 4
	drWaitPerKey   = 400_000
	drWaitSpacing  = 300 * time.Microsecond
	drWaitJitter   = 5 * time.Millisecond
	drWaitInterval = 50 * time.Microsecond // 20,000 records/s
	drWaitDrains   = 5                     // per design and attempt; the median counts
	drWaitAttempts = 3                     // a measurement a loaded machine spoiled is retried
	drWaitBoundNew = 600 * time.Microsecond
	drWaitRatio    = 100.0
)

// drTimedRT times the write lock of the locks it creates: the longest wait
// to acquire it and the longest hold, since the last reset. A recorder that
// arrives just as a hold begins waits the whole hold, so the longest hold is
// the longest wait a recorder can see; the sampled wait is what one saw.
type drTimedRT struct {
	rt.Runtime
	maxWait, maxHold atomic.Int64 // ns
}

type drTimedRW struct {
	rt.RWMutex
	t        *drTimedRT
	acquired *time.Time // written and read only by the holder of the write lock
}

func (t *drTimedRT) NewRWMutex(name string) rt.RWMutex {
	return drTimedRW{t.Runtime.NewRWMutex(name), t, new(time.Time)}
}

func (t *drTimedRT) reset() {
	t.maxWait.Store(0)
	t.maxHold.Store(0)
}

func drStoreMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

func (m drTimedRW) Lock() {
	t0 := m.t.Now()
	m.RWMutex.Lock()
	*m.acquired = m.t.Now()
	drStoreMax(&m.t.maxWait, int64(m.acquired.Sub(t0)))
}

func (m drTimedRW) Unlock() {
	drStoreMax(&m.t.maxHold, int64(m.t.Now().Sub(*m.acquired)))
	m.RWMutex.Unlock()
}

// drWaitDesign is a collector design under DR-8's measurement.
type drWaitDesign struct {
	name   string
	r      *drTimedRT
	record func(p model.Point)
	drain  func(cutoff int64)
}

func drWaitDesigns() []*drWaitDesign {
	oldRT, newRT := &drTimedRT{Runtime: rt.Real()}, &drTimedRT{Runtime: rt.Real()}
	old := model.NewOldCollector(oldRT)
	c, err := collector.New(newRT, collector.Config{MaxBufferedPoints: 1 << 30})
	if err != nil {
		panic(err) // a valid config
	}
	return []*drWaitDesign{
		{name: "old (partition under the lock)", r: oldRT,
			record: func(p model.Point) { old.Record(p.Key, p.TS, p.Value) },
			drain:  func(cutoff int64) { old.Drain(cutoff) }},
		{name: "new (two swaps)", r: newRT,
			record: func(p model.Point) { _ = c.Record(p.Key, time.Unix(0, p.TS).UTC(), p.Value) },
			drain: func(cutoff int64) {
				if _, _, err := c.Drain(context.Background(), time.Unix(0, cutoff).UTC()); err != nil {
					panic(err)
				}
			}},
	}
}

// drWaitOnce drains d once while a recorder records young points at
// 20,000/s from 1 ms before the drain to 1 ms after it, and returns, for
// that window, the longest write-lock wait the recorder saw and the longest
// write-lock hold.
func drWaitOnce(d *drWaitDesign, cutoff int64, seq *int64) (wait, hold time.Duration) {
	r := d.r
	ctx := context.Background()
	var stop atomic.Bool
	started, finished := r.NewEvent("recorder.started"), r.NewEvent("recorder.finished")
	r.Go("dr8-recorder", func() {
		defer finished.Set()
		next := r.Now()
		for !stop.Load() {
			if r.Now().Before(next) {
				r.Yield() // paced by spinning: timers are too coarse for 50 µs
				continue
			}
			*seq++
			d.record(model.Point{Key: "k0", TS: cutoff + *seq, Value: 1})
			started.Set()
			next = next.Add(drWaitInterval)
		}
	})
	// Collect now, so that no collection starts during the drain: GC work
	// on the recorder's processor would hide waits, GC assists inside a
	// hold would add to them.
	runtime.GC()
	_ = started.Wait(ctx)
	_ = r.Sleep(ctx, time.Millisecond)
	r.reset()
	d.drain(cutoff)
	_ = r.Sleep(ctx, time.Millisecond)
	wait, hold = time.Duration(r.maxWait.Load()), time.Duration(r.maxHold.Load())
	stop.Store(true)
	_ = finished.Wait(ctx)
	return wait, hold
}

func drMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestDR8_FlushLockWait is DR-8 with real goroutines: the longest wait of a
// concurrent recorder (20,000 records/s) for the metrics write lock during
// a flush drain, at 400,000 buffered points per key, for the old design
// (model.OldCollector: the partition runs under the lock) and the new one,
// in the same run, drains interleaved. The figure per design is the median
// over drWaitDrains drains of the per-drain longest wait. The claim holds
// when the new figure is ≤ 0.6 ms and old/new ≥ 100 (the seed: 158–382 ms
// down to ≤ 0.6 ms at 10–20k records/s with about 32 million points; this
// run buffers 1.6 million, so its old figure is smaller). A measurement that
// misses is repeated up to drWaitAttempts times, and fails if none meets the
// bound: a loaded machine can make it inconclusive, never pass it.
func TestDR8_FlushLockWait(t *testing.T) {
	if testing.Short() {
		t.Skip("DR-8 buffers 1.6 million points per design")
	}
	start := time.Now()
	rnd := rand.New(rand.NewPCG(8, 8))
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var pts []model.Point
	for i := range drWaitPerKey {
		for k := range drWaitKeys {
			ts := base + int64(i)*int64(drWaitSpacing) + rnd.Int64N(2*int64(drWaitJitter)+1) - int64(drWaitJitter)
			pts = append(pts, model.Point{Key: fmt.Sprint("k", k), TS: ts, Value: float64(i)})
		}
	}
	cutoff := base + drWaitPerKey/2*int64(drWaitSpacing)
	older, _ := model.Partition(pts, cutoff)
	designs := drWaitDesigns()
	for _, d := range designs {
		for _, p := range pts {
			d.record(p)
		}
	}
	var oldMed, newMed time.Duration
	var worst, waits, holds [2][]time.Duration
	ok, attempts := false, 0
	seq := int64(0)
	for attempts < drWaitAttempts && !ok {
		attempts++
		worst, waits, holds = [2][]time.Duration{}, [2][]time.Duration{}, [2][]time.Duration{}
		for range drWaitDrains {
			for i, d := range designs {
				w, h := drWaitOnce(d, cutoff, &seq)
				waits[i], holds[i], worst[i] = append(waits[i], w), append(holds[i], h), append(worst[i], max(w, h))
				for _, p := range older { // the same buffered amount for every drain
					d.record(p)
				}
			}
		}
		oldMed, newMed = drMedian(worst[0]), drMedian(worst[1])
		ok = newMed <= drWaitBoundNew && float64(oldMed) >= drWaitRatio*float64(max(newMed, time.Nanosecond))
		t.Logf("DR-8 attempt %d: per drain, old: waited %v, held %v; new: waited %v, held %v", attempts, waits[0], holds[0], waits[1], holds[1])
	}
	ratio := float64(oldMed) / float64(max(newMed, time.Nanosecond))
	if !ok {
		t.Errorf("DR-8: after %d attempts the new drain's median longest lock wait is %v (bound %v) and old/new is %.0fx (bound %.0fx)",
			attempts, newMed, drWaitBoundNew, ratio, drWaitRatio)
	}
	claims.Report(t, claims.Record{
		ID: "DR-8", Verdict: claims.Verdict(ok),
		Measured: fmt.Sprintf("longest wait for the write lock during a flush (the longer of the wait a 20,000 records/s recorder saw and the drain's longest hold), median of %d drains at %d keys x 400,000 points: old %v, new %v: %.0fx (recorder saw up to %v old, %v new; attempt %d of %d; %v wall)",
			drWaitDrains, drWaitKeys, oldMed.Round(time.Microsecond), newMed, ratio, slices.Max(waits[0]).Round(time.Microsecond), slices.Max(waits[1]),
			attempts, drWaitAttempts, time.Since(start).Round(time.Millisecond)),
		Bound: fmt.Sprintf("new ≤ %v and old/new ≥ %.0fx", drWaitBoundNew, drWaitRatio), Value: float64(newMed) / float64(time.Millisecond), Unit: "ms", Seeds: 1,
		Witness: fmt.Sprintf("per drain: old waited %v, held %v; new waited %v, held %v", waits[0], holds[0], waits[1], holds[1]),
		Note:    "rt.Real(), same run, drains interleaved, a GC before each; the seed measured 158–382 ms → ≤ 0.6 ms with ~32 million buffered points on a 16 vCPU host",
	})
}
