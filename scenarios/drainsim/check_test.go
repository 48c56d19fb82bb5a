package drainsim

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/sim"
)

var testKeys = []string{"a", "b", "c", "d", "q"}

// testWorld runs a world that exercises every check: recorders on their own
// keys, a drainer that snapshots after each drain, a querier, a pruner, and
// at every drain yield a record on "q" and a whole-key query.
func testWorld(t *testing.T, seed uint64) *World {
	t.Helper()
	var w *World
	res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
		var err error
		w, err = New(s, Config{Keys: testKeys})
		if err != nil {
			s.Failf("%v", err)
		}
		w.Run(Plan{Preload: 1_200, Recorders: 2, RecordsEach: 20, RecorderKeys: [][]string{{"a", "b"}, {"c", "d"}},
			Drainers: 1, DrainsEach: 2, DrainDelay: 10, SnapshotAfterDrain: true, Prunes: 1, Queries: 6,
			InvariantsEveryOp: true, Hook: HookPlan{Records: true, Key: "q", Wait: true, Query: true, ProbeDrainMutex: true, Invariants: true},
			FinalDrain: true, FinalSnapshot: true})
	})
	require.NoError(t, res.Err)
	return w
}

func check(w *World, ops []Op, hooks []HookObs) *Report {
	return CheckOps(w.Initial, ops, hooks, w.Width, w.Probe.Writes())
}

// mutate returns a copy of w's ops with f applied to the first op that
// matches.
func mutate(t *testing.T, ops []Op, match func(Op) bool, f func(*Op)) []Op {
	t.Helper()
	out := slices.Clone(ops)
	i := slices.IndexFunc(out, match)
	require.GreaterOrEqual(t, i, 0, "no op to mutate")
	f(&out[i])
	return out
}

func isDrain(op Op) bool {
	return op.Kind == KindDrain && op.In.Cutoff != Everything && op.Stats.Kept > 0
}

func TestCheckAcceptsTheProductionCollector(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		w := testWorld(t, seed)
		r := Check(w)
		require.NoError(t, r.Err(), "seed %d", seed)
		assert.Len(t, r.Drains, 3)
		assert.Positive(t, r.ReadsInSplit)
		assert.NotEmpty(t, r.Deviations, "the hook queries inside the split reproduce the deviation")
		for _, d := range r.Drains {
			assert.Equal(t, 2, d.Op.Stats.WriteLocks)
			assert.Equal(t, d.Want, d.Op.Stats, "seed %d: the replayed layout predicts every count", seed)
			assert.Less(t, d.Swap, d.Put)
		}
	}
}

// Every claim's check must be able to fail: each mutation of a real
// history below must be reported under its claim.
func TestCheckReportsEachViolation(t *testing.T) {
	w := testWorld(t, 3)
	require.NoError(t, Check(w).Err())
	hooks := w.Hooks
	drain := w.Ops[slices.IndexFunc(w.Ops, isDrain)]
	cases := []struct {
		claim string
		ops   []Op
		hooks []HookObs
	}{
		{"DR-1", mutate(t, w.Ops, isDrain, func(o *Op) { o.Out.Points = o.Out.Points[1:] }), hooks},
		{"DR-1", mutate(t, w.Ops, isDrain, func(o *Op) { o.Stats.Kept++ }), hooks},
		{"DR-2", mutate(t, w.Ops, isDrain, func(o *Op) { o.Stats.MovedUnderLock += o.Stats.Buffered }), hooks},
		// A record the clients made no longer claims its write: a third
		// acquisition by the drains.
		{"DR-2", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindRecord }, func(o *Op) { o.Kind = KindDrain; o.Stats = collector.DrainStats{} }), hooks},
		{"DR-3", w.Ops, append(slices.Clone(hooks), HookObs{N: 999, Writes: r0(t, w).Drains[0].Swap, WriteHeld: true})},
		{"DR-4", w.Ops, append(slices.Clone(hooks), HookObs{N: 999, Writes: r0(t, w).Drains[0].Swap, DrainMutexProbed: true})},
		{"DR-4", w.Ops, append(slices.Clone(hooks), HookObs{N: 999, Writes: r0(t, w).Drains[0].Put})},
		{"DR-5", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindSnapshot && o.Writes > drain.Writes && len(o.Snapshot) > 2 }, func(o *Op) {
			o.Snapshot = slices.Clone(o.Snapshot)
			i := slices.IndexFunc(o.Snapshot, func(p model.Point) bool { return p.Key == "q" })
			o.Snapshot[i], o.Snapshot[i+1] = o.Snapshot[i+1], o.Snapshot[i]
		}), hooks},
		{"DR-6", mutate(t, w.Ops, isDrain, func(o *Op) { o.Stats.ChunksSplit++ }), hooks},
		{"DR-7", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindQuery && o.Hook == 0 && len(o.Out.Points) > 0 }, func(o *Op) { o.Out.Points = o.Out.Points[1:] }), hooks},
		{"DR-7", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindPrune }, func(o *Op) { o.Out.Count++ }), hooks},
		// A query inside a split that saw neither the model's answer nor the
		// live map's is not the documented deviation.
		{"DR-7", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindQuery && o.Hook > 0 }, func(o *Op) {
			o.Out.Points = append(slices.Clone(o.Out.Points), model.Point{Key: o.In.Key, TS: 1, Value: -1})
		}), hooks},
	}
	for _, c := range cases {
		r := check(w, c.ops, c.hooks)
		assert.True(t, r.Has(c.claim), "%s not reported; got %v", c.claim, r.Violations)
		assert.ErrorContains(t, r.Err(c.claim), c.claim)
	}
}

