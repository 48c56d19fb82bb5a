package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/sim"
)

func TestCollectorTimestampsAreShownFromTheSimEpoch(t *testing.T) {
	assert.Equal(t, sim.Epoch.UnixNano(), simEpochNs)
	assert.Equal(t, "+1.500s", tsString(sim.Epoch.UnixNano()+1_500_000_000))
}

// The keyed model: states that differ only in how keys interleave are equal
// and hash alike; a different order within a key is a different state.
func TestKeyedCollectorModel(t *testing.T) {
	p := func(k string, ts int64) model.Point { return model.Point{Key: k, TS: ts, Value: float64(ts)} }
	m := keyedCollectorModel(model.NewCollectorState())
	a := model.NewCollectorState(p("a", 1), p("b", 2), p("a", 3))
	b := model.NewCollectorState(p("b", 2), p("a", 1), p("a", 3))
	c := model.NewCollectorState(p("a", 3), p("b", 2), p("a", 1))
	assert.True(t, m.Equal(a, b))
	assert.Equal(t, m.Hash(a), m.Hash(b))
	assert.False(t, m.Equal(a, c))
	assert.NotEqual(t, m.Hash(a), m.Hash(c))
}

// The chunk model replays the source text's chunking: runs of the limit,
// whole moves and straddling splits.
func TestChunkModelPredictsTheSplit(t *testing.T) {
	l := newChunkModel(1024)
	for i := range 2_500 {
		l.record(model.Point{Key: "k", TS: int64(i), Value: float64(i)})
	}
	require.Len(t, l.live["k"].chunks, 3)
	assert.Equal(t, []int{1024, 1024, 452}, []int{len(l.live["k"].chunks[0].pts), len(l.live["k"].chunks[1].pts), len(l.live["k"].chunks[2].pts)})
	kept, st := l.swap(1_500)
	assert.Equal(t, DrainCounts{Buffered: 2_500, Drained: 1_500, Kept: 1_000, Keys: 1, ChunksMoved: 2, ChunksSplit: 1, PointsCopied: 1_024}, st)
	l.record(model.Point{Key: "k", TS: 0, Value: -1})
	l.record(model.Point{Key: "new", TS: 0, Value: -2})
	afterKept, newKeys := l.putBack(kept, &st)
	assert.Equal(t, []int{1, 1}, []int{afterKept, newKeys})
	assert.EqualValues(t, 2, st.RecordedDuringSplit)
	assert.EqualValues(t, 2, st.ChunksRecordedDuringSplit)
	assert.EqualValues(t, 2, st.MovedUnderLock)
	pts := l.points("k")
	assert.Len(t, pts, 1_001)
	assert.Equal(t, -1.0, pts[1_000].Value, "the point recorded during the split comes after the kept ones")
	assert.EqualValues(t, 500+1+1, l.prune(2_000), "the kept points under 2,000 and both recorded during the split")
	assert.Equal(t, []model.Point{{Key: "k", TS: 2_000, Value: 2_000}}, l.points("k")[:1])
}

// A synthetic history: one key preloaded with two chunks of 4 points,
// [0..3] in array 1 and [4..7] in array 2, then one operation whose lock
// sections the test lays out; limit 4.
var (
	chunkA   = ChunkLayout{ID: 11, Array: 1, Cap: 4, MinTS: 0, MaxTS: 3, Points: cps(0, 4)}
	chunkB   = ChunkLayout{ID: 12, Array: 2, Cap: 4, MinTS: 4, MaxTS: 7, Points: cps(4, 8)}
	keptOfA  = ChunkLayout{ID: 13, Array: 3, Cap: 2, MinTS: 2, MaxTS: 3, Points: cps(2, 4)}
	copyOfB  = ChunkLayout{ID: 14, Array: 4, Cap: 4, MinTS: 4, MaxTS: 7, Points: cps(4, 8)}
	testLims = CollectorLimits{ChunkPoints: 4}
)

// cps are the points with TS from..to-1, each valued TS+1.
func cps(from, to int64) []ChunkPoint {
	var out []ChunkPoint
	for ts := from; ts < to; ts++ {
		out = append(out, ChunkPoint{TS: ts, Value: float64(ts + 1)})
	}
	return out
}

func layout(m uintptr, chunks ...ChunkLayout) *Layout {
	l := &Layout{Map: m}
	if len(chunks) > 0 {
		var n int64
		for _, c := range chunks {
			n += int64(len(c.Points))
		}
		l.Series = []SeriesLayout{{Key: "k", Header: 100 + m, CountedPoints: n, CountedChunks: int64(len(chunks)), Chunks: chunks}}
	}
	return l
}

