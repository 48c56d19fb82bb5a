package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

// busyProgram exercises every kind of scheduling point: locks, sleeps,
// timers, events and spawning.
func busyProgram(s *Sim) {
	mu := s.NewMutex("m")
	rw := s.NewRWMutex("rw")
	ev := s.NewEvent("go")
	wg := s.NewWaitGroup("all")
	shared := 0
	for i := range 4 {
		wg.Add(1)
		s.Go(fmt.Sprintf("w%d", i), func() {
			defer wg.Done()
			_ = ev.Wait(bg)
			for j := range 5 {
				mu.Lock()
				shared++
				mu.Unlock()
				if j%2 == 0 {
					rw.RLock()
					//lint:ignore SA2001 the lock operations are the scheduling points under test
					rw.RUnlock()
				} else {
					rw.Lock()
					//lint:ignore SA2001 the lock operations are the scheduling points under test
					rw.Unlock()
				}
				_ = s.Sleep(bg, time.Duration(s.Rand().IntN(3))*time.Millisecond)
			}
		})
	}
	s.AfterFunc(time.Millisecond, func() { ev.Set() })
	_ = wg.Wait(bg)
	if shared != 20 {
		s.Failf("shared = %d", shared)
	}
}

// Test 1: 1,000 seeds each run twice give identical trace hashes; different
// seeds give different schedules.
func TestSameSeedSameTraceDifferentSeedsDifferentSchedules(t *testing.T) {
	seen := map[uint64]uint64{}
	for seed := uint64(0); seed < 1000; seed++ {
		a := Run(Config{Seed: seed}, busyProgram)
		b := Run(Config{Seed: seed}, busyProgram)
		require.NoError(t, a.Err, "seed %d", seed)
		require.Equal(t, a.Hash, b.Hash, "seed %d ran twice with different traces", seed)
		require.Equal(t, a.Steps, b.Steps)
		if other, dup := seen[a.Hash]; dup {
			t.Fatalf("seeds %d and %d produced the same schedule", other, seed)
		}
		seen[a.Hash] = seed
	}
}

// checkThenAct: each task reads a shared value under the lock, releases it,
// then writes value+1 under the lock. Two increments can collapse into one.
func checkThenAct(buggy bool) func(s *Sim) {
	return func(s *Sim) {
		mu := s.NewMutex("x")
		wg := s.NewWaitGroup("inc")
		x := 0
		for i := range 2 {
			wg.Add(1)
			s.Go(fmt.Sprint("inc", i), func() {
				defer wg.Done()
				if buggy {
					mu.Lock()
					v := x
					mu.Unlock()
					mu.Lock()
					x = v + 1
					mu.Unlock()
				} else {
					mu.Lock()
					x++
					mu.Unlock()
				}
			})
		}
		_ = wg.Wait(bg)
		if x != 2 {
			s.Failf("lost update: x = %d after two increments", x)
		}
	}
}

func firstFailingSeed(n uint64, strategy func() Strategy, prog func(*Sim)) (uint64, bool) {
	for seed := uint64(0); seed < n; seed++ {
		if Run(Config{Seed: seed, Strategy: strategy()}, prog).Err != nil {
			return seed, true
		}
	}
	return 0, false
}

// Test 2a: the check-then-act bug is found by random walk and by PCT within
// 1,000 seeds, and never on the correct version.
func TestCheckThenActIsFound(t *testing.T) {
	strategies := map[string]func() Strategy{
		"random": RandomWalk,
		"pct":    func() Strategy { return PCT(2, 20) },
	}
	for name, st := range strategies {
		t.Run(name, func(t *testing.T) {
			seed, found := firstFailingSeed(1000, st, checkThenAct(true))
			require.True(t, found, "%s never found the lost update in 1,000 seeds", name)
			t.Logf("%s found the lost update at seed %d", name, seed)
			_, found = firstFailingSeed(1000, st, checkThenAct(false))
			require.False(t, found, "%s reported a failure on the correct version", name)
		})
	}
}

