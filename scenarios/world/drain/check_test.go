package drain

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
)

var testKeys = []string{"a", "b", "c", "d", "q"}

// lim is the source text's chunk bound, from the claims table.
var lim = checks.CollectorLimits{ChunkPoints: int(claims.Get("DR-6", "chunk points").Int())}

// testWorld runs a world that exercises every check: recorders on their own
// keys, a drainer that snapshots after each drain, a querier, a pruner, and
// at every drain yield a record on "q", a whole-key query and a prune; the
// probe inspects the chunks at every lock section.
func testWorld(t *testing.T, seed uint64) *World {
	t.Helper()
	var w *World
	res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
		var err error
		w, err = New(s, Config{Keys: testKeys, Inspect: true})
		if err != nil {
			s.Failf("%v", err)
		}
		w.Run(Plan{Preload: 1_200, Recorders: 2, RecordsEach: 20, RecorderKeys: [][]string{{"a", "b"}, {"c", "d"}},
			Drainers: 1, DrainsEach: 2, DrainDelay: 10, SnapshotAfterDrain: true, Prunes: 1, Queries: 6,
			InvariantsEveryOp: true, Hook: HookPlan{Records: true, Key: "q", Wait: true, Query: true, ProbeDrainMutex: true, Invariants: true, Prune: true},
			FinalDrain: true, FinalSnapshot: true})
	})
	require.NoError(t, res.Err)
	return w
}

func check(w *World, ops []Op, hooks []HookObs) *checks.CollectorReport {
	h := w.History()
	h.Ops, h.Yields = ops, hooks
	return checks.CheckCollector(h, lim)
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
		r := Check(w, lim)
		require.NoError(t, r.Err(), "seed %d", seed)
		assert.Len(t, r.Drains, 3)
		assert.Positive(t, r.ReadsInSplit)
		assert.NotEmpty(t, r.Deviations, "the hook queries inside the split reproduce the deviation")
		for _, d := range r.Drains {
			assert.Equal(t, 2, d.Op.Stats.WriteLocks)
			assert.Equal(t, d.Want, d.Op.Stats, "seed %d: the replayed layout predicts every count", seed)
			assert.Less(t, d.Swap, d.Put)
			require.NotNil(t, d.Outside, "seed %d: the drain's sections were inspected", seed)
			assert.Zero(t, d.Outside.CopiedUnderLock, "seed %d: %s", seed, d.Outside.Witness)
			assert.Equal(t, d.RecordsBetween-d.PrunedBetween, d.Outside.Relinked)
			assert.Equal(t, d.Op.Stats.Buffered, d.Outside.Buffered)
		}
		assert.Equal(t, lim.ChunkPoints, r.Chunks.Largest, "seed %d: full chunks were seen", seed)
		assert.LessOrEqual(t, r.Chunks.MaxReallocated, 1)
		assert.NotEmpty(t, r.Prunes)
		assert.Positive(t, r.Interleavings.RecordsInSplit)
		assert.Positive(t, r.Interleavings.RecordsAfterSplit)
		assert.Positive(t, r.Interleavings.PrunesInSplit)
		assert.Positive(t, r.Interleavings.PutBackAfterKept)
	}
}

// Every claim's check must be able to fail: each mutation of a real
// history below must be reported under its claim.
func TestCheckReportsEachViolation(t *testing.T) {
	w := testWorld(t, 3)
	require.NoError(t, Check(w, lim).Err())
	hooks := w.Hooks
	drain := w.Ops[slices.IndexFunc(w.Ops, isDrain)]
	r0 := Check(w, lim)
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
		{"DR-2", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindRecord }, func(o *Op) { o.Kind = KindDrain; o.Stats = checks.DrainCounts{} }), hooks},
		{"DR-3", w.Ops, append(slices.Clone(hooks), HookObs{N: 999, Writes: r0.Drains[0].Swap, WriteHeld: true})},
		{"DR-4", w.Ops, append(slices.Clone(hooks), HookObs{N: 999, Writes: r0.Drains[0].Swap, DrainMutexProbed: true})},
		{"DR-4", w.Ops, append(slices.Clone(hooks), HookObs{N: 999, Writes: r0.Drains[0].Put})},
		{"DR-5", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindSnapshot && o.Writes > drain.Writes && len(o.Snapshot) > 2 }, func(o *Op) {
			o.Snapshot = slices.Clone(o.Snapshot)
			i := 0
			for o.Snapshot[i].Key != o.Snapshot[i+1].Key {
				i++
			}
			o.Snapshot[i], o.Snapshot[i+1] = o.Snapshot[i+1], o.Snapshot[i]
		}), hooks},
		{"DR-6", mutate(t, w.Ops, isDrain, func(o *Op) { o.Stats.ChunksSplit++ }), hooks},
		{"DR-8", mutate(t, w.Ops, isDrain, func(o *Op) { o.Stats.LockHeld += time.Nanosecond }), hooks},
		{"DR-8", mutate(t, w.Ops, isDrain, func(o *Op) { o.Stats.MaxLockHeld = o.Stats.LockHeld }), hooks},
		{"DR-7", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindQuery && o.Yield == 0 && len(o.Out.Points) > 0 }, func(o *Op) { o.Out.Points = o.Out.Points[1:] }), hooks},
		{"DR-7", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindPrune }, func(o *Op) { o.Out.Count++ }), hooks},
		// A query inside a split that saw neither the model's answer nor the
		// live map's is not the documented deviation.
		{"DR-7", mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindQuery && o.Yield > 0 }, func(o *Op) {
			o.Out.Points = append(slices.Clone(o.Out.Points), model.Point{Key: o.In.Key, TS: 1, Value: -1})
		}), hooks},
	}
	for _, c := range cases {
		r := check(w, c.ops, c.hooks)
		assert.True(t, r.Has(c.claim), "%s not reported; got %v", c.claim, r.Violations.Of())
		assert.ErrorContains(t, r.Err(c.claim), c.claim)
	}
}

