package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// posWatch wraps POS and checks, at every decision, the property that
// defines it: a runnable task's priority changes only when its pending step
// races with the step that just ran, or when it ran that step itself.
type posWatch struct {
	*pos
	t         *testing.T
	kept      int // priorities left alone beside a step on another object
	redrawn   int // priorities re-drawn for a race
	violation string
}

func (w *posWatch) pick(s *Sim) int {
	before := map[*task]int64{}
	for _, t := range s.runnable {
		before[t] = t.prio
	}
	last, done := w.last, footprint(w.lastObj, s.touched, s.touchedObj)
	i := w.pos.pick(s)
	if last == nil {
		return i
	}
	for t, p := range before {
		switch {
		case t == last:
		case !independent(done, t.obj):
			if t.prio != p {
				w.redrawn++
			}
		case t.prio != p:
			w.violation = t.name + "'s priority changed beside a step on another object"
		default:
			w.kept++
		}
	}
	return i
}

// lockers runs two tasks that take mutex m in turns and two that take n: a
// step on m races only with the tasks pending on m.
func lockers(s *Sim) {
	wg := s.NewWaitGroup("all")
	m, n := s.NewMutex("m"), s.NewMutex("n")
	for _, g := range []struct {
		name string
		mu   interface {
			Lock()
			Unlock()
		}
	}{{"m1", m}, {"m2", m}, {"n1", n}, {"n2", n}} {
		wg.Add(1)
		s.Go(g.name, func() {
			defer wg.Done()
			for range 20 {
				g.mu.Lock()
				g.mu.Unlock()
			}
		})
	}
	_ = wg.Wait(bg)
}

func TestPOSRedrawsOnlyRacingPriorities(t *testing.T) {
	w := &posWatch{pos: &pos{}, t: t}
	res := Run(Config{Seed: 3, Strategy: w}, lockers)
	require.NoError(t, res.Err)
	assert.Empty(t, w.violation)
	assert.Positive(t, w.redrawn, "steps on a lock re-draw the priorities of the tasks pending on it")
	assert.Positive(t, w.kept, "steps on one lock leave the priorities of the tasks pending on the other")
	assert.Equal(t, int64(w.redrawn), w.pos.redrawn)
	t.Logf("POS on two locks: %d priorities re-drawn for races, %d kept", w.redrawn, w.kept)
}

func TestNewStrategiesAreDeterministic(t *testing.T) {
	prof := surwProfileOf(t, lockers)
	for _, mk := range []func() Strategy{POS, func() Strategy { return SURW(prof) }} {
		run := func(seed uint64) []int32 {
			res := Run(Config{Seed: seed, Strategy: mk(), RecordDecisions: true}, lockers)
			require.NoError(t, res.Err)
			return res.Decisions
		}
		a, b := run(11), run(11)
		assert.Equal(t, a, b, "%s: the same seed gives the same schedule", mk())
		differ := false
		for seed := uint64(12); seed < 20 && !differ; seed++ {
			differ = !slices.Equal(a, run(seed))
		}
		assert.True(t, differ, "%s: other seeds give other schedules", mk())
		// A recorded schedule replays exactly.
		res := Run(Config{Seed: 11, Strategy: Replay(a), RecordDecisions: true}, lockers)
		require.NoError(t, res.Err)
		assert.Equal(t, a, res.Decisions)
	}
}

// TestPOSFindsADepth2Bug: POS finds the lost write of depth2 at a rate
// like random walk's (every step there is a Yield, which races with all).
func TestPOSFindsADepth2Bug(t *testing.T) {
	found := 0
	for seed := range uint64(400) {
		if Run(Config{Seed: seed, Strategy: POS()}, depth2(4)).Err != nil {
			found++
		}
	}
	t.Logf("POS: %d/400 runs found depth2's lost write", found)
	assert.Positive(t, found)
}