// depth2 has a bug of depth 2: task a reads x, then writes x+1; task b writes
// x=5. It fails only if b's write falls between a's read and a's write (two
// ordering constraints). Padding yields make the run k steps long.
func depth2(pad int) func(s *Sim) {
	return func(s *Sim) {
		wg := s.NewWaitGroup("ab")
		x := 0
		wg.Add(2)
		s.Go("a", func() {
			defer wg.Done()
			for range pad {
				s.Yield()
			}
			r := x
			s.Yield()
			x = r + 1
		})
		s.Go("b", func() {
			defer wg.Done()
			for range pad {
				s.Yield()
			}
			x = 5
		})
		_ = wg.Wait(bg)
		if x == 1 { // r was read before b wrote, and written after
			s.Failf("b's write was lost: x = %d", x)
		}
	}
}

// Test 2b: PCT's observed detection rate on a depth-2 bug is at least its
// guaranteed lower bound 1/(n·k^(d−1)).
func TestPCTMeetsItsBoundOnADepth2Bug(t *testing.T) {
	const pad = 10
	calib := Run(Config{Seed: 1}, depth2(pad))
	k := calib.Steps
	n := int64(calib.Tasks)
	const runs = 2000
	found := 0
	for seed := uint64(0); seed < runs; seed++ {
		if Run(Config{Seed: seed, Strategy: PCT(2, k)}, depth2(pad)).Err != nil {
			found++
		}
	}
	rate := float64(found) / runs
	bound := 1 / float64(n*k)
	t.Logf("PCT(d=2, k=%d, n=%d): %d/%d runs found the bug (rate %.4f, bound %.4f)", k, n, found, runs, rate, bound)
	assert.GreaterOrEqual(t, rate, bound)
}

// Test 3: Sleep and timers advance virtual time exactly; a context deadline
// fires at its virtual instant; a lock acquire with a deadline gives up at it.
func TestVirtualTimeIsExact(t *testing.T) {
	var log []string
	at := func(s *Sim, what string) { log = append(log, fmt.Sprintf("%v %s", s.Elapsed(), what)) }
	res := Run(Config{Seed: 7}, func(s *Sim) {
		require.True(t, s.Now().Equal(Epoch))
		require.NoError(t, s.Sleep(bg, 1500*time.Millisecond))
		at(s, "slept")

		fired := s.NewEvent("fired")
		s.AfterFunc(2*time.Second, func() { at(s, "afterfunc"); fired.Set() })
		stopped := s.AfterFunc(time.Second, func() { at(s, "stopped timer ran") })
		assert.True(t, stopped.Stop())
		assert.False(t, stopped.Stop())
		require.NoError(t, fired.Wait(bg))

		ctx, cancel := s.WithTimeout(bg, 250*time.Millisecond)
		defer cancel()
		dl, ok := ctx.Deadline()
		assert.True(t, ok)
		assert.Equal(t, 250*time.Millisecond, dl.Sub(s.Now()))
		err := s.Sleep(ctx, time.Hour)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		at(s, "deadline")

		mu := s.NewMutex("held")
		holding := s.NewEvent("holding")
		s.Go("holder", func() {
			mu.Lock()
			holding.Set()
			_ = s.Sleep(bg, 10*time.Second)
			mu.Unlock()
		})
		require.NoError(t, holding.Wait(bg))
		lctx, lcancel := s.WithTimeout(bg, 300*time.Millisecond)
		defer lcancel()
		assert.ErrorIs(t, mu.LockContext(lctx), context.DeadlineExceeded)
		at(s, "lock gave up")
		assert.NoError(t, mu.LockContext(bg))
		at(s, "lock acquired")
		mu.Unlock()

		cctx, ccancel := s.WithCancel(bg)
		s.AfterFunc(time.Second, ccancel)
		assert.ErrorIs(t, s.Sleep(cctx, time.Hour), context.Canceled)
		at(s, "cancelled")
	})
	require.NoError(t, res.Err)
	assert.Equal(t, []string{
		"1.5s slept",
		"3.5s afterfunc",
		"3.75s deadline",
		"4.05s lock gave up",
		"13.75s lock acquired",
		"14.75s cancelled",
	}, log)
}

func TestStepDurationMovesTimeWhileTasksRun(t *testing.T) {
	res := Run(Config{Seed: 1, StepDuration: time.Microsecond}, func(s *Sim) {
		for range 10 {
			s.Yield()
		}
	})
	require.NoError(t, res.Err)
	assert.Equal(t, time.Duration(res.Steps)*time.Microsecond, res.Elapsed)
}

