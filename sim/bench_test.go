package sim

import (
	"context"
	"fmt"
	"iter"
	"math"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The scheduler's benchmarks. Run them together, so that ratios come from
// one run on one machine:
//
//	go test ./sim -run '^$' -bench . -benchmem
//
// The goals (issue "Seeds at scale and speed"): BenchmarkSchedulerStep at
// most 1.2x BenchmarkBareCoroutine with 0 allocs/step; BenchmarkSteps at 512
// tasks at most 1.3x its 2-task figure for each of random, pct and mutex;
// BenchmarkSleep nearly flat from 1 to 100,000 pending timers;
// BenchmarkLockReadSleep/sim at most 0.8x BenchmarkLockReadSleep/synctest
// (sim-pct is the same program under PCT, which switches tasks only where a
// goroutine would: see BenchmarkLockReadSleep; floor is the cost of its
// coroutine switches alone).
// TestCommonPathsDoNotAllocate turns the 0 allocs/step goal into a failing
// test.
//
// Reading them: switches/step is the share of steps that resumed another
// coroutine. A step given to the task that just ran needs no switch (see
// Sim.loop), which makes steps with few runnable tasks cheaper than with
// many; and a switch into one of hundreds of coroutines costs more than
// into one of two whatever the scheduler does (BenchmarkBareCoroutines
// measures that floor). The scheduler's own work per step does not depend
// on the number of tasks or timers.

// BenchmarkBareCoroutine is the floor: one iter.Pull resume+yield round trip.
func BenchmarkBareCoroutine(b *testing.B) {
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
	defer stop()
	for b.Loop() {
		next()
	}
}

// BenchmarkBareCoroutines is the floor of BenchmarkSteps: round trips into
// n coroutines chosen at random (xorshift), with no scheduler at all. With
// hundreds of coroutines each resumption finds the coroutine's memory (its
// g, stack top and iter.Pull state) out of the nearest caches: that much of
// a step's cost grows with the number of tasks whatever the scheduler does.
func BenchmarkBareCoroutines(b *testing.B) {
	for _, n := range []int{2, 64, 512} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			nexts := make([]func() (struct{}, bool), n)
			for i := range nexts {
				next, stop := iter.Pull(func(yield func(struct{}) bool) {
					for yield(struct{}{}) {
					}
				})
				defer stop()
				nexts[i] = next
			}
			x := uint64(88172645463325252)
			for b.Loop() {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				nexts[x%uint64(n)]()
			}
		})
	}
}

// BenchmarkSchedulerStep is one scheduling step of a task that yields through
// an rt call: two tasks taking turns on a sim Mutex. ns/op is per step; the
// goal is at most 1.2x BenchmarkBareCoroutine.
func BenchmarkSchedulerStep(b *testing.B) {
	n := b.N
	var steps, switches int64
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	res := Run(Config{Seed: 1, MaxSteps: int64(n) + 1000}, func(s *Sim) {
		mu := s.NewMutex("shared")
		done := s.NewWaitGroup("done")
		done.Add(2)
		for range 2 {
			s.Go("worker", func() {
				defer done.Done()
				for int(s.Steps()) < n {
					mu.Lock()
					//lint:ignore SA2001 the lock operations are the scheduling steps measured
					mu.Unlock()
				}
			})
		}
		_ = done.Wait(context.Background())
		steps = s.Steps()
		switches = s.switches
	})
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(steps), "allocs/step")
	b.ReportMetric(float64(switches)/float64(steps), "switches/step")
}

