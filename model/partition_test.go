package model

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestPartitionKeepsThePointAtTheCutoff(t *testing.T) {
	pts := []Point{{"a", 11, 1}, {"a", 10, 2}, {"b", 9, 3}, {"a", 3, 4}}
	d, k := Partition(pts, 10)
	assert.Equal(t, []Point{{"b", 9, 3}, {"a", 3, 4}}, d)
	assert.Equal(t, []Point{{"a", 11, 1}, {"a", 10, 2}}, k)
}

// TestPartitionProperties: every point goes to exactly one side, by the
// rule, and each side keeps the input order (it is a subsequence).
func TestPartitionProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 200).Draw(t, "n")
		pts := make([]Point, n)
		for i := range pts {
			pts[i] = Point{Key: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "key"), TS: rapid.Int64Range(-50, 50).Draw(t, "ts"), Value: float64(i)}
		}
		cutoff := rapid.Int64Range(-60, 60).Draw(t, "cutoff")
		d, k := Partition(pts, cutoff)
		require.Len(t, append(slices.Clone(d), k...), n)
		for _, p := range d {
			require.Less(t, p.TS, cutoff)
		}
		for _, p := range k {
			require.GreaterOrEqual(t, p.TS, cutoff)
		}
		require.True(t, slices.IsSortedFunc(d, byValue) && slices.IsSortedFunc(k, byValue), "input order kept")
	})
}

func byValue(a, b Point) int {
	switch {
	case a.Value < b.Value:
		return -1
	case a.Value > b.Value:
		return 1
	}
	return 0
}

func TestGroupByKeyIsStable(t *testing.T) {
	pts := []Point{{"b", 1, 1}, {"a", 5, 2}, {"b", 0, 3}, {"a", 2, 4}}
	assert.Equal(t, []Point{{"a", 5, 2}, {"a", 2, 4}, {"b", 1, 1}, {"b", 0, 3}}, GroupByKey(pts))
	assert.Equal(t, Point{"b", 1, 1}, pts[0], "input unchanged")
}

// TestGroupByKeyIsTheStableSortByKey: the counting sort gives exactly what
// a stable sort by key gives, on any points (many keys, few keys, repeats),
// and leaves its input alone.
func TestGroupByKeyIsTheStableSortByKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfN(rapid.StringMatching(`[a-c]{0,2}`), 1, 6).Draw(t, "keys")
		n := rapid.IntRange(0, 100).Draw(t, "n")
		pts := make([]Point, n)
		for i := range pts {
			pts[i] = Point{Key: rapid.SampledFrom(keys).Draw(t, "key"), TS: rapid.Int64Range(-5, 5).Draw(t, "ts"), Value: float64(i)}
		}
		in := slices.Clone(pts)
		want := slices.Clone(pts)
		slices.SortStableFunc(want, func(a, b Point) int { return strings.Compare(a.Key, b.Key) })
		require.Equal(t, want, GroupByKey(pts))
		require.Equal(t, in, pts, "input unchanged")
	})
}

// TestPartitionInPlaceIsPartition: the same halves as Partition, with kept
// at the start of the input's own array.
func TestPartitionInPlaceIsPartition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 100).Draw(t, "n")
		pts := make([]Point, n, n+rapid.IntRange(0, 10).Draw(t, "spare"))
		for i := range pts {
			pts[i] = Point{Key: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "key"), TS: rapid.Int64Range(-50, 50).Draw(t, "ts"), Value: float64(i)}
		}
		cutoff := rapid.Int64Range(-60, 60).Draw(t, "cutoff")
		wantD, wantK := Partition(pts, cutoff)
		d, k := PartitionInPlace(pts, cutoff)
		require.Equal(t, wantD, d)
		require.Equal(t, len(wantK), len(k))
		if len(k) > 0 {
			require.Equal(t, wantK, k)
			require.Same(t, &pts[0], &k[0], "kept is the input's array")
			require.Equal(t, cap(pts), cap(k))
		}
	})
}

func TestBucketStart(t *testing.T) {
	assert.EqualValues(t, 0, BucketStart(59, 60))
	assert.EqualValues(t, 60, BucketStart(60, 60))
	assert.EqualValues(t, -60, BucketStart(-1, 60))
	assert.EqualValues(t, -60, BucketStart(-60, 60))
	assert.EqualValues(t, -120, BucketStart(-61, 60))
}