// Timers due within one idle sleep wake together, at the sleep's end; a
// timer due later waits for a whole sleep more, counted from the first one's
// end. Without IdleWake each wakes at its own instant.
func TestIdleWakeBatchesTimersDueWithinOneSleep(t *testing.T) {
	wakes := func(idle time.Duration) []string {
		var log []string
		res := Run(Config{Seed: 1, IdleWake: idle}, func(s *Sim) {
			for _, d := range []time.Duration{300 * time.Microsecond, 800 * time.Microsecond, 1500 * time.Microsecond} {
				s.Go("sleeper", func() {
					require.NoError(t, s.Sleep(context.Background(), d))
					log = append(log, fmt.Sprintf("%v woke at %v", d, s.Elapsed()))
				})
			}
			require.NoError(t, s.Sleep(context.Background(), 3*time.Millisecond))
		})
		require.NoError(t, res.Err)
		slices.Sort(log)
		return log
	}
	assert.Equal(t, []string{"1.5ms woke at 1.5ms", "300µs woke at 300µs", "800µs woke at 800µs"}, wakes(0))
	assert.Equal(t, []string{"1.5ms woke at 2ms", "300µs woke at 1ms", "800µs woke at 1ms"}, wakes(time.Millisecond))
}

func opposite(s *Sim) {
	a, b := s.NewMutex("A"), s.NewMutex("B")
	wg := s.NewWaitGroup("both")
	wg.Add(2)
	s.Go("ab", func() {
		defer wg.Done()
		a.Lock()
		b.Lock() // waits here in a deadlock
		//lint:ignore SA2001 the test only needs both locks taken in this order
		b.Unlock()
		a.Unlock()
	})
	s.Go("ba", func() {
		defer wg.Done()
		b.Lock()
		a.Lock() // waits here in a deadlock
		//lint:ignore SA2001 the test only needs both locks taken in this order
		a.Unlock()
		b.Unlock()
	})
	_ = wg.Wait(bg)
}

// Test 4: an opposite-order locking deadlock is reported with both tasks and
// their wait sites.
func TestDeadlockNamesTasksAndWaitSites(t *testing.T) {
	var f *Failure
	for seed := uint64(0); seed < 200 && f == nil; seed++ {
		f = Run(Config{Seed: seed}, opposite).Failure()
	}
	require.NotNil(t, f, "no seed in 200 deadlocked")
	require.Equal(t, FailDeadlock, f.Kind)
	byName := map[string]BlockedTask{}
	for _, bt := range f.Blocked {
		byName[bt.Name] = bt
	}
	require.Contains(t, byName, "ab")
	require.Contains(t, byName, "ba")
	assert.Contains(t, byName["ab"].Wait, "Lock mutex B")
	assert.Contains(t, byName["ba"].Wait, "Lock mutex A")
	assert.Regexp(t, `sim_test\.go:\d+$`, byName["ab"].Site)
	assert.Regexp(t, `sim_test\.go:\d+$`, byName["ba"].Site)
	assert.NotEqual(t, byName["ab"].Site, byName["ba"].Site)
	assert.Contains(t, byName["main"].Wait, "WaitGroup.Wait")
	assert.Contains(t, f.Error(), `"ab" waits in Lock mutex B`)
}

// Test 5: replaying a failing seed's decisions reproduces the same trace
// hash and the same failure.
func TestReplayReproducesAFailure(t *testing.T) {
	seed, found := firstFailingSeed(1000, RandomWalk, checkThenAct(true))
	require.True(t, found)
	orig := Run(Config{Seed: seed, RecordDecisions: true}, checkThenAct(true))
	require.Error(t, orig.Err)
	again := Run(Config{Seed: seed, Strategy: Replay(orig.Decisions)}, checkThenAct(true))
	require.Error(t, again.Err)
	assert.Equal(t, orig.Hash, again.Hash)
	assert.Equal(t, orig.Err.Error(), again.Err.Error())

	// A recording that does not fit the program is a clear failure.
	bad := append([]int32{}, orig.Decisions...)
	bad[len(bad)/2] = 99
	f := Run(Config{Seed: seed, Strategy: Replay(bad)}, checkThenAct(true)).Failure()
	require.NotNil(t, f)
	assert.Equal(t, FailReplay, f.Kind)
	assert.Contains(t, f.Message, "recorded task 99 is not runnable")
	f = Run(Config{Seed: seed, Strategy: Replay(orig.Decisions[:3])}, checkThenAct(true)).Failure()
	require.NotNil(t, f)
	assert.Contains(t, f.Message, "the recording has 3 decisions")
}

