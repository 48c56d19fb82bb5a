package collector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// TestStressRealRuntime runs recorders, drains, prunes and queries on real
// goroutines at once (meant for -race). Every recorded point must end up
// drained once, pruned, or still buffered; values are unique, so a
// duplicate or a loss is visible; the chunk invariants hold at the end.
func TestStressRealRuntime(t *testing.T) {
	r := rt.Real()
	c, err := collector.New(r, collector.Config{BucketWidth: time.Second})
	require.NoError(t, err)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const recorders, perRecorder = 4, 20_000
	ctx := context.Background()

	var recording atomic.Int64
	recording.Store(recorders)
	wg := r.NewWaitGroup("stress")
	for w := range recorders {
		wg.Add(1)
		r.Go(fmt.Sprint("recorder-", w), func() {
			defer wg.Done()
			defer recording.Add(-1)
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range perRecorder {
				key := fmt.Sprint("key-", rng.IntN(8))
				ts := base.Add(time.Duration(rng.IntN(100_000)) * time.Millisecond)
				if err := c.Record(key, ts, float64(w*perRecorder+i)); err != nil {
					panic(err)
				}
			}
		})
	}
	var drained [][]collector.Batch
	var pruned, queries atomic.Int64
	wg.Add(3)
	r.Go("drainer", func() {
		defer wg.Done()
		for cut := 0; recording.Load() > 0; cut = (cut + 7) % 100 {
			got, st, err := c.DrainPoints(ctx, base.Add(time.Duration(cut)*time.Second))
			if err != nil || st.WriteLocks != 2 || st.MovedUnderLock != st.RecordedDuringSplit {
				panic(fmt.Sprintf("drain: %v %+v", err, st))
			}
			drained = append(drained, got)
		}
	})
	r.Go("pruner", func() {
		defer wg.Done()
		for recording.Load() > 0 {
			n, err := c.Prune(base.Add(3 * time.Second))
			if err != nil {
				panic(err)
			}
			pruned.Add(n)
			r.Yield()
		}
	})
	r.Go("querier", func() {
		defer wg.Done()
		for recording.Load() > 0 {
			pts, err := c.Query("key-1", base, base.Add(100*time.Second))
			if err != nil {
				panic(err)
			}
			for _, p := range pts {
				if p.TS < base.UnixNano() || p.TS >= base.Add(100*time.Second).UnixNano() {
					panic(fmt.Sprintf("query returned %+v outside its range", p))
				}
			}
			queries.Add(1)
			r.Yield()
		}
	})
	require.NoError(t, wg.Wait(ctx))
	require.NoError(t, c.CheckInvariants())

	var values []float64
	for _, d := range drained {
		for _, b := range d {
			for _, p := range b.Points {
				values = append(values, p.Value)
			}
		}
	}
	for _, b := range c.Snapshot() {
		for _, p := range b.Points {
			values = append(values, p.Value)
		}
	}
	slices.Sort(values)
	require.Equal(t, len(values), len(slices.Compact(slices.Clone(values))), "a point was returned twice")
	require.EqualValues(t, recorders*perRecorder, int64(len(values))+pruned.Load(), "drained + buffered + pruned = recorded")
	require.EqualValues(t, c.Len(), len(values)-countDrained(drained))
	t.Logf("drains=%d pruned=%d queries=%d", len(drained), pruned.Load(), queries.Load())
}

func countDrained(ds [][]collector.Batch) int {
	n := 0
	for _, d := range ds {
		for _, b := range d {
			n += len(b.Points)
		}
	}
	return n
}
