package collector_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/model/baseline"
)

// The benchmark workload: 4 keys with 400,000 buffered points each, nearly
// in order; every drain takes the older half. After each drain the drained
// half is recorded again (timer stopped), so every timed drain sees the same
// amount of buffered data.
const (
	benchKeys   = 4
	benchPerKey = 400_000
)

// drainer is what both designs offer the benchmarks.
type drainer interface {
	record(p model.Point)
	// drain returns how long the write lock was held in total.
	drain(cutoff int64) time.Duration
}

type newDesign struct{ c *collector.Collector }

func (d newDesign) record(p model.Point) { _ = d.c.Record(p.Key, at(p.TS), p.Value) }
func (d newDesign) drain(cutoff int64) time.Duration {
	_, st, err := d.c.Drain(context.Background(), at(cutoff))
	if err != nil || st.WriteLocks != 2 {
		panic(fmt.Sprintf("drain: %v %+v", err, st))
	}
	return st.LockHeld
}

type oldDesign struct{ c *baseline.OldCollector }

func (d oldDesign) record(p model.Point) { d.c.Record(p.Key, p.TS, p.Value) }
func (d oldDesign) drain(cutoff int64) time.Duration {
	_, held := d.c.Drain(cutoff)
	return held
}

func designs(b *testing.B, r rt.Runtime) map[string]func() drainer {
	return map[string]func() drainer{
		"old": func() drainer { return oldDesign{baseline.NewOldCollector(r)} },
		"new": func() drainer {
			c, err := collector.New(r, collector.Config{})
			if err != nil {
				b.Fatal(err)
			}
			return newDesign{c}
		},
	}
}

func benchData() (pts []model.Point, older []model.Point, cutoff int64) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("op-%d.latency", i)
	}
	pts = buffered(keys, benchPerKey, base)
	cutoff = base + benchPerKey/2
	older, _ = model.Partition(pts, cutoff)
	return pts, older, cutoff
}

// BenchmarkDrainLockHold measures how long one drain holds the write lock
// with 400,000 buffered points per key (DR-2, DR-8): old = the partition
// under the lock (baseline.OldCollector), new = the two-swap drain. The figure
// to compare is lock-ns/drain; ns/op is the whole drain, lock or not.
func BenchmarkDrainLockHold(b *testing.B) {
	pts, older, cutoff := benchData()
	for _, name := range []string{"old", "new"} {
		b.Run(name+"-400k", func(b *testing.B) {
			d := designs(b, rt.Real())[name]()
			for _, p := range pts {
				d.record(p)
			}
			var held time.Duration
			b.ResetTimer()
			for range b.N {
				held += d.drain(cutoff)
				b.StopTimer()
				for _, p := range older {
					d.record(p)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(held.Nanoseconds())/float64(b.N), "lock-ns/drain")
		})
	}
}

// timedRT times every write-lock acquisition of the locks it creates, so
// the recorder-wait benchmark can separate waiting for the lock from the
// rest of a record (an allocation's GC assist, an OS preemption).
type timedRT struct {
	rt.Runtime
	maxWait stats.Gauge // nanoseconds
}

type timedRWMutex struct {
	rt.RWMutex
	t *timedRT
}

func (t *timedRT) NewRWMutex(name string) rt.RWMutex {
	return timedRWMutex{t.Runtime.NewRWMutex(name), t}
}

func (m timedRWMutex) Lock() {
	t0 := m.t.Now()
	m.RWMutex.Lock()
	m.t.maxWait.SetMax(int64(m.t.Now().Sub(t0)))
}

// BenchmarkRecorderWait measures how long a concurrent recorder waits while a
// drain runs, with 400,000 buffered points per key (DR-8). A recorder
// goroutine records at up to 20k points/s (one record every 50 µs, paced by
// spinning). It runs from 1 ms before the drain starts until 1 ms after it
// ends. Metrics, over the b.N drains: lockwait = the longest wait to acquire
// the write lock during a drain (the seed's measure), record = the longest
// whole Record call; max-* is the worst drain, p50-* the median drain.
func BenchmarkRecorderWait(b *testing.B) {
	pts, older, cutoff := benchData()
	for _, name := range []string{"old", "new"} {
		b.Run(name+"-400k", func(b *testing.B) {
			r := &timedRT{Runtime: rt.Real()}
			d := designs(b, r)[name]()
			for _, p := range pts {
				d.record(p)
			}
			var waits, longests []time.Duration
			var records int64
			b.ResetTimer()
			for range b.N {
				var stop atomic.Bool
				var longest time.Duration
				var n int64
				finished := r.NewEvent("recorder.finished")
				started := r.NewEvent("recorder.started")
				r.maxWait.Set(0)
				r.Go("recorder", func() {
					defer finished.Set()
					next := r.Now()
					for i := 0; !stop.Load(); i++ {
						// Paced by spinning, not by Sleep: timer sleeps of
						// 50 µs are too coarse to reach 20k/s.
						if r.Now().Before(next) {
							r.Yield()
							continue
						}
						p := model.Point{Key: "op-0.latency", TS: cutoff + int64(i), Value: 1}
						t0 := r.Now()
						d.record(p)
						longest = max(longest, r.Now().Sub(t0))
						n++
						started.Set()
						next = t0.Add(50 * time.Microsecond)
					}
				})
				_ = started.Wait(context.Background())
				_ = r.Sleep(context.Background(), time.Millisecond)
				d.drain(cutoff)
				_ = r.Sleep(context.Background(), time.Millisecond)
				stop.Store(true)
				_ = finished.Wait(context.Background())
				waits = append(waits, time.Duration(r.maxWait.Value()))
				longests = append(longests, longest)
				records += n
				b.StopTimer()
				for _, p := range older {
					d.record(p)
				}
				b.StartTimer()
			}
			slices.Sort(waits)
			slices.Sort(longests)
			b.ReportMetric(float64(waits[len(waits)-1].Nanoseconds()), "max-lockwait-ns")
			b.ReportMetric(float64(waits[len(waits)/2].Nanoseconds()), "p50-lockwait-ns")
			b.ReportMetric(float64(longests[len(longests)-1].Nanoseconds()), "max-record-ns")
			b.ReportMetric(float64(longests[len(longests)/2].Nanoseconds()), "p50-record-ns")
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