func TestPanicFailsTheRunWithTheTaskStack(t *testing.T) {
	res := Run(Config{Seed: 3}, func(s *Sim) {
		s.Go("crasher", func() {
			s.Yield()
			var m map[string]int
			//lint:ignore SA5000 the test needs a task that panics
			m["boom"] = 1
		})
		_ = s.Sleep(bg, time.Second)
	})
	f := res.Failure()
	require.NotNil(t, f)
	assert.Equal(t, FailPanic, f.Kind)
	assert.Equal(t, "crasher", f.Task)
	assert.Contains(t, f.Message, "assignment to entry in nil map")
	assert.Contains(t, f.Stack, "TestPanicFailsTheRunWithTheTaskStack")
}

func TestLimitsEndRunsInsteadOfHanging(t *testing.T) {
	spin := Run(Config{Seed: 1, MaxSteps: 1000}, func(s *Sim) {
		for {
			s.Yield()
		}
	}).Failure()
	require.NotNil(t, spin)
	assert.Equal(t, FailLimit, spin.Kind)
	assert.Contains(t, spin.Message, "step limit of 1000")

	sleeper := Run(Config{Seed: 1, MaxVirtual: time.Minute}, func(s *Sim) {
		for {
			_ = s.Sleep(bg, time.Second)
		}
	}).Failure()
	require.NotNil(t, sleeper)
	assert.Contains(t, sleeper.Message, "virtual time limit of 1m0s")

	forker := Run(Config{Seed: 1, MaxTasks: 10}, func(s *Sim) {
		for {
			s.Go("child", func() {})
		}
	}).Failure()
	require.NotNil(t, forker)
	assert.Contains(t, forker.Message, "task limit of 10")
}

func TestBadConfigIsAClearError(t *testing.T) {
	for _, c := range []Config{{MaxSteps: -1}, {MaxTasks: -1}, {MaxVirtual: -1}, {StepDuration: -1}, {IdleWake: -1}, {TraceTail: -1}} {
		res := Run(c, func(*Sim) {})
		require.Error(t, res.Err)
		assert.Nil(t, res.Failure())
	}
	res := Run(Config{Strategy: PCT(0, 10)}, func(*Sim) {})
	assert.ErrorContains(t, res.Err, "PCT depth must be at least 1")
}

func TestMisuseFailsLoudly(t *testing.T) {
	// Go mutexes are not owned by a goroutine, so locking twice is not an
	// error in itself; with nobody to unlock it is a deadlock, reported with
	// the line that waits.
	f := Run(Config{Seed: 1}, func(s *Sim) {
		m := s.NewMutex("once")
		m.Lock()
		m.Lock()
	}).Failure()
	require.NotNil(t, f)
	assert.Equal(t, FailDeadlock, f.Kind)
	require.Len(t, f.Blocked, 1)
	assert.Regexp(t, `sim_test\.go:\d+$`, f.Blocked[0].Site)

	f = Run(Config{Seed: 1}, func(s *Sim) {
		s.NewMutex("never").Unlock()
	}).Failure()
	require.NotNil(t, f)
	assert.Contains(t, f.Message, "Unlock of unlocked mutex never")

	f = Run(Config{Seed: 1}, func(s *Sim) {
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		_ = s.Sleep(ctx, time.Second)
	}).Failure()
	require.NotNil(t, f)
	assert.Contains(t, f.Message, "not derived with this Sim's")

	var escaped *Sim
	require.NoError(t, Run(Config{Seed: 1}, func(s *Sim) { escaped = s }).Err)
	assert.PanicsWithValue(t, "sim: an rt method was called outside a task of this Sim (from another goroutine, or after Run returned)",
		func() { escaped.Yield() })
}

