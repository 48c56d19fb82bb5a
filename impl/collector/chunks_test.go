package collector

import (
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/rt"
)

func seriesOf(pts []Point) *series {
	s := &series{}
	for _, p := range pts {
		s.add(p)
	}
	return s
}

func inOrder(n int, from int64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{TS: from + int64(i), Value: float64(i)}
	}
	return pts
}

// partition is the plain partition by cutoff, the oracle (model.Partition
// works on keyed points; this internal test needs the bare ones).
func partition(pts []Point, cutoff int64) (drained, kept []Point) {
	for _, p := range pts {
		if p.TS < cutoff {
			drained = append(drained, p)
		} else {
			kept = append(kept, p)
		}
	}
	return drained, kept
}

// samePoints compares cheaply and lets testify print the difference only
// when there is one.
func samePoints(t require.TestingT, want, got []Point) {
	if !slices.Equal(want, got) {
		require.Equal(t, want, got)
	}
}

func chunkPtrs(s *series) []*chunk {
	var out []*chunk
	for c := s.head; c != nil; c = c.next {
		out = append(out, c)
	}
	return out
}

func TestCutoffPointIsKept(t *testing.T) {
	s := seriesOf([]Point{{TS: 9}, {TS: 10}, {TS: 11}})
	d, k, _ := s.split(10)
	assert.Equal(t, []Point{{TS: 9}}, d.appendTo(nil))
	assert.Equal(t, []Point{{TS: 10}, {TS: 11}}, k.appendTo(nil))
}

func TestChunksAreBoundedAndGrowOnlyTheTail(t *testing.T) {
	s := &series{}
	var firstBacking *Point
	for i := range 3*ChunkPoints + 5 {
		s.add(Point{TS: int64(i)})
		if i == ChunkPoints-1 {
			firstBacking = &s.head.pts[0]
		}
	}
	require.NoError(t, s.check())
	assert.EqualValues(t, 4, s.chunks)
	assert.Same(t, firstBacking, &s.head.pts[0], "a full chunk was reallocated by a later record")
	for _, c := range chunkPtrs(s) {
		assert.LessOrEqual(t, cap(c.pts), ChunkPoints, "chunk capacity above the bound")
	}
}

func TestSplitMovesWholeChunksAndCopiesOnlyStraddlers(t *testing.T) {
	s := seriesOf(inOrder(3*ChunkPoints, 0)) // chunks [0,1024) [1024,2048) [2048,3072)
	before := chunkPtrs(s)
	require.Len(t, before, 3, "DR-6: 3,072 points make three full chunks")
	d, k, st := s.split(1500)
	assert.Equal(t, splitStats{chunksMoved: 2, chunksSplit: 1, pointsMoved: 3 * ChunkPoints, pointsCopied: ChunkPoints}, st)
	assert.Same(t, before[0], d.head, "an older chunk was copied instead of moved")
	assert.Same(t, before[2], k.tail, "a younger chunk was copied instead of moved")
	assert.EqualValues(t, 1500, d.points)
	assert.EqualValues(t, 3*ChunkPoints-1500, k.points)
	require.NoError(t, d.check())
	require.NoError(t, k.check())
	assert.Zero(t, s.points, "split must consume its input")
}

func TestJoinRelinksInO1(t *testing.T) {
	a, b := seriesOf(inOrder(ChunkPoints+1, 0)), seriesOf(inOrder(3, 5000))
	bHead := b.head
	j := join(a, b)
	require.NoError(t, j.check())
	assert.Same(t, bHead, j.tail, "join copied the appended chunk")
	assert.Equal(t, append(inOrder(ChunkPoints+1, 0), inOrder(3, 5000)...), j.appendTo(nil))
	assert.Same(t, j, join(j, nil))
	assert.Same(t, j, join(nil, j))
}

func TestCheckReportsBrokenInvariants(t *testing.T) {
	s := seriesOf([]Point{{TS: 5}, {TS: 1}, {TS: 9}})
	require.NoError(t, s.check())
	s.head.minTS = 5 // as if the bounds were not updated on add
	assert.ErrorContains(t, s.check(), "bounds")

	big := seriesOf(inOrder(10, 0))
	big.head.pts = inOrder(ChunkPoints+1, 0)
	big.head.minTS, big.head.maxTS = 0, ChunkPoints
	big.points = ChunkPoints + 1
	assert.ErrorContains(t, big.check(), "holds 1025 points")

	s2 := seriesOf(inOrder(3, 0))
	s2.points = 4
	assert.ErrorContains(t, s2.check(), "counts")
}

func TestFloorTo(t *testing.T) {
	assert.EqualValues(t, 0, floorTo(59, 60))
	assert.EqualValues(t, 60, floorTo(60, 60))
	assert.EqualValues(t, -60, floorTo(-1, 60))
	assert.EqualValues(t, -60, floorTo(-60, 60))
}

