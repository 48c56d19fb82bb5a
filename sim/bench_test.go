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

// The scheduler's benchmarks. Run them together, for ratios from one run on
// one machine:
//
//	go test ./sim -run '^$' -bench . -benchmem
//
// or, for the goals' ratios alone (each from one op):
//
//	go test ./sim -run '^$' -bench /paired -benchtime 20x -count 3
//
// The goals come from issue "Seeds at scale and speed". BenchmarkSchedulerStep
// at most 1.2x BenchmarkBareCoroutine, with 0 allocs/step. BenchmarkSteps at
// 512 tasks at most 1.3x its 2-task figure for each of random, pct and mutex
// (BenchmarkSteps/paired reports both, and the floors under them).
// BenchmarkSleep nearly flat from 1 to 100,000 pending timers.
// BenchmarkLockReadSleep/paired reports sim/synctest per step, a measure
// and no longer a goal: what a user weighs is how soon each tool finds a
// bug, which make bugbench measures (docs/bugbench.md). There sim-pct is
// the same program under PCT, which switches tasks only where a goroutine
// would (see BenchmarkLockReadSleep), and floor is the cost of its coroutine
// switches alone.
// TestCommonPathsDoNotAllocate turns the 0 allocs/step goal into a failing
// test.
//
// Reading them: switches/step is the share of steps that resumed another
// coroutine. A step given to the task that just ran needs no switch (see
// Sim.loop), so steps with few runnable tasks are cheaper than with many.
// And a switch into one of hundreds of coroutines costs more than into one
// of two whatever the scheduler does (BenchmarkBareCoroutines measures that
// floor). The scheduler's own work per step does not depend on the number of
// tasks or timers.

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
// g, stack top and iter.Pull state) out of the nearest caches. That much of
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
				for int(s.stepsSoFar()) < n {
					mu.Lock()
					//lint:ignore SA2001 the lock operations are the scheduling steps measured
					mu.Unlock()
				}
			})
		}
		_ = done.Wait(context.Background())
		steps = s.stepsSoFar()
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
// has taken b.N steps after they all started. It reports ns and allocs per
// step of that part alone (spawning the tasks is not timed), and the share
// of steps that switched coroutines (a step that continues the task that
// just ran needs no switch). setup runs in the root task and returns op.
func measureSteps(b *testing.B, strategy Strategy, tasks int, setup func(s *Sim) func()) {
	b.StopTimer()
	var m0, m1 runtime.MemStats
	steps, switches, _, err := runSteps(strategy, tasks, int64(b.N), setup,
		func() {
			runtime.ReadMemStats(&m0)
			b.StartTimer()
		},
		func() {
			b.StopTimer()
			runtime.ReadMemStats(&m1)
		}, false)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(steps), "allocs/step")
	b.ReportMetric(float64(switches)/float64(steps), "switches/step")
}

// runSteps is measureSteps' run. Once every task has started, it calls
// started, lets the tasks take n steps (and a few more, each task finishing
// its op), and calls ended. It returns the steps and coroutine switches
// taken in between and, when record is set, the tasks those steps went to.
func runSteps(strategy Strategy, tasks int, n int64, setup func(s *Sim) func(), started, ended func(), record bool) (steps, switches int64, decisions []int32, err error) {
	var first int64
	res := Run(Config{Seed: 1, Strategy: strategy, MaxSteps: math.MaxInt64, RecordDecisions: record}, func(s *Sim) {
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
		first = s.steps
		switches = -s.switches
		end = first + n
		started()
		start.Set()
		_ = done.Wait(bg)
		ended()
		steps = s.steps - first
		switches += s.switches
	})
	if record && res.Err == nil {
		// Decisions[i] is step i+1's task: the measured steps follow step
		// first.
		decisions = res.Decisions[first : first+steps]
	}
	return steps, switches, decisions, res.Err
}

