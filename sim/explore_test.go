package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoChains: main spawns a and b and waits for both. Each first sleeps 1 ms,
// so that both are asleep when main has finished spawning, then yields nA
// (nB) times and calls Done.
//
// Counting (schedules are maximal decision lists; a decision with one
// runnable task still counts as a step but does not branch):
//
// Before the clock jump. Main's steps: M0 start→Add (alone), M1 Add→Go(a)
// (a now exists), M2 →Go(b), M3 →Wait, M4 Wait→blocks. a0 (start→Sleep,
// blocks) comes after M1, b0 after M2. After M1 the orders of M2<M3<M4
// with a0 anywhere and b0 after M2 number 5·3 = 15. Count them by
// preemptions (a switch away from main while it could go on; a0 and b0
// block, so switching after them is free), with gaps g1 (before M2) … g4
// (after M4). With a0, b0 both in g4: 0 preemptions, 2 schedules. With one
// occupied gap among g1..g3: 1, 9 schedules. With two: 2, 4 schedules. So
// preBefore = {2, 9, 4}.
//
// After the jump both wake together. a runs x = nA+2 steps (wake→Y1, …,
// Yn→Done's yield, Done→end), b y = nB+2, in any merge; when both are done
// main's last step is forced. The first decision is free (the last task to
// run blocked); a switch while the running task could go on is a
// preemption, except the one switch after the first of them ends. A merge
// in r blocks has r−2 preemptions; merges with r blocks starting with a:
// C(x−1, ⌈r/2⌉−1)·C(y−1, ⌊r/2⌋−1).
//
// Without a bound: 15·C(x+y, x). With bound P: Σ_j preBefore[j]·f(P−j),
// f(q) = merges with at most q preemptions.
func twoChains(nA, nB int) func(*Sim) {
	return func(s *Sim) {
		wg := s.NewWaitGroup("ab")
		wg.Add(2)
		for _, c := range []struct {
			name string
			n    int
		}{{"a", nA}, {"b", nB}} {
			s.Go(c.name, func() {
				defer wg.Done()
				_ = s.Sleep(bg, time.Millisecond)
				for range c.n {
					s.Yield()
				}
			})
		}
		_ = wg.Wait(bg)
	}
}

func binom(n, k int) int64 {
	if k < 0 || k > n {
		return 0
	}
	r := int64(1)
	for i := 1; i <= k; i++ {
		r = r * int64(n-k+i) / int64(i)
	}
	return r
}

// mergesWithin counts merges of chains of x and y steps with at most q
// preemptions (r−2 for r blocks).
func mergesWithin(x, y, q int) int64 {
	var total int64
	for r := 2; r <= q+2; r++ {
		hi, lo := (r+1)/2, r/2
		total += binom(x-1, hi-1)*binom(y-1, lo-1) + binom(y-1, hi-1)*binom(x-1, lo-1)
	}
	return total
}

func TestExploreCountsMatchTheClosedForm(t *testing.T) {
	preBefore := []int64{2, 9, 4}
	for _, c := range [][2]int{{0, 0}, {1, 0}, {2, 3}, {3, 3}, {5, 1}} {
		nA, nB := c[0], c[1]
		x, y := nA+2, nB+2
		t.Run(fmt.Sprintf("n=%d,m=%d", nA, nB), func(t *testing.T) {
			res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: unboundedPreemptions}, twoChains(nA, nB))
			require.NoError(t, res.Err)
			assert.True(t, res.proven(), res.String())
			assert.Equal(t, 15*binom(x+y, x), res.Explored, "15·C(x+y, x)")
			assert.Equal(t, res.Explored, res.Runs)
			assert.Zero(t, res.Pruned)

			for p := range 4 {
				var want int64
				for j, n := range preBefore {
					if j <= p {
						want += n * mergesWithin(x, y, p-j)
					}
				}
				res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: p}, twoChains(nA, nB))
				assert.True(t, res.Exhausted)
				assert.Equal(t, want, res.Explored, "P=%d", p)
				assert.LessOrEqual(t, res.MaxPreemptionsUsed, p)
			}

			// The reductions: a0, b0 and main's steps after M1 commute (a0 and
			// b0 touch only their own tasks, M2 spawns, M3 is main's own, M4
			// is on the wait group), so the 15 orders before the jump are one
			// trace. After it every step is a Yield or a wake from Sleep,
			// dependent with everything, so all C(x+y, x) merges stay.
			for _, red := range []Reduction{ReductionSleepSets, ReductionDPOR} {
				res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: unboundedPreemptions, Reduction: red}, twoChains(nA, nB))
				assert.True(t, res.proven(), res.String())
				assert.Equal(t, binom(x+y, x), res.Explored, "%v", red)
				assert.Positive(t, res.Pruned, "%v", red)
			}
		})
	}
}