// measureSteps runs tasks tasks, each calling op in a loop, until the run
// has taken b.N steps after they all started, and reports ns and allocs per
// step of that part alone (spawning the tasks is not timed), and the share
// of steps that switched coroutines (a step that continues the task that
// just ran needs no switch). setup runs in the root task and returns op.
func measureSteps(b *testing.B, strategy Strategy, tasks int, setup func(s *Sim) func()) {
	b.StopTimer()
	var m0, m1 runtime.MemStats
	var first, last, switches int64
	res := Run(Config{Seed: 1, Strategy: strategy, MaxSteps: math.MaxInt64}, func(s *Sim) {
		op := setup(s)
		ready := s.NewWaitGroup("ready")
		start := s.NewEvent("start")
		done := s.NewWaitGroup("done")
		ready.Add(tasks)
		done.Add(tasks)
		end := int64(math.MaxInt64)
		// One function for every task, so that the tasks share one closure
		// as they share op: what a step touches is the scheduler's and the
		// task's own state.
		worker := func() {
			defer done.Done()
			ready.Done()
			_ = start.Wait(bg)
			for s.steps < end {
				op()
			}
		}
		for i := range tasks {
			s.Go(fmt.Sprint("w", i), worker)
		}
		_ = ready.Wait(bg)
		runtime.ReadMemStats(&m0)
		first = s.steps
		switches = -s.switches
		end = first + int64(b.N)
		b.StartTimer()
		start.Set()
		_ = done.Wait(bg)
		b.StopTimer()
		last = s.steps
		switches += s.switches
		runtime.ReadMemStats(&m1)
	})
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	steps := float64(last - first)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/steps, "allocs/step")
	b.ReportMetric(float64(switches)/steps, "switches/step")
}

// BenchmarkSteps measures a scheduling step as the number of tasks grows:
// random walk and PCT over tasks that Yield, and a mutex every task
// contends for (random walk). A step should cost the same at 512 tasks as
// at 2.
func BenchmarkSteps(b *testing.B) {
	yield := func(s *Sim) func() { return s.Yield }
	contended := func(s *Sim) func() {
		mu := s.NewMutex("contended")
		return func() {
			mu.Lock()
			//lint:ignore SA2001 the lock operations are the scheduling steps measured
			mu.Unlock()
		}
	}
	for _, c := range []struct {
		name     string
		strategy func(b *testing.B) Strategy
		setup    func(s *Sim) func()
	}{
		{"random", func(*testing.B) Strategy { return RandomWalk() }, yield},
		{"pct", func(b *testing.B) Strategy { return PCT(3, int64(b.N)+1) }, yield},
		{"mutex", func(*testing.B) Strategy { return RandomWalk() }, contended},
	} {
		for _, n := range []int{2, 64, 512} {
			b.Run(fmt.Sprintf("%s/tasks=%d", c.name, n), func(b *testing.B) {
				measureSteps(b, c.strategy(b), n, c.setup)
			})
		}
	}
}

// BenchmarkSleep measures one Sleep (a step that parks the task on the
// timer heap, a clock jump and the wake-up) while other timers are pending:
// AfterFuncs far in the future, so the heap holds pending timers in all.
func BenchmarkSleep(b *testing.B) {
	for _, pending := range []int{1, 1_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			b.StopTimer()
			var m0, m1 runtime.MemStats
			res := Run(Config{Seed: 1, MaxSteps: math.MaxInt64}, func(s *Sim) {
				for range pending - 1 {
					s.AfterFunc(time.Hour, func() {})
				}
				runtime.ReadMemStats(&m0)
				b.StartTimer()
				for range b.N {
					_ = s.Sleep(bg, time.Microsecond)
				}
				b.StopTimer()
				runtime.ReadMemStats(&m1)
			})
			if res.Err != nil {
				b.Fatal(res.Err)
			}
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N), "allocs/sleep")
		})
	}
}

// The program both BenchmarkLockReadSleep variants run: 8 tasks, each 1,000
// times locking a mutex, reading the shared value, unlocking and sleeping
// 1 ms.
const (
	lrsTasks = 8
	lrsIters = 1_000
)