func preloadedHistory() ([]model.Point, []WriteSection) {
	var pts []model.Point
	var ws []WriteSection
	for ts := range int64(8) {
		pts = append(pts, model.Point{Key: "k", TS: ts, Value: float64(ts + 1)})
		ws = append(ws, WriteSection{Acquired: 2 * ts, Released: 2*ts + 1})
	}
	return pts, ws
}

// drainHistory is a drain at cutoff 2 whose put-back installs put.
func drainHistory(put *Layout) *CollectorHistory {
	initial, ws := preloadedHistory()
	ws = append(ws,
		WriteSection{Acquired: 101, Released: 102, Before: layout(1, chunkA, chunkB), After: layout(2), OldAfter: layout(1, chunkA, chunkB)},
		WriteSection{Acquired: 104, Released: 105, Before: layout(2), After: put})
	op := CollectorOp{Task: "drainer", Kind: CollectorDrain, In: model.CollectorInput{Op: model.OpDrain, Cutoff: 2},
		Out:    model.CollectorOutput{Points: []model.Point{{Key: "k", TS: 0, Value: 1}, {Key: "k", TS: 1, Value: 2}}},
		Groups: []string{"k"},
		Stats:  DrainCounts{Buffered: 8, Drained: 2, Kept: 6, Keys: 1, ChunksMoved: 1, ChunksSplit: 1, PointsCopied: 4, WriteLocks: 2},
		Call:   100, Return: 106, WritesAtCall: 8, Writes: 10}
	return &CollectorHistory{Initial: initial, Ops: []CollectorOp{op}, Writes: ws}
}

func TestCheckCollectorSeesAnEmptyGroup(t *testing.T) {
	h := drainHistory(layout(3, keptOfA, chunkB))
	require.NoError(t, CheckCollector(h, testLims).Err(), "the history as recorded")
	h.Ops[0].Groups = []string{"j", "k"} // a key without drained points returned as a group
	err := CheckCollector(h, testLims).Err()
	require.ErrorContains(t, err, "DR-1")
	require.ErrorContains(t, err, `returned 2 groups ["j" "k"]`)
}

func TestCheckChunksSeesWhatADrainCopiedUnderTheLock(t *testing.T) {
	r := CheckCollector(drainHistory(layout(3, keptOfA, chunkB)), testLims)
	require.NoError(t, r.Err())
	o := r.Drains[0].Outside
	require.NotNil(t, o)
	assert.Equal(t, DrainOutside{Buffered: 8, MovedWhole: 4, Straddling: 1, StraddlingPoints: 4, SplitKept: 2}, *o)
	assert.Equal(t, 4, r.Chunks.Largest)

	// The put-back installs a copy of the whole kept chunk: copied under
	// the lock, and not moved whole.
	r = CheckCollector(drainHistory(layout(3, keptOfA, copyOfB)), testLims)
	assert.True(t, r.Has("DR-2"), "%v", r.Violations.Of())
	assert.True(t, r.Has("DR-6"), "%v", r.Violations.Of())
	assert.EqualValues(t, 4, r.Drains[0].Outside.CopiedUnderLock)
	assert.EqualValues(t, 4, r.Drains[0].Outside.NotMovedWhole)

	// The swap's section emptied the map it swapped out.
	h := drainHistory(layout(3, keptOfA, chunkB))
	h.Writes[8].OldAfter = layout(1)
	r = CheckCollector(h, testLims)
	assert.True(t, r.Has("DR-2"), "%v", r.Violations.Of())
	assert.EqualValues(t, 8, r.Drains[0].Outside.SwapTouched)

	// A kept half that is not the straddler's kept part.
	wrong := keptOfA
	wrong.Points = cps(1, 4)
	r = CheckCollector(drainHistory(layout(3, wrong, chunkB)), testLims)
	assert.True(t, r.Has("DR-2"), "%v", r.Violations.Of())
}

// pruneHistory is a prune at cutoff 2 whose section ends with after.
func pruneHistory(after *Layout) *CollectorHistory {
	initial, ws := preloadedHistory()
	ws = append(ws, WriteSection{Acquired: 101, Released: 102, Before: layout(1, chunkA, chunkB), After: after})
	op := CollectorOp{Task: "pruner", Kind: CollectorPrune, In: model.CollectorInput{Op: model.OpPrune, Cutoff: 2},
		Out: model.CollectorOutput{Count: 2}, Call: 100, Return: 103, WritesAtCall: 8, Writes: 9}
	return &CollectorHistory{Initial: initial, Ops: []CollectorOp{op}, Writes: ws}
}