func TestExploreNonPreemptiveIsTheZeroValue(t *testing.T) {
	res := Explore(Config{Seed: 1}, ExploreOptions{}, twoChains(2, 2))
	require.True(t, res.proven(), res.String())
	// Main runs until it blocks; then a or b first, each to the end; then
	// after the clock jump, a or b first again: 2·2.
	assert.Equal(t, int64(4), res.Explored)
	assert.Zero(t, res.MaxPreemptionsUsed)
}

func TestExploreFindsTheCheckThenActBugWithOnePreemption(t *testing.T) {
	for _, red := range []Reduction{ReductionNone, ReductionDPOR} {
		t.Run(red.String(), func(t *testing.T) {
			res := Explore(Config{Seed: 1}, ExploreOptions{Reduction: red}, checkThenAct(true))
			require.True(t, res.proven(), "without preemptions each increment is atomic: %v", res)

			res = Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: 1, Reduction: red, StopOnFailure: true}, checkThenAct(true))
			require.NotNil(t, res.Failure, res.String())
			assert.Contains(t, res.Failure.Message, "lost update")
			assert.False(t, res.Exhausted)
			assertReplays(t, res, checkThenAct(true))

			res = Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: 2, Reduction: red}, checkThenAct(false))
			assert.True(t, res.proven(), res.String())
		})
	}
}

func TestExploreFindsTheDepth2Bug(t *testing.T) {
	for _, pad := range []int{0, 3, 10} {
		for _, p := range []int{1, 2} {
			for _, red := range []Reduction{ReductionNone, ReductionDPOR} {
				res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: p, Reduction: red, StopOnFailure: true}, depth2(pad))
				require.NotNil(t, res.Failure, "pad=%d P=%d %v: %v", pad, p, red, res)
				assert.Contains(t, res.Failure.Message, "b's write was lost")
				assertReplays(t, res, depth2(pad))
			}
		}
	}
	// Unbounded with sleep sets too: the plain variable is touched only
	// right after Yield, a step dependent with everything.
	res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: unboundedPreemptions, Reduction: ReductionSleepSets, StopOnFailure: true}, depth2(3))
	require.NotNil(t, res.Failure, res.String())
	assertReplays(t, res, depth2(3))
}

// assertReplays checks that a failing schedule's decisions, replayed with
// the same seed, give the same failure.
func assertReplays(t *testing.T, res ExploreResult, prog func(*Sim)) {
	t.Helper()
	again := Run(Config{Seed: 1, Strategy: Replay(res.Decisions)}, prog)
	f := again.Failure()
	require.NotNil(t, f, "replay of %v did not fail", res.Decisions)
	assert.Equal(t, res.Failure.Kind, f.Kind)
	assert.Equal(t, res.Failure.Error(), f.Error())
	assert.Equal(t, res.FailedRun.Hash, again.Hash)
}

func TestExploreFindsTheDeadlockOnlyWithAPreemption(t *testing.T) {
	res := Explore(Config{Seed: 1}, ExploreOptions{Reduction: ReductionDPOR}, opposite)
	assert.True(t, res.proven(), "without preemptions each task takes both locks in one go: %v", res)

	for _, red := range []Reduction{ReductionNone, ReductionDPOR} {
		res = Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: 1, Reduction: red}, opposite)
		require.NotNil(t, res.Failure, res.String())
		assert.Equal(t, FailDeadlock, res.Failure.Kind)
		assert.True(t, res.Exhausted, "without StopOnFailure the search goes on")
		assert.Positive(t, res.Failures)
		assert.Less(t, res.Failures, res.Explored)
		assertReplays(t, res, opposite)
	}
}

func TestExploreReportsASpaceLargerThanTheLimit(t *testing.T) {
	res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: unboundedPreemptions, MaxSchedules: 50}, twoChains(4, 4))
	require.NoError(t, res.Err)
	assert.False(t, res.Exhausted)
	assert.False(t, res.proven())
	assert.Equal(t, int64(50), res.Runs)
	assert.Equal(t, int64(50), res.Explored)
	assert.Contains(t, res.String(), "explored 50 schedules")
	assert.Contains(t, res.String(), "NOT exhausted")

	// A limit exactly the size of the space is exhausted.
	res = Explore(Config{Seed: 1}, ExploreOptions{MaxSchedules: 4}, twoChains(2, 2))
	assert.True(t, res.Exhausted, res.String())
	assert.Contains(t, res.String(), "space exhausted")
}