// BenchmarkLockReadSleep compares the simulator with testing/synctest (real
// goroutines in a bubble, sync.Mutex, time.Sleep on the bubble's fake clock)
// on the same program. One op is one whole run of the program.
//
// sim runs it under the default strategy, the random walk, which may switch
// tasks at every scheduling point (three per iteration: Lock, Unlock, Sleep)
// and with 8 runnable tasks does so 7 times in 8: about three coroutine
// round trips per iteration where synctest's goroutines switch once, when
// they sleep. sim-pct runs it under PCT (depth 3), whose highest-priority
// task runs until it blocks, as a goroutine does. resumptions/op counts the
// coroutine round trips of a run: it does not depend on the machine.
func BenchmarkLockReadSleep(b *testing.B) {
	b.Run("sim", func(b *testing.B) { lockReadSleep(b, Config{Seed: 1}) })
	b.Run("sim-pct", func(b *testing.B) {
		// PCT's expected step count: a run takes about 3.8 steps per
		// iteration (30,448 under the random walk); rounding up only makes
		// the change points a little sparser.
		lockReadSleep(b, Config{Seed: 1, Strategy: PCT(3, lrsTasks*lrsIters*4)})
	})
	b.Run("floor", lockReadSleepFloor)
	b.Run("synctest", func(b *testing.B) {
		withT(b, func(t *testing.T) {
			var sink int
			for b.Loop() {
				synctest.Test(t, func(*testing.T) {
					var mu sync.Mutex
					var wg sync.WaitGroup
					shared := 42
					for range lrsTasks {
						wg.Go(func() {
							for range lrsIters {
								mu.Lock()
								sink += shared
								mu.Unlock()
								time.Sleep(time.Millisecond)
							}
						})
					}
					wg.Wait()
				})
			}
		})
	})
}

// lockReadSleepFloor is what no scheduler built on iter.Pull can save on
// the program of BenchmarkLockReadSleep/sim: the same sequence of coroutine
// resumptions, into bare coroutines that only yield. The sequence comes
// from one run of the simulator (untimed), each decision that changed the
// task being one round trip. The difference between sim and floor is the
// simulator's own work: its decisions, the mutex, the timers, the trace.
// (runtime.coroswitch, which would let a task hand control straight to the
// next with one switch instead of two, links only into package iter.)
func lockReadSleepFloor(b *testing.B) {
	var sink int
	res := Run(Config{Seed: 1, RecordDecisions: true}, func(s *Sim) { lrsProgram(s, &sink) })
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	var order []int32
	for i, d := range res.Decisions {
		if i == 0 || d != res.Decisions[i-1] {
			order = append(order, d)
		}
	}
	var nexts [lrsTasks + 1]func() (struct{}, bool) // main and the workers
	for i := range nexts {
		next, stop := iter.Pull(func(yield func(struct{}) bool) {
			for yield(struct{}{}) {
			}
		})
		defer stop()
		nexts[i] = next
	}
	for b.Loop() {
		for _, d := range order {
			nexts[d]()
		}
	}
	b.ReportMetric(float64(len(order)), "resumptions/op")
}

// withT runs f with a *testing.T, which synctest.Test needs and a benchmark
// does not have, through testing.RunTests. Its matcher accepts every name,
// so -run (which a benchmark run sets to match nothing) does not filter
// the one test; f runs once even under -count or -cpu, which RunTests
// repeats, and GOMAXPROCS is restored after.
func withT(b *testing.B, f func(t *testing.T)) {
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	ran := false
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: b.Name(),
		F: func(t *testing.T) {
			if ran {
				return
			}
			ran = true
			runtime.GOMAXPROCS(procs)
			f(t)
		},
	}})
	if !ran {
		b.Skip("testing.RunTests did not run the synctest bubble (is -skip set?)")
	}
	if !ok {
		b.Fatal("the synctest run failed")
	}
}

// lrsProgram is BenchmarkLockReadSleep's program on the simulator: it
// returns when every task is done.
func lrsProgram(s *Sim, sink *int) {
	mu := s.NewMutex("m")
	wg := s.NewWaitGroup("all")
	shared := 42
	wg.Add(lrsTasks)
	for range lrsTasks {
		s.Go("worker", func() {
			defer wg.Done()
			for range lrsIters {
				mu.Lock()
				*sink += shared
				mu.Unlock()
				_ = s.Sleep(bg, time.Millisecond)
			}
		})
	}
	_ = wg.Wait(bg)
}

// lockReadSleep runs the program of BenchmarkLockReadSleep under the
// simulator with cfg, once per op.
func lockReadSleep(b *testing.B, cfg Config) {
	var sink int
	var resumptions int64
	for b.Loop() {
		res := Run(cfg, func(s *Sim) {
			lrsProgram(s, &sink)
			resumptions = s.switches
		})
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
	b.ReportMetric(float64(resumptions), "resumptions/op")
}