func TestCheckChunksChargesAPruneWithTheChunksItCopied(t *testing.T) {
	r := CheckCollector(pruneHistory(layout(1, keptOfA, chunkB)), testLims)
	require.NoError(t, r.Err())
	require.Len(t, r.Prunes, 1)
	assert.Equal(t, []PruneKeyFacts{{Key: "k", Chunks: 2, Points: 8, Straddling: 1, StraddlingPoints: 4, Copied: 4, CopiedChunks: 1}}, r.Prunes[0].Keys)

	// Point by point: the younger chunk copied too.
	r = CheckCollector(pruneHistory(layout(1, keptOfA, copyOfB)), testLims)
	assert.True(t, r.Has("DR-10"), "%v", r.Violations.Of())
	assert.EqualValues(t, 4, r.Prunes[0].CopiedNotStraddling)
	assert.EqualValues(t, 8, r.Prunes[0].Keys[0].Copied)
}

func TestCheckChunksCountsReallocationsPerRecord(t *testing.T) {
	initial, ws := preloadedHistory()
	grown := chunkB
	grown.Array, grown.Points = 5, append(cps(4, 8), ChunkPoint{TS: 9, Value: 10})
	rec := CollectorOp{Task: "recorder", Kind: CollectorRecord, In: model.CollectorInput{Op: model.OpRecord, Key: "k", TS: 9, Value: 10},
		Call: 100, Return: 103, WritesAtCall: 8, Writes: 9}
	opened := ChunkLayout{ID: 15, Array: 6, Cap: 4, MinTS: 9, MaxTS: 9, Points: cps(9, 10)}
	for _, c := range []struct {
		after  *Layout
		reallo int
		bad    bool
	}{
		{layout(1, chunkA, chunkB, opened), 1, false},
		{layout(1, chunkA, grown), 1, true}, // a chunk of 5 points
		{layout(1, ChunkLayout{ID: 11, Array: 7, Cap: 4, MinTS: 0, MaxTS: 3, Points: cps(0, 4)}, chunkB, opened), 2, true},
	} {
		w := slicesClone(ws)
		w = append(w, WriteSection{Acquired: 101, Released: 102, Before: layout(1, chunkA, chunkB), After: c.after})
		r := CheckCollector(&CollectorHistory{Initial: initial, Ops: []CollectorOp{rec}, Writes: w}, testLims)
		assert.Equal(t, c.reallo, r.Chunks.MaxReallocated)
		assert.Equal(t, c.bad, r.Has("DR-6"), "%v", r.Violations.Of())
	}
	// Stored bounds that are not the points'.
	w := append(slicesClone(ws), WriteSection{Acquired: 101, Released: 102, Before: layout(1, chunkA, chunkB),
		After: layout(1, chunkA, ChunkLayout{ID: 12, Array: 2, Cap: 4, MinTS: 5, MaxTS: 7, Points: cps(4, 8)}, opened)})
	r := CheckCollector(&CollectorHistory{Initial: initial, Ops: []CollectorOp{rec}, Writes: w}, testLims)
	assert.True(t, r.Has("DR-6"))
	assert.EqualValues(t, 1, r.Chunks.BoundsWrong)
}

func slicesClone(ws []WriteSection) []WriteSection { return append([]WriteSection(nil), ws...) }

func TestCollectorOrderRejectsALockLogItCannotMatch(t *testing.T) {
	h := drainHistory(layout(3, keptOfA, chunkB))
	evs, err := CollectorOrder(h)
	require.NoError(t, err)
	require.Len(t, evs, 9)
	assert.Equal(t, CollectorDrain, evs[8].Kind)
	h.Writes = append(h.Writes, WriteSection{})
	_, err = CollectorOrder(h)
	assert.Error(t, err, "a third acquisition by the drain")
}

func TestCheckCollectorHoldsASnapshotsGroups(t *testing.T) {
	initial, ws := preloadedHistory()
	snap := CollectorOp{Task: "reader", Kind: CollectorSnapshot, Snapshot: initial, Groups: []string{"k"},
		Call: 100, Return: 101, WritesAtCall: 8, Writes: 8}
	h := &CollectorHistory{Initial: initial, Ops: []CollectorOp{snap}, Writes: ws}
	require.NoError(t, CheckCollector(h, testLims).Err(), "the history as recorded")
	h.Ops[0].Groups = []string{"k", "k"} // one key's points split over two groups
	err := CheckCollector(h, testLims).Err()
	require.ErrorContains(t, err, "DR-7")
	require.ErrorContains(t, err, `returned 2 groups ["k" "k"] for points under 1 keys ["k"]`)
}