// A record issued inside a split that waited for a drain's hold of the
// write lock is a DR-3 violation (the hold times are forged here: the real
// collector never does it).
func TestCheckWaitsReportsARecordThatWaited(t *testing.T) {
	w := testWorld(t, 6)
	r := CheckOps(w.Initial, w.Ops, w.Hooks, w.Width, w.Probe.Writes())
	require.NoError(t, r.Err())
	require.GreaterOrEqual(t, len(r.Drains), 2)
	d0 := r.Drains[0]
	_, swapRel := w.Probe.AcquiredAt(d0.Swap)
	putAcq, _ := w.Probe.AcquiredAt(d0.Put)
	i := slices.IndexFunc(w.Ops, func(o Op) bool {
		acq, _ := w.Probe.AcquiredAt(o.Writes)
		return o.Kind == KindRecord && o.Call > swapRel && acq < putAcq
	})
	require.GreaterOrEqual(t, i, 0, "a record issued inside the first split")
	x := w.Ops[i]
	xAcq, _ := w.Probe.AcquiredAt(x.Writes)
	forged := func(seq int64) (int64, int64) {
		if seq == r.Drains[1].Swap {
			return xAcq - 1, x.Call + 1
		}
		return w.Probe.AcquiredAt(seq)
	}
	checkWaits(r, w.Ops, forged)
	assert.True(t, r.Has("DR-3"), "got %v", r.Violations)

	clean := Check(w)
	require.NoError(t, clean.Err())
	assert.Positive(t, clean.Drains[0].IssuedInSplit)
}

func r0(t *testing.T, w *World) *Report {
	t.Helper()
	r := Check(w)
	require.NoError(t, r.Err())
	return r
}

func TestCheckRejectsABrokenHarness(t *testing.T) {
	w := testWorld(t, 4)
	twice := mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindRecord }, func(o *Op) { o.Writes = 1 })
	assert.True(t, check(w, twice, w.Hooks).Has("harness"), "a record claiming a preloaded write")
	r := CheckOps(w.Initial, w.Ops, w.Hooks, w.Width, 3)
	assert.True(t, r.Has("harness"), "fewer writes than preloaded points")
}

func TestLinearizable(t *testing.T) {
	w := testWorld(t, 5)
	notInDrain := func(op Op) bool { return op.Kind != KindQuery || !Concurrent(op, w.Ops) }
	lin, err := Linearizable(w.Initial, w.Ops, notInDrain, 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, porcupine.Ok, lin.Verdict)
	assert.Positive(t, lin.Ops)

	// The queries issued inside the splits missed buffered points: with
	// them the history is not linearizable, and the visualization is
	// written.
	full, err := Linearizable(w.Initial, w.Ops, nil, 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, porcupine.Illegal, full.Verdict)
	path, err := full.WriteVisualization(t.TempDir(), "full.html")
	require.NoError(t, err)
	assert.FileExists(t, path)
	_, err = lin.WriteVisualization(t.TempDir(), "ok.html")
	assert.Error(t, err, "no visualization of an Ok verdict")

	// A drain that lost a point.
	bad := mutate(t, w.Ops, isDrain, func(o *Op) { o.Out.Points = o.Out.Points[1:] })
	res, err := Linearizable(w.Initial, bad, notInDrain, 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, porcupine.Illegal, res.Verdict)

	agg := mutate(t, w.Ops, isDrain, func(o *Op) { o.Aggregated = true })
	_, err = Linearizable(w.Initial, agg, nil, time.Second)
	assert.ErrorContains(t, err, "aggregated")
}

