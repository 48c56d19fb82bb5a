package sim

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// PRNG streams derived from the one seed. The schedule has its own stream so
// that a replayed or exhaustively explored schedule (which draws nothing)
// leaves the workload and faults of the run unchanged.
const (
	streamSchedule = 0x5c4ed01e
	streamWorld    = 0x3011d
)

// Sim is one deterministic run in progress. It implements rt.Runtime: pass it
// to production code wherever a runtime is wanted. All of its methods except
// Rand, Elapsed and Note must be called from inside a task of the run.
type Sim struct {
	cfg      Config
	strategy Strategy
	schedSrc *rand.PCG  // the schedule's stream, used directly on the hot path
	sched    *rand.Rand // the same stream, for everything else
	world    *rand.Rand

	nowNs   int64 // virtual time since Epoch
	steps   int64
	nextSeq uint64 // timer tie-breaker: insertion order

	tasks    []*task // every task ever started, by id
	runnable []*task
	current  *task
	root     *task
	timers   timerHeap

	trace   trace
	header  []string
	failure *Failure
	nextObj int32

	// For the exhaustive explorer: clock jumps so far, and what the current
	// step touched outside the operation it resumed in (see touch).
	advances   int64
	touched    bool
	touchedObj int32
}

// killSignal unwinds a task's stack when the run ends before the task does.
type killSignal struct{}

// Run runs main as the root task of a new simulation. It returns when main
// returns (every other task is then stopped, running its deferred calls) or
// when the run fails: a task panics, calls Failf, deadlocks, or a limit is
// exceeded. Result.Err is nil for a clean run, a *Failure for a failed one,
// and an ordinary error for an invalid Config.
func Run(cfg Config, main func(s *Sim)) Result {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{Seed: cfg.Seed, Err: err}
	}
	src := rand.NewPCG(cfg.Seed, streamSchedule)
	s := &Sim{
		cfg:      cfg,
		strategy: cfg.Strategy,
		schedSrc: src,
		sched:    rand.New(src),
		world:    rand.New(rand.NewPCG(cfg.Seed, streamWorld)),
	}
	s.trace.init(cfg.TraceTail, cfg.TraceOut, cfg.RecordDecisions)
	s.trace.names = func(id int32) string { return s.tasks[id].name }
	if err := s.strategy.start(s); err != nil {
		return Result{Seed: cfg.Seed, Strategy: s.strategy.String(), Err: err}
	}
	s.root = s.spawn("main", func() { main(s) })
	s.loop()
	s.strategy.end(s)
	s.stopAll()
	return s.result()
}

// loop runs scheduling steps until the root task ends or the run fails.
func (s *Sim) loop() {
	stepNs := int64(s.cfg.StepDuration)
	maxSteps := s.cfg.MaxSteps
	for s.failure == nil && s.root.state != taskDone {
		if len(s.runnable) == 0 {
			if !s.advanceToNextTimer() {
				s.failDeadlock()
			}
			continue
		}
		if s.steps >= maxSteps {
			s.failLimit(fmt.Sprintf("step limit of %d exceeded", s.cfg.MaxSteps))
			return
		}
		i := s.strategy.pick(s)
		if i < 0 { // replay divergence (a failure) or an explorer cut-off
			return
		}
		t := s.runnable[i]
		s.steps++
		s.trace.decision(s.steps, s.nowNs, t.id)
		s.current = t
		if _, alive := t.next(); !alive {
			s.current = nil
			s.finish(t)
		}
		s.current = nil
		if stepNs > 0 && s.failure == nil {
			s.nowNs += stepNs
			s.fireDueTimers()
		}
	}
}

func (s *Sim) finish(t *task) {
	if t.state == taskRunnable {
		s.removeRunnable(t)
	}
	t.state = taskDone
	s.trace.event(s.steps, s.nowNs, evDone, t.id, 0, "")
	if t.panicVal != nil && s.failure == nil {
		s.failure = &Failure{
			Kind:    FailPanic,
			Message: fmt.Sprintf("task %q panicked: %v", t.name, t.panicVal),
			Task:    t.name,
			Stack:   t.panicStack,
		}
		s.fillFailure()
	}
}

