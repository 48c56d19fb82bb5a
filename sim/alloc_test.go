package sim

//lint:file-ignore SA2001 a lock taken and released with nothing between is a scheduling point (and a recorded event) these tests count

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestCommonPathsDoNotAllocate holds the scheduler to zero allocations per
// step on its common paths, so that a regression fails a test rather than
// only moving a benchmark. Each operation is measured with
// testing.AllocsPerRun from inside a task, while other tasks contend for the
// same object where that is the point. The count covers the whole step (the
// operation, the scheduler's decision, the other tasks' steps in between,
// the clock).
func TestCommonPathsDoNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	const runs = 200
	type path struct {
		name      string
		strategy  func() Strategy
		contended int // other tasks doing the same operation meanwhile
		setup     func(s *Sim) func()
	}
	paths := []path{
		{"Yield", RandomWalk, 3, func(s *Sim) func() { return s.Yield }},
		{"Yield/pct", func() Strategy { return PCT(3, 1000) }, 3, func(s *Sim) func() { return s.Yield }},
		{"Lock+Unlock", RandomWalk, 0, func(s *Sim) func() {
			mu := s.NewMutex("m")
			return func() { mu.Lock(); mu.Unlock() }
		}},
		{"Lock+Unlock/contended", RandomWalk, 4, func(s *Sim) func() {
			mu := s.NewMutex("m")
			return func() { mu.Lock(); mu.Unlock() }
		}},
		{"Lock+Unlock/contended/pct", func() Strategy { return PCT(3, 1000) }, 4, func(s *Sim) func() {
			mu := s.NewMutex("m")
			return func() { mu.Lock(); mu.Unlock() }
		}},
		{"Lock+Unlock/contended/pos", POS, 4, func(s *Sim) func() {
			mu := s.NewMutex("m")
			return func() { mu.Lock(); mu.Unlock() }
		}},
		{"Lock+Unlock/contended/surw", func() Strategy { return SURW(nil) }, 4, func(s *Sim) func() {
			mu := s.NewMutex("m")
			return func() { mu.Lock(); mu.Unlock() }
		}},
		{"TryLock", RandomWalk, 2, func(s *Sim) func() {
			mu := s.NewMutex("m")
			return func() {
				if mu.TryLock() {
					mu.Unlock()
				}
			}
		}},
		{"RLock+RUnlock/contended", RandomWalk, 4, func(s *Sim) func() {
			rw := s.NewRWMutex("rw")
			return func() { rw.RLock(); rw.RUnlock() }
		}},
		{"RWMutex.Lock+Unlock/contended", RandomWalk, 4, func(s *Sim) func() {
			rw := s.NewRWMutex("rw")
			return func() { rw.Lock(); rw.Unlock() }
		}},
		{"Sleep", RandomWalk, 0, func(s *Sim) func() {
			return func() { _ = s.Sleep(bg, time.Millisecond) }
		}},
		{"Sleep/contended", RandomWalk, 4, func(s *Sim) func() {
			return func() { _ = s.Sleep(bg, time.Millisecond) }
		}},
		{"Sleep/pct", func() Strategy { return PCT(3, 1000) }, 4, func(s *Sim) func() {
			return func() { _ = s.Sleep(bg, time.Millisecond) }
		}},
		{"Sleep/cancellable-context", RandomWalk, 2, func(s *Sim) func() {
			ctx, cancel := s.WithCancel(bg)
			_ = cancel
			return func() { _ = s.Sleep(ctx, time.Millisecond) }
		}},
		{"WaitGroup.Add+Done+Wait", RandomWalk, 0, func(s *Sim) func() {
			wg := s.NewWaitGroup("wg")
			return func() { wg.Add(1); wg.Done(); _ = wg.Wait(bg) }
		}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			var allocs float64
			res := Run(Config{Seed: 7, Strategy: p.strategy()}, func(s *Sim) {
				op := p.setup(s)
				stop := false
				wg := s.NewWaitGroup("contenders")
				wg.Add(p.contended)
				for i := range p.contended {
					s.Go(fmt.Sprint("contender", i), func() {
						defer wg.Done()
						for !stop {
							op()
						}
					})
				}
				for range 50 { // warm up: queues and runnable lists at size
					op()
				}
				allocs = testing.AllocsPerRun(runs, op)
				stop = true
				_ = wg.Wait(bg)
			})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if allocs != 0 {
				t.Errorf("%s: %v allocations per operation, want 0", p.name, allocs)
			}
		})
	}

	// An AfterFunc's firing starts a task. Its coroutine is an idle one
	// reused, and tasks are carved from slabs, so firing allocates well
	// under once per timer. Setting one allocates its handle, which
	// AfterFunc returns, and the caller's closure, if any.
	t.Run("AfterFunc-firing", func(t *testing.T) {
		const timers = 1000
		var m0, m1 runtime.MemStats
		res := Run(Config{Seed: 7}, func(s *Sim) {
			nop := func() {}
			for i := range timers {
				s.AfterFunc(time.Duration(i+1)*time.Microsecond, nop)
			}
			_ = s.Sleep(bg, 10*time.Microsecond) // warm up: idle workers exist
			runtime.ReadMemStats(&m0)
			for range timers - 20 {
				_ = s.Sleep(bg, time.Microsecond) // one timer fires, its task runs and ends
			}
			runtime.ReadMemStats(&m1)
		})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		perFiring := float64(m1.Mallocs-m0.Mallocs) / (timers - 20)
		if perFiring > 0.1 {
			t.Errorf("an AfterFunc firing allocates %.3f times, want under 0.1", perFiring)
		}
		t.Logf("allocations per AfterFunc firing: %.3f", perFiring)
	})
}