// BenchmarkSteps measures a scheduling step as the number of tasks grows:
// random walk and PCT over tasks that Yield, and a mutex every task
// contends for (random walk). A step should cost the same at 512 tasks as
// at 2. paired reports the goals' ratios from one op (stepsPaired).
func BenchmarkSteps(b *testing.B) {
	for _, c := range stepCases {
		for _, n := range []int{2, 64, 512} {
			b.Run(fmt.Sprintf("%s/tasks=%d", c.name, n), func(b *testing.B) {
				measureSteps(b, c.strategy(int64(b.N)), n, c.setup)
			})
		}
	}
	b.Run("paired", stepsPaired)
}

// stepCases are BenchmarkSteps' kinds of step. strategy gets the number of
// steps to be measured.
var stepCases = []struct {
	name     string
	strategy func(steps int64) Strategy
	setup    func(s *Sim) func()
}{
	{"random", func(int64) Strategy { return RandomWalk() }, yieldOp},
	{"pct", func(steps int64) Strategy { return PCT(3, steps+1) }, yieldOp},
	{"mutex", func(int64) Strategy { return RandomWalk() }, contendedOp},
	// POS and SURW look at every runnable task at each step (the races of
	// the step, the weights): their steps grow with the tasks by design,
	// and their 512/2 ratios are a measure, not a goal.
	{"pos", func(int64) Strategy { return POS() }, contendedOp},
	{"surw", func(int64) Strategy { return SURW(nil) }, contendedOp},
}

func yieldOp(s *Sim) func() { return s.Yield }

func contendedOp(s *Sim) func() {
	mu := s.NewMutex("contended")
	return func() {
		mu.Lock()
		//lint:ignore SA2001 the lock operations are the scheduling steps measured
		mu.Unlock()
	}
}

// stepsPaired times, within each op, pairedStepsN steps of each kind at 2
// and at 512 tasks, and as many bare coroutine round trips, starting with
// the next measurement in turn. It reports the goals' ratios: each kind's
// step at 512 tasks over its step at 2, and the mutex step at 2 tasks (what
// BenchmarkSchedulerStep runs: two tasks taking turns on a Mutex) over a
// bare round trip (BenchmarkBareCoroutine). The measurements share the
// machine's drift, which moves the separate sub-benchmarks by 10-20% from
// one run to the next. ns/op is the whole op, spawning included.
//
// Each kind also has a floor, as BenchmarkLockReadSleep/floor: the same
// run's coroutine resumptions (its schedule does not change from one op to
// the next) made into bare coroutines, one per task. KIND-floor-512/2 is
// the floor's own ratio: what switching among 512 coroutines instead of 2
// costs on this machine whatever a scheduler does. It is left out where the
// 2-task floor is under a tenth of the step (PCT's). KIND-own-512/2 is the
// ratio of what the step costs above its floor, the scheduler's own work.
func stepsPaired(b *testing.B) {
	// A measurement times one thing once and says how many steps (or
	// round trips) that was.
	type measurement struct {
		name    string
		measure func() (took time.Duration, steps int64)
		took    time.Duration
		steps   int64
	}
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	var ms []*measurement
	for _, c := range stepCases {
		for _, n := range []int{2, 512} {
			name := fmt.Sprintf("%s/%d", c.name, n)
			replay, floorSteps := stepsFloor(b, c.strategy(pairedStepsN), n, c.setup)
			ms = append(ms,
				&measurement{name: name, measure: func() (took time.Duration, steps int64) {
					var start time.Time
					steps, _, _, err := runSteps(c.strategy(pairedStepsN), n, pairedStepsN, c.setup,
						func() { start = time.Now() },
						func() { took = time.Since(start) }, false)
					if err != nil {
						b.Fatal(err)
					}
					return took, steps
				}},
				&measurement{name: name + "/floor", measure: func() (time.Duration, int64) {
					return timed(replay), floorSteps
				}})
		}
	}
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
	defer stop()
	ms = append(ms, &measurement{name: "bare", measure: func() (time.Duration, int64) {
		return timed(func() {
			for range pairedStepsN {
				next()
			}
		}), pairedStepsN
	}})
	for op := 0; b.Loop(); op++ {
		for i := range ms {
			m := ms[(op+i)%len(ms)]
			took, steps := m.measure()
			m.took += took
			m.steps += steps
		}
	}
	perStep := make(map[string]float64, len(ms))
	for _, m := range ms {
		if m.steps == 0 || m.took <= 0 {
			b.Fatalf("%s: %d steps in %v", m.name, m.steps, m.took)
		}
		perStep[m.name] = float64(m.took) / float64(m.steps)
	}
	for _, c := range stepCases {
		at := func(n int) (step, floor float64) {
			name := fmt.Sprintf("%s/%d", c.name, n)
			return perStep[name], perStep[name+"/floor"]
		}
		step2, floor2 := at(2)
		step512, floor512 := at(512)
		b.ReportMetric(step512/step2, c.name+"-512/2")
		// PCT at 2 tasks hardly switches: a floor of almost nothing
		// makes a ratio that says nothing.
		if floor2 >= step2/10 {
			b.ReportMetric(floor512/floor2, c.name+"-floor-512/2")
		}
		b.ReportMetric((step512-floor512)/(step2-floor2), c.name+"-own-512/2")
	}
	b.ReportMetric(perStep["mutex/2"]/perStep["bare"], "step/bare")
}

