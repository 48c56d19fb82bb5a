// Package rtconform is a conformance suite for rt.Runtime implementations.
// The same behavioural tests run against rt.Real() (under the race detector,
// with real goroutines and the wall clock) and against the simulator (with
// exact virtual time). So the two worlds cannot drift apart.
//
// Usage, from a test of an implementation:
//
//	rtconform.Run(t, rtconform.Env{Name: "real", Run: func(t *testing.T, body func(rt.Runtime)) { body(rt.Real()) }})
package rtconform

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Env adapts one implementation to the suite.
type Env struct {
	Name string
	// Run runs body as a task of a fresh runtime and returns once body has
	// returned. body may start further tasks and waits for them itself.
	Run func(t *testing.T, body func(r rt.Runtime))
	// Exact is true when the clock is virtual: durations are then checked
	// exactly rather than as lower bounds.
	Exact bool
}

var bg = context.Background()

// Run runs every conformance test as a subtest of t. Assertions inside
// tasks use assert (goroutine-safe), never require.
func Run(t *testing.T, env Env) {
	tests := []struct {
		name string
		f    func(t *testing.T, env Env, r rt.Runtime)
	}{
		{"MutexExcludes", mutexExcludes},
		{"RWMutexExcludesWritersOnly", rwmutexExcludes},
		{"LockContextGivesUpAtDeadline", lockContextDeadline},
		{"EndedContextNeverAcquires", endedContextNeverAcquires},
		{"TryLock", tryLock},
		{"EventReleasesEveryWaiter", eventReleases},
		{"WaitGroupWaitsForAll", waitGroupWaits},
		{"SleepAndCancel", sleepAndCancel},
		{"AfterFuncAndStop", afterFuncAndStop},
		{"ContextDeadlineOnRuntimeClock", contextDeadline},
	}
	tests = append(tests, chanTests...)
	for _, tc := range tests {
		t.Run(env.Name+"/"+tc.name, func(t *testing.T) {
			env.Run(t, func(r rt.Runtime) { tc.f(t, env, r) })
		})
	}
}

// elapsed checks a duration: exactly on a virtual clock, at least (and not
// absurdly more) on a real one.
func elapsed(t *testing.T, env Env, got, want time.Duration, what string) {
	if env.Exact {
		assert.Equal(t, want, got, what)
		return
	}
	assert.GreaterOrEqual(t, got, want, what)
	assert.Less(t, got, want+2*time.Second, what)
}

func mutexExcludes(t *testing.T, _ Env, r rt.Runtime) {
	mu := r.NewMutex("counter")
	wg := r.NewWaitGroup("workers")
	var inside atomic.Int32
	count := 0
	const workers, rounds = 4, 200
	wg.Add(workers)
	for i := range workers {
		r.Go(fmt.Sprint("worker", i), func() {
			defer wg.Done()
			for range rounds {
				mu.Lock()
				if inside.Add(1) != 1 {
					t.Errorf("two tasks inside the critical section")
				}
				r.Yield()
				count++ // the race detector flags this if the lock is broken
				inside.Add(-1)
				mu.Unlock()
			}
		})
	}
	assert.NoError(t, wg.Wait(bg))
	assert.Equal(t, workers*rounds, count)
}

func rwmutexExcludes(t *testing.T, _ Env, r rt.Runtime) {
	rw := r.NewRWMutex("table")
	wg := r.NewWaitGroup("workers")
	var readers, writers, maxReaders atomic.Int32
	value := 0
	wg.Add(6)
	for i := range 6 {
		r.Go(fmt.Sprint("worker", i), func() {
			defer wg.Done()
			for j := range 50 {
				if (i+j)%3 == 0 {
					rw.Lock()
					if writers.Add(1) != 1 || readers.Load() != 0 {
						t.Errorf("writer not alone")
					}
					r.Yield()
					value++
					writers.Add(-1)
					rw.Unlock()
				} else {
					rw.RLock()
					n := readers.Add(1)
					for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
					}
					if writers.Load() != 0 {
						t.Errorf("reader alongside a writer")
					}
					_ = value
					r.Yield()
					readers.Add(-1)
					rw.RUnlock()
				}
			}
		})
	}
	assert.NoError(t, wg.Wait(bg))
	assert.Equal(t, 100, value)
}

func lockContextDeadline(t *testing.T, env Env, r rt.Runtime) {
	for _, mu := range []rt.Mutex{r.NewMutex("m"), r.NewRWMutex("rw")} {
		mu.Lock()
		// The clock is read before the deadline is set: read after, a
		// real clock can see less than the whole timeout elapse.
		start := r.Now()
		ctx, cancel := r.WithTimeout(bg, 30*time.Millisecond)
		err := mu.LockContext(ctx)
		cancel()
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		elapsed(t, env, r.Now().Sub(start), 30*time.Millisecond, "LockContext waited until the deadline")
		mu.Unlock()
		assert.NoError(t, mu.LockContext(bg), "the lock is free again after a timed-out waiter left")
		mu.Unlock()
	}
	rw := r.NewRWMutex("rw")
	rw.Lock()
	ctx, cancel := r.WithTimeout(bg, 10*time.Millisecond)
	assert.ErrorIs(t, rw.RLockContext(ctx), context.DeadlineExceeded)
	cancel()
	rw.Unlock()
}

