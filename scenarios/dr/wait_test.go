package dr

// DR-8 is a wall-clock measurement with real goroutines: it runs no
// simulated task, and every line that reads or waits on real time carries a
// //windtunnel:realtime mark for the determinism scan.
//
//windtunnel:allow sync/atomic DR-8's recorder and drain run on real goroutines (rt.Real), outside every simulated task

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
	"github.com/windtunnel/windtunnel/model/baseline"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

// DR-8's workload, after the source text: 120 s of points per key (400,000
// per key, one every 300 µs, up to 5 ms out of order), a flush that drains
// the older half, and a recorder at 20,000 records/s.
const (
	waitKeys     = 4
	waitPerKey   = 400_000
	waitSpacing  = 300 * time.Microsecond
	waitJitter   = 5 * time.Millisecond
	waitInterval = 50 * time.Microsecond // 20,000 records/s
	waitDrains   = 5                     // per design and attempt; the median counts
	waitAttempts = 3                     // a measurement a loaded machine spoiled is retried
)

// timedRT times the write lock of the locks it creates: the longest wait
// to acquire it and the longest hold, since the last reset. A recorder that
// arrives just as a hold begins waits the whole hold, so the longest hold is
// the longest wait a recorder can see; the sampled wait is what one saw.
//
// It times only while armed: waitOnce arms it before its recorder starts
// and disarms it after the recorder has stopped, when no goroutine holds or
// waits for a lock, so every acquisition of the measured window is timed
// exactly as before. Filling the collectors (1.6 million records per
// design, and the drained half again after every drain) is not measured,
// and timing it read the wall clock three times a record: 1.9 of the
// test's 5.0 s, in the audit's timed phase, where the test runs alone.
type timedRT struct {
	rt.Runtime
	armed            atomic.Bool
	maxWait, maxHold atomic.Int64 // ns
}

type timedRW struct {
	rt.RWMutex
	t        *timedRT
	acquired *time.Time // written and read only by the holder of the write lock
}

func (t *timedRT) NewRWMutex(name string) rt.RWMutex {
	return timedRW{t.Runtime.NewRWMutex(name), t, new(time.Time)}
}