// TestSeriesAgainstFlatList is the pure half of DR-1 and DR-6. Any sequence
// of out-of-order appends, splits and joins must leave the same points in the
// same order as a flat list with the plain partition. It must keep every
// chunk bounded with exact bounds and move every non-straddling chunk without
// copying it. An append may reallocate only the tail chunk.
func TestSeriesAgainstFlatList(t *testing.T) {
	if underRace {
		t.Skip("a single-goroutine model test: the race detector has nothing to find in it (it runs in full in make unit)")
	}
	rapid.Check(t, func(t *rapid.T) {
		s := &series{}
		var flat []Point
		next := 0.0
		t.Repeat(map[string]func(*rapid.T){
			"add": func(t *rapid.T) {
				// Sizes around the chunk bound, so chunks fill and overflow.
				n := rapid.OneOf(rapid.IntRange(1, 50), rapid.SampledFrom([]int{ChunkPoints - 1, ChunkPoints, ChunkPoints + 1, 2*ChunkPoints + 1})).Draw(t, "n")
				lo := rapid.Int64Range(-5000, 5000).Draw(t, "lo")
				spread := rapid.Int64Range(1, 5000).Draw(t, "spread")
				seed := rapid.Uint64().Draw(t, "seed")
				for i := range n {
					before := chunkPtrs(s)
					var backing []*Point
					for _, c := range before {
						backing = append(backing, &c.pts[0])
					}
					// An arithmetic scramble: out of order, deterministic.
					ts := lo + int64((seed+uint64(i)*2654435761)%uint64(spread))
					next++
					p := Point{TS: ts, Value: next}
					s.add(p)
					flat = append(flat, p)
					after := chunkPtrs(s)
					// DR-6: only the tail chunk may have been reallocated.
					for j := 0; j+1 < len(before); j++ {
						if after[j] != before[j] || &after[j].pts[0] != backing[j] {
							t.Fatalf("add reallocated chunk %d of %d", j, len(before))
						}
					}
				}
			},
			"split": func(t *rapid.T) {
				cutoff := rapid.Int64Range(-6000, 11000).Draw(t, "cutoff")
				before := chunkPtrs(s)
				wantD, wantK := partition(flat, cutoff)
				var straddle int64
				for _, c := range before {
					if c.minTS < cutoff && c.maxTS >= cutoff {
						straddle += int64(len(c.pts))
					}
				}
				d, k, st := s.split(cutoff)
				samePoints(t, wantD, d.appendTo(nil))
				samePoints(t, wantK, k.appendTo(nil))
				assert.Equal(t, straddle, st.pointsCopied, "points copied must be exactly the straddling chunks'")
				assert.EqualValues(t, len(flat), st.pointsMoved)
				moved := map[*chunk]bool{}
				for _, c := range append(chunkPtrs(&d), chunkPtrs(&k)...) {
					moved[c] = true
				}
				for _, c := range before {
					whole := c.maxTS < cutoff || c.minTS >= cutoff
					assert.Equal(t, whole, moved[c], "whole chunks move, straddlers are copied")
				}
				require.NoError(t, d.check())
				// Keep the young side; sometimes put the old side back
				// after it, as a put-back joins series.
				if rapid.Bool().Draw(t, "rejoin") {
					*s = *join(&k, &d)
					flat = append(wantK, wantD...)
				} else {
					*s = k
					flat = wantK
				}
			},
			"": func(t *rapid.T) {
				require.NoError(t, s.check())
				samePoints(t, flat, s.appendTo(nil))
			},
		})
	})
}

// Prune uses the drain's split under the write lock: it drops the chunks
// entirely older than the cutoff, moves the younger ones whole (the same
// chunk objects and arrays) and copies only the chunk that straddles the
// cutoff (DR-10).
func TestPruneMovesWholeChunksAndCopiesOnlyTheStraddler(t *testing.T) {
	c, err := New(rt.Real(), Config{})
	require.NoError(t, err)
	for _, p := range inOrder(4*ChunkPoints, 0) {
		require.NoError(t, c.Record("k", time.Unix(0, p.TS), p.Value))
	}
	var before []*chunk
	for ch := c.series["k"].head; ch != nil; ch = ch.next {
		before = append(before, ch)
	}
	require.Len(t, before, 4)
	cut := int64(ChunkPoints + ChunkPoints/2)
	n, err := c.Prune(time.Unix(0, cut))
	require.NoError(t, err)
	assert.EqualValues(t, cut, n)
	var after []*chunk
	for ch := c.series["k"].head; ch != nil; ch = ch.next {
		after = append(after, ch)
	}
	require.Len(t, after, 3)
	assert.NotSame(t, before[1], after[0], "the straddling chunk is copied")
	assert.Equal(t, inOrder(ChunkPoints, 0)[ChunkPoints/2:][0].Value+float64(ChunkPoints), after[0].pts[0].Value)
	assert.Len(t, after[0].pts, ChunkPoints/2)
	assert.Same(t, before[2], after[1], "a younger chunk moves whole")
	assert.Same(t, before[3], after[2])
	assert.Same(t, unsafe.SliceData(before[2].pts), unsafe.SliceData(after[1].pts), "with its array")
	require.NoError(t, c.CheckInvariants())
}