func endedContextNeverAcquires(t *testing.T, _ Env, r rt.Runtime) {
	ctx, cancel := r.WithCancel(bg)
	cancel()
	mu := r.NewMutex("free")
	assert.ErrorIs(t, mu.LockContext(ctx), context.Canceled)
	assert.True(t, mu.TryLock(), "a failed LockContext did not take the lock")
	mu.Unlock()
	rw := r.NewRWMutex("free")
	assert.ErrorIs(t, rw.LockContext(ctx), context.Canceled)
	assert.ErrorIs(t, rw.RLockContext(ctx), context.Canceled)
	assert.True(t, rw.TryLock())
	rw.Unlock()
}

func tryLock(t *testing.T, _ Env, r rt.Runtime) {
	mu := r.NewMutex("m")
	assert.True(t, mu.TryLock())
	assert.False(t, mu.TryLock())
	mu.Unlock()
	rw := r.NewRWMutex("rw")
	assert.True(t, rw.TryRLock())
	assert.True(t, rw.TryRLock())
	assert.False(t, rw.TryLock())
	rw.RUnlock()
	rw.RUnlock()
	assert.True(t, rw.TryLock())
	assert.False(t, rw.TryRLock())
	rw.Unlock()
}

func eventReleases(t *testing.T, env Env, r rt.Runtime) {
	ev := r.NewEvent("start")
	wg := r.NewWaitGroup("waiters")
	var released atomic.Int32
	wg.Add(3)
	for i := range 3 {
		r.Go(fmt.Sprint("waiter", i), func() {
			defer wg.Done()
			if assert.NoError(t, ev.Wait(bg)) {
				released.Add(1)
			}
		})
	}
	assert.NoError(t, r.Sleep(bg, 5*time.Millisecond))
	assert.False(t, ev.IsSet())
	assert.Equal(t, int32(0), released.Load())
	ev.Set()
	ev.Set() // idempotent
	assert.True(t, ev.IsSet())
	assert.NoError(t, wg.Wait(bg))
	assert.Equal(t, int32(3), released.Load())
	assert.NoError(t, ev.Wait(bg), "a set event never blocks")

	never := r.NewEvent("never")
	start := r.Now() // before the deadline is set (see lockContextDeadline)
	ctx, cancel := r.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, never.Wait(ctx), context.DeadlineExceeded)
	elapsed(t, env, r.Now().Sub(start), 20*time.Millisecond, "Event.Wait gave up at the deadline")
}

func waitGroupWaits(t *testing.T, _ Env, r rt.Runtime) {
	wg := r.NewWaitGroup("wg")
	assert.NoError(t, wg.Wait(bg), "a zero WaitGroup does not block")
	var done atomic.Int32
	wg.Add(3)
	for i := range 3 {
		r.Go(fmt.Sprint("w", i), func() {
			_ = r.Sleep(bg, time.Duration(i+1)*time.Millisecond)
			done.Add(1)
			wg.Done()
		})
	}
	assert.NoError(t, wg.Wait(bg))
	assert.Equal(t, int32(3), done.Load())
	assert.Panics(t, func() { wg.Done() }, "a negative counter panics")
}

func sleepAndCancel(t *testing.T, env Env, r rt.Runtime) {
	start := r.Now()
	assert.NoError(t, r.Sleep(bg, 25*time.Millisecond))
	elapsed(t, env, r.Now().Sub(start), 25*time.Millisecond, "Sleep")

	ctx, cancel := r.WithCancel(bg)
	start = r.Now() // before the timer is set (see lockContextDeadline)
	r.AfterFunc(10*time.Millisecond, cancel)
	err := r.Sleep(ctx, time.Hour)
	assert.ErrorIs(t, err, context.Canceled)
	elapsed(t, env, r.Now().Sub(start), 10*time.Millisecond, "a cancelled Sleep returns at the cancellation")
	assert.ErrorIs(t, r.Sleep(ctx, time.Millisecond), context.Canceled, "an ended context does not sleep")
}

func afterFuncAndStop(t *testing.T, env Env, r rt.Runtime) {
	ran := r.NewEvent("ran")
	start := r.Now()
	var at atomic.Int64
	r.AfterFunc(15*time.Millisecond, func() { at.Store(int64(r.Now().Sub(start))); ran.Set() })
	var stoppedRan atomic.Bool
	stopped := r.AfterFunc(5*time.Millisecond, func() { stoppedRan.Store(true) })
	assert.True(t, stopped.Stop())
	assert.False(t, stopped.Stop())
	assert.NoError(t, ran.Wait(bg))
	elapsed(t, env, time.Duration(at.Load()), 15*time.Millisecond, "AfterFunc ran at its instant")
	assert.NoError(t, r.Sleep(bg, 10*time.Millisecond))
	assert.False(t, stoppedRan.Load(), "a stopped timer never runs")
}

func contextDeadline(t *testing.T, env Env, r rt.Runtime) {
	start := r.Now() // before the deadline is set (see lockContextDeadline)
	ctx, cancel := r.WithTimeout(bg, 40*time.Millisecond)
	defer cancel()
	dl, ok := ctx.Deadline()
	assert.True(t, ok)
	if env.Exact {
		assert.Equal(t, 40*time.Millisecond, dl.Sub(start))
	}
	child, cancelChild := r.WithDeadline(ctx, r.Now().Add(time.Hour))
	defer cancelChild()
	cdl, _ := child.Deadline()
	assert.Equal(t, dl, cdl, "a child keeps its parent's earlier deadline")
	err := r.Sleep(child, time.Hour)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	elapsed(t, env, r.Now().Sub(start), 40*time.Millisecond, "the deadline fired at its instant")
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
}
