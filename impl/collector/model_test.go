package collector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
)

const testWidth = int64(100) // bucket width in the model tests, in ns

// TestCollectorMatchesPlainPartition is DR-1 (and DR-6 after every step). A
// state machine of records with out-of-order timestamps, bursts that fill
// several chunks, drains (points and buckets), prunes and queries runs step
// by step against model.CollectorStep, whose drain is the plain partition by
// cutoff. Drained, kept, pruned, queried and aggregated points must be the
// same, in the same order.
func TestCollectorMatchesPlainPartition(t *testing.T) {
	if collector.UnderRace {
		t.Skip("a single-goroutine model test: the race detector has nothing to find in it (it runs in full in make unit)")
	}
	keys := []string{"GetItem.latency", "PutItem.latency", "Query.count"}
	rapid.Check(t, func(t *rapid.T) {
		c, err := collector.New(rt.Real(), collector.Config{BucketWidth: time.Duration(testWidth)})
		require.NoError(t, err)
		var st model.CollectorState
		value := 0.0
		record := func(t *rapid.T, key string, ts int64) {
			value += 0.25
			require.NoError(t, c.Record(key, at(ts), value))
			st, _ = model.CollectorStep(st, model.CollectorInput{Op: model.OpRecord, Key: key, TS: ts, Value: value})
		}
		t.Repeat(map[string]func(*rapid.T){
			"record": func(t *rapid.T) {
				record(t, rapid.SampledFrom(keys).Draw(t, "key"), rapid.Int64Range(0, 2000).Draw(t, "ts"))
			},
			"burst": func(t *rapid.T) {
				key := rapid.SampledFrom(keys).Draw(t, "key")
				// Sizes around the chunk bound, so chunks fill and overflow.
				n := rapid.OneOf(rapid.IntRange(1, 100), rapid.SampledFrom([]int{1023, 1024, 1025, 2049})).Draw(t, "n")
				lo := rapid.Int64Range(0, 1500).Draw(t, "lo")
				spread := rapid.Int64Range(1, 1000).Draw(t, "spread")
				sorted := rapid.Bool().Draw(t, "sorted")
				pts := make([]model.Point, 0, n)
				for i := range n {
					ts := lo + int64(i)%spread
					if !sorted { // a deterministic scramble, out of order
						ts = lo + int64((uint64(i)*2654435761)%uint64(spread))
					}
					value += 0.25
					require.NoError(t, c.Record(key, at(ts), value))
					pts = append(pts, model.Point{Key: key, TS: ts, Value: value})
				}
				st = st.Record(pts...)
			},
			"drain": func(t *rapid.T) {
				cutoff := rapid.Int64Range(-10, 2600).Draw(t, "cutoff")
				var want model.CollectorOutput
				before := st.Points()
				st, want = model.CollectorStep(st, model.CollectorInput{Op: model.OpDrain, Cutoff: cutoff})
				var ds collector.DrainStats
				if rapid.Bool().Draw(t, "aggregate") {
					buckets, s, err := c.Drain(context.Background(), at(cutoff))
					require.NoError(t, err)
					ds = s
					require.Equal(t, model.Aggregate(want.Points, testWidth), bucketsToModel(buckets), "aggregated flush buckets")
				} else {
					got, s, err := c.DrainPoints(context.Background(), at(cutoff))
					require.NoError(t, err)
					ds = s
					require.Equal(t, want.Points, toModel(got), "drained points, per key in recorded order")
				}
				require.EqualValues(t, len(before), ds.Buffered)
				require.EqualValues(t, len(want.Points), ds.Drained)
				require.EqualValues(t, len(before)-len(want.Points), ds.Kept)
				require.Equal(t, 2, ds.WriteLocks, "DR-2: two write-lock acquisitions")
				require.Zero(t, ds.MovedUnderLock, "DR-2: nothing recorded during the split, nothing moved under the lock")
			},
			"prune": func(t *rapid.T) {
				cutoff := rapid.Int64Range(-10, 2600).Draw(t, "cutoff")
				var want model.CollectorOutput
				st, want = model.CollectorStep(st, model.CollectorInput{Op: model.OpPrune, Cutoff: cutoff})
				n, err := c.Prune(at(cutoff))
				require.NoError(t, err)
				require.Equal(t, want.Count, n, "pruned points")
			},
			"query": func(t *rapid.T) {
				key := rapid.SampledFrom(keys).Draw(t, "key")
				from := rapid.Int64Range(0, 2000).Draw(t, "from")
				to := from + rapid.Int64Range(1, 1000).Draw(t, "len")
				_, want := model.CollectorStep(st, model.CollectorInput{Op: model.OpQuery, Key: key, From: from, To: to})
				got, err := c.Query(key, at(from), at(to))
				require.NoError(t, err)
				var gotM []model.Point
				for _, p := range got {
					gotM = append(gotM, model.Point{Key: key, TS: p.TS, Value: p.Value})
				}
				require.Equal(t, want.Points, gotM, "queried points")
			},
			"": func(t *rapid.T) {
				require.NoError(t, c.CheckInvariants(), "DR-6 structural invariants")
				require.Equal(t, model.GroupByKey(st.Points()), toModel(c.Snapshot()), "kept points, per key in recorded order")
				require.EqualValues(t, len(st.Points()), c.Len())
			},
		})
	})
}

// TestModelAggregateMatchesHandSums pins the aggregation oracle itself, so
// the differential test above compares against something known to be right.
func TestModelAggregateMatchesHandSums(t *testing.T) {
	pts := []model.Point{{Key: "b", TS: 150, Value: 1}, {Key: "a", TS: -1, Value: 4}, {Key: "b", TS: 101, Value: 2}, {Key: "b", TS: 99, Value: 8}}
	require.Equal(t, []model.Bucket{
		{Key: "a", Start: -100, Count: 1, Sum: 4, Min: 4, Max: 4},
		{Key: "b", Start: 0, Count: 1, Sum: 8, Min: 8, Max: 8},
		{Key: "b", Start: 100, Count: 2, Sum: 3, Min: 1, Max: 2},
	}, model.Aggregate(pts, 100))
}

func TestInvalidInput(t *testing.T) {
	_, err := collector.New(nil, collector.Config{})
	require.ErrorIs(t, err, collector.ErrInvalid)
	_, err = collector.New(rt.Real(), collector.Config{BucketWidth: -1})
	require.ErrorIs(t, err, collector.ErrInvalid)
	c, err := collector.New(rt.Real(), collector.Config{MaxBufferedPoints: 2})
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		key string
		ts  time.Time
		v   float64
	}{{"", now, 1}, {"k", time.Time{}, 1}, {"k", collector.MaxTime, 1}, {"k", now, nan()}} {
		require.ErrorIs(t, c.Record(tc.key, tc.ts, tc.v), collector.ErrInvalid, fmt.Sprintf("%+v", tc))
	}
	require.NoError(t, c.Record("k", now, 1))
	require.NoError(t, c.Record("k", now, 2))
	require.ErrorIs(t, c.Record("k", now, 3), collector.ErrFull)
	_, err = c.Query("k", now, now)
	require.ErrorIs(t, err, collector.ErrInvalid)
	_, _, err = c.Drain(context.Background(), time.Time{})
	require.ErrorIs(t, err, collector.ErrInvalid)
	_, err = c.Prune(time.Time{})
	require.ErrorIs(t, err, collector.ErrInvalid)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = c.Drain(ctx, now)
	require.ErrorIs(t, err, context.Canceled)
	require.EqualValues(t, 2, c.Len(), "failed calls change nothing")
}

func nan() float64 { var z float64; return z / z }