// pairedStepsN is how many steps stepsPaired times per measurement: enough
// that each of 512 tasks takes hundreds, so that the start (every task cold,
// all woken at once) weighs little.
const pairedStepsN = 200_000

// stepsFloor records the schedule of runSteps' run of pairedStepsN steps
// and returns a function that makes its coroutine resumptions into bare
// coroutines (bareReplay), and how many steps that schedule took.
func stepsFloor(tb testing.TB, strategy Strategy, tasks int, setup func(s *Sim) func()) (replay func(), steps int64) {
	steps, _, decisions, err := runSteps(strategy, tasks, pairedStepsN, setup, func() {}, func() {}, true)
	if err != nil {
		tb.Fatal(err)
	}
	replay, _ = bareReplay(tb, decisions)
	return replay, steps
}

// bareReplay returns a function that makes the coroutine resumptions of a
// schedule, each decision that went to another task than the one before
// it, into bare coroutines that only yield, one per task id; and how many
// resumptions that is. The coroutines end with the benchmark.
func bareReplay(tb testing.TB, decisions []int32) (replay func(), resumptions int) {
	var order []int32
	most := int32(0)
	for i, d := range decisions {
		if i == 0 || d != decisions[i-1] {
			order = append(order, d)
			most = max(most, d)
		}
	}
	nexts := make([]func() (struct{}, bool), most+1)
	for i := range nexts {
		next, stop := iter.Pull(func(yield func(struct{}) bool) {
			for yield(struct{}{}) {
			}
		})
		tb.Cleanup(stop)
		nexts[i] = next
	}
	return func() {
		for _, d := range order {
			nexts[d]()
		}
	}, len(order)
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
// The sim variant runs it under the default strategy, the random walk, which
// may switch tasks at every scheduling point (three per iteration: Lock,
// Unlock, Sleep). With 8 runnable tasks it does so 7 times in 8: about three
// coroutine round trips per iteration where synctest's goroutines switch
// once, when they sleep. The sim-pct variant runs it under PCT (depth 3),
// whose highest-priority task runs until it blocks, as a goroutine does.
// The metric resumptions/op counts the coroutine round trips of a run: it
// does not depend on the machine. The floor variant makes sim's resumptions
// into bare coroutines (lrsFloor). The paired variant runs all four within
// each op and reports their times over synctest's: read the ratios there.
func BenchmarkLockReadSleep(b *testing.B) {
	b.Run("sim", func(b *testing.B) { lockReadSleep(b, Config{Seed: 1}) })
	b.Run("sim-pct", func(b *testing.B) { lockReadSleep(b, lrsPCT) })
	b.Run("floor", func(b *testing.B) {
		replay, resumptions := lrsFloor(b)
		for b.Loop() {
			replay()
		}
		b.ReportMetric(float64(resumptions), "resumptions/op")
	})
	b.Run("synctest", func(b *testing.B) {
		withT(b, func(t *testing.T) {
			for b.Loop() {
				lrsSynctest(t)
			}
		})
	})
	b.Run("paired", lockReadSleepPaired)
}

// lrsPCT is the program under PCT (depth 3). PCT's expected step count: a
// run takes about 3.8 steps per iteration (30,448 under the random walk);
// rounding up only makes the change points a little sparser.
var lrsPCT = Config{Seed: 1, Strategy: PCT(3, lrsTasks*lrsIters*4)}

// lockReadSleepPaired times the four variants within each op and reports
// each one's time over synctest's. The variants share the machine's drift
// (on this project's 2-core machine the same sub-benchmark moves by 10-20%
// from one run to the next), so their ratios come out steadier than ratios
// of the separate sub-benchmarks. Within an op each variant runs once
// untimed, so that its timed runs find the caches as a run that follows
// another of its kind does (as in the separate sub-benchmarks, and a seed
// sweep). Then it runs lrsTimedRuns times; each op starts with the next
// variant in turn. ns/op is all of it together.
func lockReadSleepPaired(b *testing.B) {
	replay, _ := lrsFloor(b)
	var took [4]time.Duration // sim, sim-pct, floor, synctest
	withT(b, func(t *testing.T) {
		variants := [4]func(){
			func() { lrsSim(t, Config{Seed: 1}) },
			func() { lrsSim(t, lrsPCT) },
			replay,
			func() { lrsSynctest(t) },
		}
		for op := 0; b.Loop(); op++ {
			for k := range variants {
				v := (op + k) % len(variants)
				variants[v]()
				start := time.Now()
				for range lrsTimedRuns {
					variants[v]()
				}
				took[v] += time.Since(start)
			}
		}
	})
	if took[3] <= 0 {
		b.Fatal("synctest took no measurable time")
	}
	st := float64(took[3])
	b.ReportMetric(float64(took[0])/st, "sim/synctest")
	b.ReportMetric(float64(took[1])/st, "sim-pct/synctest")
	b.ReportMetric(float64(took[2])/st, "floor/synctest")
}

// lrsTimedRuns is how many runs of each variant lockReadSleepPaired times
// per op.
const lrsTimedRuns = 3

// lrsSynctest runs the program once with goroutines in a synctest bubble:
// sync.Mutex, and time.Sleep on the bubble's fake clock.
func lrsSynctest(t *testing.T) {
	synctest.Test(t, func(*testing.T) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		shared := 42
		for range lrsTasks {
			wg.Go(func() {
				for range lrsIters {
					mu.Lock()
					lrsSink += shared
					mu.Unlock()
					time.Sleep(time.Millisecond)
				}
			})
		}
		wg.Wait()
	})
}