// spawn creates a runnable task. It does not yield; Go does.
func (s *Sim) spawn(name string, f func()) *task {
	// Task ids are handed out in spawn order, so two steps that spawn do not
	// commute. The new task's first step runs code no other task can reach
	// before a scheduling point: it gets an object of its own.
	s.touch(objSpawn)
	t := &task{id: int32(len(s.tasks)), name: name, s: s, runIdx: -1}
	t.obj = -1 - t.id
	s.tasks = append(s.tasks, t)
	t.next, t.stop = iter.Pull(func(yield func(struct{}) bool) {
		t.yield = yield
		defer t.recoverPanic()
		f()
	})
	s.addRunnable(t)
	s.strategy.spawned(s, t)
	s.trace.event(s.steps, s.nowNs, evSpawn, t.id, 0, name)
	return t
}

func (t *task) recoverPanic() {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(killSignal); ok {
		return
	}
	t.panicVal = r
	t.panicStack = string(debug.Stack())
}

// stopAll unwinds every task that has not finished, so that no coroutine
// outlives its run. Deferred calls in those tasks run with scheduling turned
// off: rt calls that would block end the task instead.
func (s *Sim) stopAll() {
	for _, t := range s.tasks {
		if t.state == taskDone {
			continue
		}
		t.killed = true
		s.current = t
		t.stop()
		s.current = nil
		t.state = taskDone
	}
	s.runnable = s.runnable[:0]
}

func (s *Sim) addRunnable(t *task) {
	t.state = taskRunnable
	t.runIdx = len(s.runnable)
	s.runnable = append(s.runnable, t)
}

func (s *Sim) removeRunnable(t *task) {
	i := t.runIdx
	last := len(s.runnable) - 1
	s.runnable[i] = s.runnable[last]
	s.runnable[i].runIdx = i
	s.runnable = s.runnable[:last]
	t.runIdx = -1
}

// wake makes a blocked task runnable. Waking a runnable or finished task is a
// no-op, so wakers need not know whether someone else woke it first.
func (s *Sim) wake(t *task) {
	if t.state == taskBlocked {
		s.addRunnable(t)
	}
}

// cur returns the running task, or fails loudly when an rt method is called
// from outside the simulation (for example from a real goroutine).
func (s *Sim) cur() *task {
	if s.current == nil {
		panic("sim: an rt method was called outside a task of this Sim (from another goroutine, or after Run returned)")
	}
	return s.current
}

// touch records that the current step operates on object obj besides the
// operation it resumed in (a spawn, or a read without a scheduling point),
// for the exhaustive explorer's dependency relation. Two different objects
// make it objAll.
func (s *Sim) touch(obj int32) {
	if s.current == nil {
		return
	}
	if !s.touched {
		s.touched, s.touchedObj = true, obj
	} else if s.touchedObj != obj {
		s.touchedObj = objAll
	}
}

// touchAll marks the current step as touching state shared with every task
// outside any one sim object (a context, the step count), so that the
// exhaustive explorer treats it as dependent with every other step.
func (s *Sim) touchAll() { s.touch(objAll) }

// Rand returns the world's random source: workloads and fault plans draw from
// it. It is deterministic per seed and separate from the schedule's source.
// Call Rand at every draw rather than keeping the *rand.Rand: each call marks
// the step as operating on the shared stream, which the exhaustive explorer
// needs to know (see Explore).
func (s *Sim) Rand() *rand.Rand {
	s.touch(objWorld)
	return s.world
}

// Seed returns the run's seed.
func (s *Sim) Seed() uint64 { return s.cfg.Seed }

// Steps returns the number of scheduling steps so far. A task that reads it
// depends on every other task's progress (see Explore).
func (s *Sim) Steps() int64 {
	s.touchAll()
	return s.steps
}

// Elapsed returns the virtual time since the start of the run.
func (s *Sim) Elapsed() time.Duration { return time.Duration(s.nowNs) }

// Note adds a line to the run header that failure reports print, such as the
// fault plan a swarm seed chose.
func (s *Sim) Note(format string, a ...any) {
	s.header = append(s.header, fmt.Sprintf(format, a...))
}

// Tracef records a world event (a commit, a lost message) in the trace. It is
// part of the trace hash, so it must be deterministic too.
func (s *Sim) Tracef(format string, a ...any) {
	id := int32(-1)
	if s.current != nil {
		id = s.current.id
	}
	s.trace.event(s.steps, s.nowNs, evNote, id, 0, fmt.Sprintf(format, a...))
}

// Failf ends the run with a failure, from inside a task. It does not return.
func (s *Sim) Failf(format string, a ...any) {
	t := s.cur()
	if s.failure == nil {
		s.failure = &Failure{Kind: FailCheck, Message: fmt.Sprintf(format, a...), Task: t.name, Stack: string(debug.Stack())}
		s.fillFailure()
	}
	panic(killSignal{})
}

var _ rt.Runtime = (*Sim)(nil)