func (t *timedRT) reset() {
	t.maxWait.Store(0)
	t.maxHold.Store(0)
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

func (m timedRW) Lock() {
	if !m.t.armed.Load() {
		m.RWMutex.Lock()
		*m.acquired = time.Time{} // not timed: Unlock does not time the hold either
		return
	}
	t0 := m.t.Now() //windtunnel:realtime the wait, on the wall clock
	m.RWMutex.Lock()
	*m.acquired = m.t.Now() //windtunnel:realtime
	storeMax(&m.t.maxWait, int64(m.acquired.Sub(t0)))
}

func (m timedRW) Unlock() {
	if !m.acquired.IsZero() {
		storeMax(&m.t.maxHold, int64(m.t.Now().Sub(*m.acquired))) //windtunnel:realtime the hold, on the wall clock
	}
	m.RWMutex.Unlock()
}

// waitDesign is a collector design under DR-8's measurement.
type waitDesign struct {
	name   string
	r      *timedRT
	record func(p model.Point)
	drain  func(cutoff int64)
}

func waitDesigns() []*waitDesign {
	oldRT, newRT := &timedRT{Runtime: rt.Real()}, &timedRT{Runtime: rt.Real()} //windtunnel:realtime
	old := baseline.NewOldCollector(oldRT)
	c, err := collector.New(newRT, collector.Config{MaxBufferedPoints: 1 << 30})
	if err != nil {
		panic(err) // a valid config
	}
	return []*waitDesign{
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

// waitOnce drains d once while a recorder records young points at
// 20,000/s from 1 ms before the drain to 1 ms after it, and returns, for
// that window, the longest write-lock wait the recorder saw and the longest
// write-lock hold.
func waitOnce(d *waitDesign, cutoff int64, seq *int64) (wait, hold time.Duration) {
	r := d.r
	ctx := context.Background()
	r.armed.Store(true) // no goroutine holds or waits for a lock here
	defer r.armed.Store(false)
	var stop atomic.Bool
	started, finished := r.NewEvent("recorder.started"), r.NewEvent("recorder.finished")
	r.Go("dr8-recorder", func() {
		defer finished.Set()
		next := r.Now() //windtunnel:realtime
		for !stop.Load() {
			if r.Now().Before(next) { //windtunnel:realtime
				r.Yield() // paced by spinning: timers are too coarse for 50 µs
				continue
			}
			*seq++
			d.record(model.Point{Key: "k0", TS: cutoff + *seq, Value: 1})
			started.Set()
			next = next.Add(waitInterval)
		}
	})
	// Collect now, so that no collection starts during the drain: GC work
	// on the recorder's processor would hide waits, GC assists inside a
	// hold would add to them.
	runtime.GC()
	_ = started.Wait(ctx)
	_ = r.Sleep(ctx, time.Millisecond) //windtunnel:realtime
	r.reset()
	d.drain(cutoff)
	_ = r.Sleep(ctx, time.Millisecond) //windtunnel:realtime
	wait, hold = time.Duration(r.maxWait.Load()), time.Duration(r.maxHold.Load())
	stop.Store(true)
	_ = finished.Wait(ctx)
	return wait, hold
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestDR8_FlushLockWait checks DR-8 with real goroutines. It measures the
// longest wait of a concurrent recorder (20,000 records/s) for the metrics
// write lock during a flush drain, at 400,000 buffered points per key. It
// does so for the old design (baseline.OldCollector: the partition runs
// under the lock) and the new one, in the same run, drains interleaved. The
// figure per design is the median over waitDrains drains of the per-drain
// longest wait. The claim holds when the new figure is within the table's
// lock wait (the source text: 158–382 ms down to ≤ 0.6 ms at 10–20k
// records/s with about 32 million points) and old/new reaches the table's
// ratio (this run buffers 1.6 million, so its old figure is smaller). A
// measurement that misses is repeated up to waitAttempts times, and fails if
// none meets the bound: a loaded machine can make it inconclusive, never
// pass it.
func TestDR8_FlushLockWait(t *testing.T) {
	if testing.Short() {
		t.Skip("DR-8 buffers 1.6 million points per design")
	}
	bound, ratioBound := claims.Get("DR-8", "lock wait"), claims.Get("DR-8", "old/new lock wait")
	start := time.Now() //windtunnel:realtime
	rnd := rand.New(rand.NewPCG(8, 8))
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var pts []model.Point
	for i := range waitPerKey {
		for k := range waitKeys {
			ts := base + int64(i)*int64(waitSpacing) + rnd.Int64N(2*int64(waitJitter)+1) - int64(waitJitter)
			pts = append(pts, model.Point{Key: fmt.Sprint("k", k), TS: ts, Value: float64(i)})
		}
	}
	cutoff := base + waitPerKey/2*int64(waitSpacing)
	older, _ := model.Partition(pts, cutoff)
	designs := waitDesigns()
	for _, d := range designs {
		for _, p := range pts {
			d.record(p)
		}
	}
	var oldMed, newMed time.Duration
	var worst, waits, holds [2][]time.Duration
	ok, attempts := false, 0
	seq := int64(0)
	ratio := 0.0
	for attempts < waitAttempts && !ok {
		attempts++
		worst, waits, holds = [2][]time.Duration{}, [2][]time.Duration{}, [2][]time.Duration{}
		for range waitDrains {
			for i, d := range designs {
				w, h := waitOnce(d, cutoff, &seq)
				waits[i], holds[i], worst[i] = append(waits[i], w), append(holds[i], h), append(worst[i], max(w, h))
				for _, p := range older { // the same buffered amount for every drain
					d.record(p)
				}
			}
		}
		oldMed, newMed = median(worst[0]), median(worst[1])
		ratio = float64(oldMed) / float64(max(newMed, time.Nanosecond))
		ok = bound.Holds(newMed.Seconds()) && ratioBound.Holds(ratio)
		t.Logf("DR-8 attempt %d: per drain, old: waited %v, held %v; new: waited %v, held %v", attempts, waits[0], holds[0], waits[1], holds[1])
	}
	if !ok {
		t.Errorf("DR-8: after %d attempts the new drain's median longest lock wait is %v (bound %s) and old/new is %.0fx (bound %s)",
			attempts, newMed, bound, ratio, ratioBound)
	}
	findings.Report(t, findings.Record{
		ID: "DR-8", Verdict: map[bool]string{true: findings.Holds, false: findings.Violated}[ok],
		Measured: fmt.Sprintf("longest wait for the write lock during a flush (the longer of the wait a 20,000 records/s recorder saw and the drain's longest hold), median of %d drains at %d keys x %d points: old %v, new %v: %.0fx (recorder saw up to %v old, %v new; attempt %d of %d; %v wall)",
			waitDrains, waitKeys, waitPerKey, oldMed.Round(time.Microsecond), newMed, ratio, slices.Max(waits[0]).Round(time.Microsecond), slices.Max(waits[1]),
			attempts, waitAttempts, time.Since(start).Round(time.Millisecond)), //windtunnel:realtime
		Bound: fmt.Sprintf("new %s and old/new %s", bound, ratioBound), BoundName: bound.Name, BoundValue: bound.Value, Unit: string(bound.Unit),
		Value: newMed.Seconds(), Seeds: 1,
		Witness: fmt.Sprintf("per drain: old waited %v, held %v; new waited %v, held %v", waits[0], holds[0], waits[1], holds[1]),
		Note:    "rt.Real(), same run, drains interleaved, a GC before each; the source text measured 158–382 ms → ≤ 0.6 ms with ~32 million buffered points on a 16 vCPU host",
	})
}