// The chunk checks judge what the inspections saw: forged layouts of a
// real history must be reported under their claims.
func TestChunkChecksReportForgedLayouts(t *testing.T) {
	w := testWorld(t, 3)
	r0 := Check(w, lim)
	require.NoError(t, r0.Err())
	d := r0.Drains[0]
	forge := func(seq int64, f func(ws *checks.WriteSection)) *checks.CollectorReport {
		h := w.History()
		h.Writes = slices.Clone(h.Writes)
		ws := h.Writes[seq-1]
		f(&ws)
		h.Writes[seq-1] = ws
		return checks.CheckCollector(h, lim)
	}
	// The put-back installs a whole kept chunk in a new array: a copy under
	// the lock.
	r := forge(d.Put, func(ws *checks.WriteSection) {
		ws.After = cloneLayout(ws.After)
		for i := range ws.After.Series {
			if cs := ws.After.Series[i].Chunks; len(cs) > 1 {
				cs[1].Array ^= 0x5a5a0
				break
			}
		}
	})
	assert.True(t, r.Has("DR-2"), "got %v", r.Violations.Of())
	// The swap's section relinked the map it swapped out.
	r = forge(d.Swap, func(ws *checks.WriteSection) {
		ws.OldAfter = &checks.Layout{Map: ws.OldAfter.Map}
	})
	assert.True(t, r.Has("DR-2"), "got %v", r.Violations.Of())
	// A chunk bigger than the bound, and one with wrong stored bounds.
	r = forge(d.Swap, func(ws *checks.WriteSection) {
		ws.Before = cloneLayout(ws.Before)
		c := &ws.Before.Series[0].Chunks[0]
		c.Points = append(slices.Clone(c.Points), make([]checks.ChunkPoint, lim.ChunkPoints)...)
	})
	assert.True(t, r.Has("DR-6"), "got %v", r.Violations.Of())
	assert.Greater(t, r.Chunks.Largest, lim.ChunkPoints)
	r = forge(d.Swap, func(ws *checks.WriteSection) {
		ws.Before = cloneLayout(ws.Before)
		ws.Before.Series[0].Chunks[0].MaxTS++
	})
	assert.True(t, r.Has("DR-6"), "got %v", r.Violations.Of())
	assert.Positive(t, r.Chunks.BoundsWrong)
}

func cloneLayout(l *checks.Layout) *checks.Layout {
	out := &checks.Layout{Map: l.Map}
	for _, s := range l.Series {
		s.Chunks = slices.Clone(s.Chunks)
		out.Series = append(out.Series, s)
	}
	return out
}

// A record issued inside a split that waited for a drain's hold of the
// write lock is a DR-3 violation (the hold times are forged here: the real
// collector never does it).
func TestCheckWaitsReportsARecordThatWaited(t *testing.T) {
	w := testWorld(t, 6)
	r := Check(w, lim)
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
	h := w.History()
	h.Writes = slices.Clone(h.Writes)
	h.Writes[r.Drains[1].Swap-1].Acquired, h.Writes[r.Drains[1].Swap-1].Released = xAcq-1, x.Call+1
	forged := checks.CheckCollector(h, lim)
	assert.True(t, forged.Has("DR-3"), "got %v", forged.Violations.Of())
	assert.Positive(t, r.Drains[0].IssuedInSplit)
}

func TestCheckRejectsABrokenHarness(t *testing.T) {
	w := testWorld(t, 4)
	twice := mutate(t, w.Ops, func(o Op) bool { return o.Kind == KindRecord }, func(o *Op) { o.Writes = 1 })
	assert.True(t, check(w, twice, w.Hooks).Has("harness"), "a record claiming a preloaded write")
	h := w.History()
	h.Writes = h.Writes[:3]
	assert.True(t, checks.CheckCollector(h, lim).Has("harness"), "fewer writes than preloaded points")
	assert.True(t, checks.CheckCollector(w.History(), checks.CollectorLimits{}).Has("harness"), "no chunk limit")
}