// The keyed model: states that differ only in how keys interleave are equal
// and hash alike; a different order within a key is a different state.
func TestKeyedModel(t *testing.T) {
	p := func(k string, ts int64) model.Point { return model.Point{Key: k, TS: ts, Value: float64(ts)} }
	m := keyedModel(model.NewCollectorState())
	a := model.NewCollectorState(p("a", 1), p("b", 2), p("a", 3))
	b := model.NewCollectorState(p("b", 2), p("a", 1), p("a", 3))
	c := model.NewCollectorState(p("a", 3), p("b", 2), p("a", 1))
	assert.True(t, m.Equal(a, b))
	assert.Equal(t, m.Hash(a), m.Hash(b))
	assert.False(t, m.Equal(a, c))
	assert.NotEqual(t, m.Hash(a), m.Hash(c))
}

// The layout replays the collector's chunking: runs of 1,024, whole moves
// and straddling splits.
func TestLayoutPredictsTheSplit(t *testing.T) {
	l := newLayout()
	for i := range 2_500 {
		l.record(model.Point{Key: "k", TS: int64(i), Value: float64(i)})
	}
	require.Len(t, l.live["k"].chunks, 3)
	assert.Equal(t, []int{1024, 1024, 452}, []int{len(l.live["k"].chunks[0].pts), len(l.live["k"].chunks[1].pts), len(l.live["k"].chunks[2].pts)})
	kept, st := l.swap(1_500)
	assert.Equal(t, collector.DrainStats{Buffered: 2_500, Drained: 1_500, Kept: 1_000, Keys: 1, ChunksMoved: 2, ChunksSplit: 1, PointsCopied: 1_024}, st)
	l.record(model.Point{Key: "k", TS: 0, Value: -1})
	l.record(model.Point{Key: "new", TS: 0, Value: -2})
	l.putBack(kept, &st)
	assert.EqualValues(t, 2, st.RecordedDuringSplit)
	assert.EqualValues(t, 2, st.ChunksRecordedDuringSplit)
	assert.EqualValues(t, 2, st.MovedUnderLock)
	pts := l.points("k")
	assert.Len(t, pts, 1_001)
	assert.Equal(t, -1.0, pts[1_000].Value, "the point recorded during the split comes after the kept ones")
	assert.EqualValues(t, 500+1+1, l.prune(2_000), "the kept points under 2,000 and both recorded during the split")
	assert.Equal(t, []model.Point{{Key: "k", TS: 2_000, Value: 2_000}}, l.points("k")[:1])
}

// The probe numbers write acquisitions exactly and sees the drain's yields:
// one per key and one after the split.
func TestProbe(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 9}, func(s *sim.Sim) {
		w, err := New(s, Config{Keys: []string{"a", "b", "c"}})
		if err != nil {
			s.Failf("%v", err)
		}
		w.Preload(10)
		assert.EqualValues(t, 30, w.Probe.Writes())
		op := w.Record("t", "a", w.Stamps.Base)
		assert.EqualValues(t, 31, op.Writes)
		assert.False(t, w.Probe.WriteHeld())
		q := w.Query("t", "a", w.Stamps.Base-1, w.Stamps.Base+int64(time.Hour))
		assert.EqualValues(t, 31, q.Writes, "a read takes no write lock")
		var held, drainHeld []bool
		w.Probe.OnYield = func() {
			held = append(held, w.Probe.WriteHeld())
			drainHeld = append(drainHeld, w.Probe.DrainMutexHeld())
		}
		d := w.Drain(context.Background(), "t", Everything)
		assert.EqualValues(t, 33, d.Writes, "two acquisitions by the drain")
		assert.Equal(t, []bool{false, false, false, false}, held)
		assert.Equal(t, []bool{true, true, true, true}, drainHeld)
		acq, rel := w.Probe.AcquiredAt(33)
		assert.Positive(t, acq)
		assert.GreaterOrEqual(t, rel, acq, "released after it was acquired, on the world's clock")
		assert.False(t, w.Probe.DrainMutexHeld())
	})
	require.NoError(t, res.Err)
	_, err := New(nil, Config{Keys: []string{"only"}})
	assert.Error(t, err, "one key")
}

func TestStampsAreOutOfOrderOnAGrid(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 2}, func(s *sim.Sim) {
		g := DefaultStamps()
		var ts []int64
		for range 2_000 {
			ts = append(ts, g.Next(s.Rand()))
		}
		assert.False(t, slices.IsSorted(ts))
		for _, x := range ts {
			assert.Zero(t, (x-g.Base)%int64(g.Spacing))
		}
		assert.EqualValues(t, 2_000, g.Arrivals())
	})
	require.NoError(t, res.Err)
}