// lrsSink is where both versions of the program add what they read, so
// that the read is not optimised away.
var lrsSink int

// lrsFloor is what no scheduler built on iter.Pull can save on the program
// of BenchmarkLockReadSleep/sim: the same sequence of coroutine
// resumptions, into bare coroutines (bareReplay), from one run of the
// simulator (untimed). The difference between sim and floor is the
// simulator's own work: its decisions, the mutex, the timers, the trace.
// (runtime.coroswitch, which would let a task hand control straight to the
// next with one switch instead of two, links only into package iter.)
func lrsFloor(tb testing.TB) (replay func(), resumptions int) {
	res := Run(Config{Seed: 1, RecordDecisions: true}, func(s *Sim) { lrsProgram(s, &lrsSink) })
	if res.Err != nil {
		tb.Fatal(res.Err)
	}
	return bareReplay(tb, res.Decisions)
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
	var resumptions int64
	for b.Loop() {
		resumptions = lrsSim(b, cfg)
	}
	b.ReportMetric(float64(resumptions), "resumptions/op")
}

// lrsSim runs the program once under the simulator with cfg and returns
// the run's coroutine resumptions.
func lrsSim(tb testing.TB, cfg Config) (resumptions int64) {
	res := Run(cfg, func(s *Sim) {
		lrsProgram(s, &lrsSink)
		resumptions = s.switches
	})
	if res.Err != nil {
		tb.Fatal(res.Err)
	}
	return resumptions
}