func TestLinearizable(t *testing.T) {
	w := testWorld(t, 5)
	notInDrain := func(op Op) bool { return op.Kind != KindQuery || !checks.ConcurrentWithDrain(op, w.Ops) }
	lin, err := checks.CollectorLinearizable(w.Initial, w.Ops, notInDrain, 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, porcupine.Ok, lin.Verdict)
	assert.Positive(t, lin.Ops)

	// The queries issued inside the splits missed buffered points: with
	// them the history is not linearizable, and the visualization is
	// written.
	full, err := checks.CollectorLinearizable(w.Initial, w.Ops, nil, 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, porcupine.Illegal, full.Verdict)
	path, err := full.WriteVisualization(t.TempDir(), "full.html")
	require.NoError(t, err)
	assert.FileExists(t, path)
	_, err = lin.WriteVisualization(t.TempDir(), "ok.html")
	assert.Error(t, err, "no visualization of an Ok verdict")

	// A drain that lost a point.
	bad := mutate(t, w.Ops, isDrain, func(o *Op) { o.Out.Points = o.Out.Points[1:] })
	res, err := checks.CollectorLinearizable(w.Initial, bad, notInDrain, 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, porcupine.Illegal, res.Verdict)

	agg := mutate(t, w.Ops, isDrain, func(o *Op) { o.Aggregated = true })
	_, err = checks.CollectorLinearizable(w.Initial, agg, nil, time.Second)
	assert.ErrorContains(t, err, "aggregated")
}

// The lock order replays into another design: every recorded point once,
// the drains at their first swap.
func TestCollectorOrder(t *testing.T) {
	w := testWorld(t, 7)
	evs, err := checks.CollectorOrder(w.History())
	require.NoError(t, err)
	var recs, drains, prunes int
	for _, e := range evs {
		switch e.Kind {
		case KindRecord:
			recs++
		case KindDrain:
			drains++
		case KindPrune:
			prunes++
		}
	}
	nRec, nDrain, nPrune := len(w.Initial), 0, 0
	for _, op := range w.Ops {
		switch op.Kind {
		case KindRecord:
			nRec++
		case KindDrain:
			nDrain++
		case KindPrune:
			nPrune++
		}
	}
	assert.Equal(t, []int{nRec, nDrain, nPrune}, []int{recs, drains, prunes})
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
		assert.Nil(t, w.Probe.Sections()[32].Before, "no inspection unless asked")
	})
	require.NoError(t, res.Err)
	_, err := New(nil, Config{Keys: []string{"only"}})
	assert.Error(t, err, "one key")
}

// The inspector sees the chunks the collector holds: identities, arrays,
// bounds and points, and the map a drain swapped out.
func TestInspectorSeesTheChunks(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 9}, func(s *sim.Sim) {
		w, err := New(s, Config{Keys: []string{"a", "b"}, Inspect: true})
		if err != nil {
			s.Failf("%v", err)
		}
		w.PreloadRoundRobin(2_500)
		assert.Nil(t, w.Probe.Sections()[0].Before, "a preload is not inspected")
		op := w.Record("t", "a", w.Stamps.Base)
		ws := w.Probe.Sections()[op.Writes-1]
		require.NotNil(t, ws.Before)
		require.NotNil(t, ws.After)
		assert.Equal(t, int64(5_000), ws.Before.Points())
		assert.Equal(t, int64(5_001), ws.After.Points())
		a := ws.After.Series[0]
		assert.Equal(t, "a", a.Key)
		require.Len(t, a.Chunks, 3)
		assert.Equal(t, []int{1024, 1024, 453}, []int{len(a.Chunks[0].Points), len(a.Chunks[1].Points), len(a.Chunks[2].Points)})
		assert.Equal(t, ws.Before.Series[0].Chunks[0].Array, a.Chunks[0].Array, "a record leaves full chunks in their arrays")
		assert.EqualValues(t, 2_501, a.CountedPoints)
		pts := w.Initial
		assert.Equal(t, checks.ChunkPoint{TS: pts[0].TS, Value: pts[0].Value}, a.Chunks[0].Points[0], "key a's first point (round robin: a, b, a, b, ...)")
		d := w.Drain(context.Background(), "t", Everything)
		swap := w.Probe.Sections()[d.Writes-2]
		require.NotNil(t, swap.OldAfter, "the swap replaced the live map")
		assert.Equal(t, swap.Before.Map, swap.OldAfter.Map)
		assert.Equal(t, int64(5_001), swap.OldAfter.Points(), "the map swapped out, untouched")
		assert.Zero(t, swap.After.Points())
	})
	require.NoError(t, res.Err)
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
