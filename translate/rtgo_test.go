package translate_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/rt/rtgo"
	"github.com/windtunnel/windtunnel/sim"
)

// fly runs body as a leak-checked run bound to rtgo, and returns the run.
func fly(t *testing.T, seed uint64, body func(s *sim.Sim)) sim.Result {
	t.Helper()
	res := sim.Run(sim.Config{Seed: seed, LeakCheck: true}, func(s *sim.Sim) {
		rtgo.Use(s)
		body(s)
	})
	rtgo.Use(nil)
	return res
}

// Timers and tickers of translated code fire on the virtual clock at their
// instants; a stopped timer delivers nothing; a stopped ticker's task ends.
func TestRtgoTimersAndTickers(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		var fired time.Duration
		var ticks []time.Duration
		stopped := false
		res := fly(t, seed, func(s *sim.Sim) {
			start := rtgo.Now()
			tm := rtgo.NewTimer(10 * time.Millisecond)
			rtgo.Recv(tm.C)
			fired = rtgo.Since(start)
			tm2 := rtgo.NewTimer(time.Millisecond)
			stopped = tm2.Stop()
			rtgo.Sleep(5 * time.Millisecond)
			i := rtgo.Select(true, rtgo.RecvCase(tm2.C))
			assert.Equal(t, -1, i, "a stopped timer delivered")
			tk := rtgo.NewTicker(5 * time.Millisecond)
			start = rtgo.Now()
			for range 3 {
				rtgo.Recv(tk.C)
				ticks = append(ticks, rtgo.Since(start))
			}
			tk.Stop()
			rtgo.Recv(rtgo.After(time.Millisecond))
		})
		require.NoError(t, res.Err, "seed %d", seed)
		assert.Equal(t, 10*time.Millisecond, fired)
		assert.True(t, stopped)
		assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 15 * time.Millisecond}, ticks)
	}
}

// An operation on a nil channel blocks forever, as in Go: the leak oracle
// A ticker nobody stops keeps no leak from being proved: in Go it is no
// goroutine, so a task blocked where the ticker cannot reach is blocked
// forever (Etcd7492's shape: a loop on a ticker stuck on a lock).
func TestRtgoLiveTickerDoesNotHideALeak(t *testing.T) {
	// Each step takes a microsecond, as GoKer's runs do: the ticker is
	// then due again at every step and always runnable.
	res := sim.Run(sim.Config{Seed: 1, LeakCheck: true, StepDuration: time.Microsecond}, func(s *sim.Sim) {
		rtgo.Use(s)
		var mu rtgo.Mutex
		mu.Lock()
		rtgo.Go("looper", func() {
			tk := rtgo.NewTicker(time.Nanosecond)
			rtgo.Recv(tk.C)
			mu.Lock()
		})
	})
	rtgo.Use(nil)
	f := res.Failure()
	require.NotNil(t, f)
	assert.Contains(t, f.Message, "1 task(s) blocked forever")
	require.Len(t, f.Blocked, 1)
	assert.Equal(t, "looper", f.Blocked[0].Name)
}

// reports the task.
func TestRtgoNilChannelBlocksForever(t *testing.T) {
	res := fly(t, 1, func(s *sim.Sim) {
		var ch *rt.Chan[int]
		rtgo.Go("sender", func() { rtgo.Send(ch)(1) })
	})
	f := res.Failure()
	require.NotNil(t, f)
	assert.Equal(t, sim.FailLeak, f.Kind)
	require.Len(t, f.Blocked, 1)
	assert.Equal(t, "select (no cases) ", f.Blocked[0].Wait)
}

// A map ranged over in translated code is visited in key order, and a key
// deleted during the loop is skipped.
func TestRtgoSortedSkipsDeletedKeys(t *testing.T) {
	m := map[string]int{"c": 3, "a": 1, "d": 4, "b": 2}
	var seen []string
	for k := range rtgo.Sorted(m) {
		seen = append(seen, k)
		delete(m, "c")
	}
	assert.Equal(t, []string{"a", "b", "d"}, seen)
	assert.Equal(t, []string{"a", "b", "d"}, slices.Sorted(maps.Keys(m)))
}

// The sync types work from their zero values: WaitGroup.Go, Once, a Cond
// over an RWMutex's read half, and a context's Done in a select.
func TestRtgoZeroValueSync(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		res := fly(t, seed, func(s *sim.Sim) {
			var wg rtgo.WaitGroup
			var once rtgo.Once
			var rw rtgo.RWMutex
			cond := rtgo.NewCond(rw.RLocker())
			runs, ready := 0, false
			for range 3 {
				wg.Go(func() {
					once.Do(func() { runs++ })
					rw.RLock()
					for !ready {
						cond.Wait()
					}
					rw.RUnlock()
				})
			}
			rtgo.Sleep(time.Millisecond)
			rw.Lock()
			ready = true
			rw.Unlock()
			cond.Broadcast()
			wg.Wait()
			assert.Equal(t, 1, runs)
			ctx, cancel := rtgo.WithTimeout(context.Background(), 3*time.Millisecond)
			defer cancel()
			never := rtgo.MakeChan[int](0)
			assert.Equal(t, 1, rtgo.Select(false, rtgo.RecvCase(never), rtgo.DoneCase(ctx)))
		})
		require.NoError(t, res.Err, "seed %d", seed)
	}
}

// A stand-in address is the same for a pointer all run long, differs
// between pointers, and is drawn from the seed: the same seed gives the
// same addresses, another seed others.
func TestRtgoAddrIsSeeded(t *testing.T) {
	addrs := func(seed uint64) []uintptr {
		var got []uintptr
		res := fly(t, seed, func(s *sim.Sim) {
			a, b := new(int), new(int)
			got = []uintptr{rtgo.Addr(unsafe.Pointer(a)), rtgo.Addr(unsafe.Pointer(b)), rtgo.Addr(unsafe.Pointer(a))}
		})
		require.NoError(t, res.Err)
		return got
	}
	one := addrs(1)
	assert.Equal(t, one[0], one[2], "one pointer, two addresses")
	assert.NotEqual(t, one[0], one[1])
	assert.Zero(t, one[0]%8, "not word-aligned")
	assert.Equal(t, one, addrs(1), "the same seed gave other addresses")
	assert.NotEqual(t, one, addrs(2), "another seed gave the same addresses")
	assert.Zero(t, rtgo.Addr(nil))
}

// ctx.Done() of a context that never ends is nil, as in Go; one that can end
// is a channel whose receivers the cancel wakes, with ok false.
func TestRtgoDoneValue(t *testing.T) {
	res := fly(t, 1, func(s *sim.Sim) {
		assert.Nil(t, rtgo.Done(context.Background()))
		ctx, cancel := rtgo.WithCancel(context.Background())
		done := rtgo.Done(ctx)
		assert.Equal(t, -1, rtgo.Select(true, rtgo.RecvCase(done)), "ready before the cancel")
		rtgo.Go("cancel", cancel)
		_, ok := rtgo.Recv2(done)
		assert.False(t, ok)
		assert.Equal(t, 0, rtgo.Len(done))
	})
	require.NoError(t, res.Err)
}

// A pointer key that never went through Key has no address drawn in program
// order: ranging over its map fails loudly instead of in Go's random order.
func TestRtgoByAddrRefusesUnknownKeys(t *testing.T) {
	res := fly(t, 1, func(s *sim.Sim) {
		m := map[*int]int{new(int): 1}
		for range rtgo.ByAddr(m) {
		}
	})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "did not enter the map through rtgo.Key")
}