func TestExploreBadOptionsAreClearErrors(t *testing.T) {
	prog := twoChains(1, 1)
	cases := []struct {
		cfg  Config
		opts ExploreOptions
		want string
	}{
		{Config{}, ExploreOptions{MaxPreemptions: -2}, "MaxPreemptions must be at least 0"},
		{Config{}, ExploreOptions{MaxSchedules: -1}, "MaxSchedules must not be negative"},
		{Config{}, ExploreOptions{Reduction: Reduction(9)}, "unknown reduction 9"},
		{Config{}, ExploreOptions{MaxPreemptions: 2, Reduction: ReductionSleepSets}, "unsound under a preemption bound"},
		{Config{StepDuration: time.Microsecond}, ExploreOptions{Reduction: ReductionDPOR}, "needs StepDuration 0"},
		{Config{Strategy: RandomWalk()}, ExploreOptions{}, "leave Config.Strategy nil"},
		{Config{MaxSteps: -1}, ExploreOptions{}, "MaxSteps must be positive"},
	}
	for _, c := range cases {
		res := Explore(c.cfg, c.opts, prog)
		assert.ErrorContains(t, res.Err, c.want)
		assert.Zero(t, res.Runs)
		assert.False(t, res.proven())
	}
	assert.ErrorContains(t, Explore(Config{}, ExploreOptions{}, nil).Err, "needs a main function")
	assert.Equal(t, "Reduction(7)", Reduction(7).String())
}

func TestExploreRejectsANondeterministicProgram(t *testing.T) {
	runs := 0
	res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: 1}, func(s *Sim) {
		runs++ // state kept between runs: from the second run on, one task more
		if runs > 1 {
			s.Go("late", func() {})
		}
		wg := s.NewWaitGroup("w")
		wg.Add(1)
		s.Go("w", func() { defer wg.Done(); s.Yield() })
		_ = wg.Wait(bg)
	})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "not deterministic under a fixed schedule")
	assert.False(t, res.Exhausted)
}

func TestExploreTimersAndContexts(t *testing.T) {
	// A worker waits for an event with a deadline; a setter sets it after a
	// sleep that is sometimes shorter, sometimes equal to the deadline.
	prog := func(s *Sim) {
		ev := s.NewEvent("ready")
		var got error
		done := s.NewWaitGroup("done")
		done.Add(2)
		s.Go("waiter", func() {
			defer done.Done()
			ctx, cancel := s.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			got = ev.Wait(ctx)
		})
		s.Go("setter", func() {
			defer done.Done()
			_ = s.Sleep(bg, 10*time.Millisecond)
			ev.Set()
		})
		_ = done.Wait(bg)
		if got != nil {
			s.Failf("waiter gave up: %v", got)
		}
	}
	// The deadline and the sleep end at the same instant: whether the
	// setter's Set runs before the waiter sees the deadline is a race the
	// search must find.
	for _, red := range []Reduction{ReductionNone, ReductionDPOR} {
		res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: unboundedPreemptions, Reduction: red}, prog)
		require.NoError(t, res.Err)
		assert.True(t, res.Exhausted)
		assert.Positive(t, res.Failures, "%v: %v", red, res)
		assert.Less(t, res.Failures, res.Explored, "%v: %v", red, res)
	}
}

func TestExploreResultString(t *testing.T) {
	res := Explore(Config{Seed: 1}, ExploreOptions{MaxPreemptions: 1, StopOnFailure: true}, checkThenAct(true))
	s := res.String()
	assert.Contains(t, s, "1 failing, first: check at step")
	assert.Contains(t, s, fmt.Sprintf("replay: %d decisions", len(res.Decisions)))
	assert.True(t, strings.HasPrefix(s, "explored "))
	assert.Contains(t, Explore(Config{}, ExploreOptions{MaxSchedules: -1}, checkThenAct(true)).String(), "error: sim: MaxSchedules")
	assert.Equal(t, "explore(preemptions=unbounded,reduction=dpor)", newExplorer(ExploreOptions{MaxPreemptions: -1, Reduction: ReductionDPOR}).String())
}