// Tasks still running when main returns are unwound, and their deferred calls
// run without scheduling.
func TestUnfinishedTasksAreStopped(t *testing.T) {
	released := false
	res := Run(Config{Seed: 1}, func(s *Sim) {
		mu := s.NewMutex("m")
		s.Go("holder", func() {
			mu.Lock()
			defer func() { mu.Unlock(); released = true }()
			_ = s.Sleep(bg, time.Hour)
		})
		_ = s.Sleep(bg, time.Second)
	})
	require.NoError(t, res.Err)
	assert.True(t, released)
}

func TestRWMutexWriterPreference(t *testing.T) {
	var order []string
	res := Run(Config{Seed: 5}, func(s *Sim) {
		rw := s.NewRWMutex("rw")
		wg := s.NewWaitGroup("all")
		rw.RLock()
		wg.Add(2)
		s.Go("writer", func() {
			defer wg.Done()
			rw.Lock()
			order = append(order, "writer")
			rw.Unlock()
		})
		_ = s.Sleep(bg, time.Millisecond) // the writer is now waiting
		s.Go("late reader", func() {
			defer wg.Done()
			assert.False(t, rw.TryRLock(), "a waiting writer keeps new readers out")
			rw.RLock()
			order = append(order, "late reader")
			rw.RUnlock()
		})
		_ = s.Sleep(bg, time.Millisecond)
		order = append(order, "first reader done")
		rw.RUnlock()
		_ = wg.Wait(bg)

		ctx, cancel := s.WithTimeout(bg, time.Second)
		defer cancel()
		rw.RLock()
		assert.ErrorIs(t, rw.LockContext(ctx), context.DeadlineExceeded)
		assert.True(t, rw.TryRLock(), "a writer that gave up lets readers in again")
		rw.RUnlock()
		rw.RUnlock()
	})
	require.NoError(t, res.Err)
	assert.Equal(t, []string{"first reader done", "writer", "late reader"}, order)
}

func TestContextTree(t *testing.T) {
	res := Run(Config{Seed: 2}, func(s *Sim) {
		parent, cancelParent := s.WithCancel(bg)
		child, cancelChild := s.WithTimeout(parent, time.Hour)
		defer cancelChild()
		grandchild, cancelG := s.WithDeadline(child, s.Now().Add(2*time.Hour))
		defer cancelG()
		dl, _ := grandchild.Deadline()
		assert.Equal(t, time.Hour, dl.Sub(s.Now()), "a child keeps its parent's earlier deadline")
		done := s.NewEvent("woke")
		s.Go("waiter", func() {
			assert.ErrorIs(t, s.Sleep(grandchild, 3*time.Hour), context.Canceled)
			done.Set()
		})
		_ = s.Sleep(bg, time.Minute)
		cancelParent()
		require.NoError(t, done.Wait(bg))
		assert.Equal(t, time.Minute, s.Elapsed())
		assert.True(t, errors.Is(child.Err(), context.Canceled))
		late, cancelLate := s.WithCancel(parent)
		defer cancelLate()
		assert.ErrorIs(t, late.Err(), context.Canceled, "derived from a cancelled parent")
		select {
		case <-grandchild.Done():
		default:
			t.Error("Done is closed after cancellation")
		}
	})
	require.NoError(t, res.Err)
}

func TestFailureReportHasTheTraceTail(t *testing.T) {
	res := Run(Config{Seed: 9, TraceTail: 8}, func(s *Sim) {
		s.Note("plan: loss=%d%%", 10)
		s.Go("worker", func() { s.Tracef("commit %d", 1); s.Yield() })
		_ = s.Sleep(bg, time.Second)
		s.Failf("expected %d, got %d", 1, 2)
	})
	f := res.Failure()
	require.NotNil(t, f)
	assert.Equal(t, FailCheck, f.Kind)
	assert.Equal(t, "expected 1, got 2", f.Message)
	assert.Equal(t, []string{"plan: loss=10%"}, res.Header)
	assert.LessOrEqual(t, len(res.Tail), 8)
	assert.Contains(t, strings.Join(res.Tail, "\n"), "note  [1 worker] commit 1")
}
