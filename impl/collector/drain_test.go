package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/model"
)

// buffered describes points recorded before a drain: perKey points for each
// of keys, nearly in order (each timestamp within ±32 ns of its index, as
// requests finishing out of order produce).
func buffered(keys []string, perKey int, base int64) []model.Point {
	var pts []model.Point
	for k, key := range keys {
		for i := range perKey {
			jitter := int64((i*7919+k*31)%64) - 32
			pts = append(pts, model.Point{Key: key, TS: base + int64(i) + jitter, Value: float64(k*perKey + i)})
		}
	}
	return pts
}

// straddlers returns the number of points in the chunks that straddle
// cutoff, knowing that a key's chunks are runs of ChunkPoints consecutive
// records.
func straddlers(pts []model.Point, cutoff int64) (chunks, points int64) {
	byKey := map[string][]model.Point{}
	var order []string
	for _, p := range pts {
		if _, ok := byKey[p.Key]; !ok {
			order = append(order, p.Key)
		}
		byKey[p.Key] = append(byKey[p.Key], p)
	}
	for _, key := range order {
		kp := byKey[key]
		for lo := 0; lo < len(kp); lo += collector.ChunkPoints {
			run := kp[lo:min(lo+collector.ChunkPoints, len(kp))]
			mn, mx := run[0].TS, run[0].TS
			for _, p := range run {
				mn, mx = min(mn, p.TS), max(mx, p.TS)
			}
			if mn < cutoff && mx >= cutoff {
				chunks++
				points += int64(len(run))
			}
		}
	}
	return chunks, points
}

// TestDrainMovesOnlyWhatWasRecordedDuringTheSplit is DR-2, DR-3, DR-4 and
// DR-5 at 4,000 and 400,000 points per key, with real goroutines. At every
// scheduling point of the split (after each key and after the split), the
// drain mutex must be held. Two points recorded from another goroutine must
// complete while the drain waits there, which they cannot if the write lock
// is held anywhere in the split. The write lock is taken exactly twice. The
// points moved while it is held are exactly those recorded during the split:
// the same count at both sizes. Afterwards each key holds its kept points
// followed by the points recorded during the split.
func TestDrainMovesOnlyWhatWasRecordedDuringTheSplit(t *testing.T) {
	keys := []string{"k0", "k1", "k2"}
	moved := map[int]int64{}
	large := 400_000
	if collector.UnderRace {
		// The race detector makes recording the full size slow. What it
		// watches (the records issued mid-split) is the same at any size, and
		// the size-independence is still compared across two sizes. The full
		// size runs in make unit.
		large = 40_000
	}
	for _, perKey := range []int{4_000, large} {
		t.Run(fmt.Sprint(perKey), func(t *testing.T) {
			probe := &probeRT{Runtime: rt.Real()}
			c, err := collector.New(probe, collector.Config{})
			require.NoError(t, err)
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
			pts := buffered(keys, perKey, base)
			for _, p := range pts {
				require.NoError(t, c.Record(p.Key, at(p.TS), p.Value))
			}
			cutoff := base + int64(perKey/2)
			wantChunksSplit, wantCopied := straddlers(pts, cutoff)

			var during []model.Point
			var probeErrs []string
			yields := 0
			probe.onYield = func() {
				yields++
				if !probe.drainMutexHeld() {
					probeErrs = append(probeErrs, fmt.Sprintf("yield %d: drain mutex free mid-drain", yields))
				}
				// One point older than the cutoff on an existing key (it must
				// stay: it was not buffered at the swap) and one on a new key.
				mid := []model.Point{
					{Key: keys[yields%len(keys)], TS: base + int64(yields), Value: -float64(yields)},
					{Key: fmt.Sprintf("new-%d", yields), TS: base, Value: -float64(yields)},
				}
				if err := probe.recordFromAnotherTask(c, 10*time.Second, mid...); err != nil {
					probeErrs = append(probeErrs, fmt.Sprintf("yield %d: a record issued mid-split did not complete: %v", yields, err))
					return
				}
				during = append(during, mid...)
			}
			got, st, err := c.DrainPoints(context.Background(), at(cutoff))
			require.NoError(t, err)
			require.Empty(t, probeErrs, "DR-3/DR-4: the write lock must be free and the drain mutex held during the whole split")
			require.Equal(t, len(keys)+1, yields, "one scheduling point per key and one after the split")

			// DR-1 on this data: exactly the plain partition.
			model0 := model.NewCollectorState(pts...)
			model1, want := model.CollectorStep(model0, model.CollectorInput{Op: model.OpDrain, Cutoff: cutoff})
			require.Equal(t, want.Points, toModel(got))

			assert.Equal(t, 2, st.WriteLocks, "DR-2: the write lock is taken twice")
			assert.EqualValues(t, len(during), st.RecordedDuringSplit)
			assert.EqualValues(t, len(during), st.MovedUnderLock, "DR-2: only the points recorded during the split move under the lock")
			assert.EqualValues(t, len(pts), st.Buffered)
			assert.EqualValues(t, len(want.Points), st.Drained)
			assert.EqualValues(t, len(pts)-len(want.Points), st.Kept)
			assert.Equal(t, wantChunksSplit, st.ChunksSplit, "DR-6: only straddling chunks are split")
			assert.Equal(t, wantCopied, st.PointsCopied)
			// DR-5: kept points first, then the ones recorded during the split.
			require.Equal(t, model.GroupByKey(model1.Record(during...).Points()), toModel(c.Snapshot()))
			require.NoError(t, c.CheckInvariants())
			moved[perKey] = st.MovedUnderLock
		})
	}
	assert.Equal(t, moved[4_000], moved[large], "DR-2: moved under the lock does not depend on the buffered count")
}

// TestDrainWaitsForAnotherDrain: a drain that cannot get the drain mutex
// before its context ends gives up without touching anything (DR-4).
func TestDrainWaitsForAnotherDrain(t *testing.T) {
	probe := &probeRT{Runtime: rt.Real()}
	c, err := collector.New(probe, collector.Config{})
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, c.Record("k", now, 1))
	probe.drain.Lock() // as if another drain were between its swaps
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = c.Drain(ctx, now.Add(time.Second))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	probe.drain.Unlock()
	require.EqualValues(t, 1, c.Len())
	buckets, st, err := c.Drain(context.Background(), now.Add(time.Second))
	require.NoError(t, err)
	require.Len(t, buckets, 1)
	require.EqualValues(t, 1, st.Drained)
}

func TestMetricsCountEvents(t *testing.T) {
	var reg stats.Registry
	c, err := collector.New(rt.Real(), collector.Config{Registry: &reg})
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		require.NoError(t, c.Record("k", now.Add(time.Duration(i)*time.Second), 1))
	}
	require.Error(t, c.Record("", now, 1))
	_, _, err = c.Drain(context.Background(), now.Add(4*time.Second))
	require.NoError(t, err)
	n, err := c.Prune(now.Add(6 * time.Second))
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	snap := reg.Snapshot()
	assert.EqualValues(t, 10, snap[collector.MetricRecorded])
	assert.EqualValues(t, 1, snap[collector.MetricRejected+`{reason="invalid"}`])
	assert.EqualValues(t, 0, snap[collector.MetricRejected+`{reason="full"}`])
	assert.EqualValues(t, 1, snap[collector.MetricDrains])
	assert.EqualValues(t, 4, snap[collector.MetricDrained])
	assert.EqualValues(t, 2, snap[collector.MetricPruned])
	assert.EqualValues(t, 4, snap[collector.MetricBuffered])
	assert.EqualValues(t, 0, snap[collector.MetricMovedUnderLock])
}
