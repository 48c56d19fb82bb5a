package sim

import (
	"fmt"
	"iter"
	"math/bits"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
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
	selRand  *rand.Rand   // a select's choice among ready cases (select.go)
	worldSrc *worldSource // world's source: the seed's, or a choice list (choices.go)
	// insideMain counts the open Inside scopes outside every task.
	insideMain int

	nowNs int64 // virtual time since Epoch
	steps int64
	// stepCap is where decide next looks at the step limit and at
	// Config.Abandon: MaxSteps, or sooner by AbandonCheckSteps, so that the
	// hot path compares one number either way.
	stepCap   int64
	abandoned bool   // Config.Abandon ended the run
	nextSeq   uint64 // timer tie-breaker: insertion order

	tasks []*task // every task ever started, by id
	// runnable is the set the strategy picks from, in an order that is part
	// of the schedule: random walk picks by index. A task joins at the end
	// and leaves by swapping the last task into its place (addRunnable,
	// removeRunnable): O(1), and the order is a function of the history.
	runnable []*task
	// walk: the strategy is RandomWalk, whose pick decide and continueSelf
	// make themselves (the same draw as randomWalk.pick), with no call.
	walk bool
	// prio is PCT's max-heap of the runnable tasks by priority (prioOn), so
	// that its pick is O(1) and a change of the runnable set O(log n).
	prio   prioHeap
	prioOn bool
	// goOrder is the strategy when it is GoOrder, which hears of every
	// wake and Yield; nil otherwise.
	goOrder *goOrder
	current *task
	root    *task
	stepNs  int64 // Config.StepDuration

	// onTask: decisions may be made on a task's coroutine (continueSelf).
	// What continueSelf did there for the loop (see loop): it ended the
	// step, and made the next decision.
	onTask    bool
	pool      bool // keep the coroutines of ended tasks for new ones (worker)
	stepEnded bool
	decided   bool
	decision  int

	switches int64 // resumptions of a task's coroutine by the loop (benchmarks)

	idle   *worker // coroutines whose task ended, for the next spawns (a stack)
	slab   []task  // room for the next tasks (newTask)
	timers timerHeap

	trace   trace
	header  []string
	failure *Failure
	nextObj int32
	objSel  []bool // by object id, whether SURW selects it (Config.Selected)

	// For the exhaustive explorer: clock jumps so far, and what the current
	// step touched outside the operation it resumed in (see touch).
	advances   int64
	touched    bool
	touchedObj int32

	// probes counts the rare events the run reached (probe.go).
	probes map[string]int64

	// watch is the hang watch's shared state (hang.go), nil when
	// Config.HangAfter is negative; checkSteps is how often decide looks
	// at the step limit, Abandon and the watch.
	watch      *hangWatch
	checkSteps int64

	// Keep decisions, operations and preemptions so far (choices.go,
	// record.go), and the record when Config.Record.
	recorded     protocol.Recorded // Kept and Dropped; the rest at the end
	operations   int64
	preemptions  int64
	preemptSteps []int64 // when RecordDecisions
	last         *task   // the task of the previous step
	rec          *recorder

	leak leakState // the leak check's settle phase (leak.go)
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
	rp := &cfg.replay
	s := &Sim{
		cfg:      cfg,
		strategy: cfg.Strategy,
		schedSrc: src,
		sched:    rand.New(src),
		worldSrc: &worldSource{pcg: rand.NewPCG(cfg.Seed, streamWorld), replay: rp.ReplayChoices,
			keyed: rp.ReplayChoices && rp.Keeps.ChoiceKeys != nil, seed: cfg.Seed,
			list: rp.Choices, keeps: rp.Keeps, record: rp.RecordChoices, max: rp.MaxChoices},
	}
	if s.worldSrc.keyed {
		s.worldSrc.ix = cfg.keyIndex
		s.worldSrc.presize(rp.Keeps)
	}
	s.worldSrc.s = s
	s.stepCap = cfg.MaxSteps
	s.checkSteps = cfg.MaxSteps
	if cfg.Abandon != nil {
		s.checkSteps = abandonCheckSteps
	}
	if cfg.HangAfter > 0 {
		s.watch = &hangWatch{run: hangMagic | hangRuns.Add(1)}
		s.checkSteps = hangCheckSteps
	}
	s.stepCap = min(s.checkSteps, cfg.MaxSteps)
	s.world = rand.New(s.worldSrc)
	if cfg.Record {
		s.rec = &recorder{max: cfg.MaxRecord}
	}
	s.trace.init(cfg.TraceTail, cfg.TraceOut, cfg.RecordDecisions)
	s.trace.names = func(id int32) string { return s.tasks[id].name }
	_, s.walk = s.strategy.(*randomWalk)
	// The explorer's pick does the search's bookkeeping (vector clocks, the
	// decision tree). On the small stack of a task's coroutine that would
	// grow the stack, a copy per task per run, to save a switch it seldom
	// saves. So its decisions stay on the loop's goroutine.
	// Nor does an exploration keep the coroutines of ended tasks. Its runs
	// are short and seldom start tasks late. Parked coroutines, with their
	// shallow stacks, lower the runtime's estimate of a new goroutine's
	// starting stack, so the next runs' tasks would grow (copy) their
	// stacks more often.
	_, explorer := s.strategy.(*explorer)
	s.onTask = !explorer
	s.pool = !explorer
	s.stepNs = int64(cfg.StepDuration)
	if err := s.strategy.start(s); err != nil {
		return Result{Seed: cfg.Seed, Strategy: s.strategy.String(), Err: err}
	}
	s.root = s.spawn("main", func() { main(s) })
	if s.watch != nil {
		return s.runWatched(s.strategy.String())
	}
	s.runAll()
	return s.result()
}

// loop runs scheduling steps until the root task ends or the run fails.
//
// A step ends when its task yields, blocks or ends. What happens between two
// steps (endStep, then decide) is the same code wherever it runs: here, or,
// when the task yielded or blocked, on the task's own coroutine before it
// gives control back (continueSelf). That saves both coroutine switches
// whenever the strategy picks the same task again, and a task woken by the
// clock it advanced itself. A decision made there for another task is handed
// to this loop in s.decision. Either way each decision is made exactly once,
// at the same point and from the same state, so the schedule does not depend
// on which coroutine made it.
//
// A decision for another task still costs two coroutine switches, into the
// loop and out of it. Tasks that resume each other directly, in a chain,
// would save round trips but not time. A switch back into the loop lands
// on a stack the cache holds; one down a chain lands on a task's, which it
// seldom does. (The dropped design and its figures are in
// docs/design-notes-2026-12.md.)
func (s *Sim) loop() {
	for {
		i := s.decision
		if !s.decided {
			i = s.decide(false)
		}
		s.decided = false
		if i < 0 {
			return
		}
		t := s.runnable[i]
		s.begin(t)
		s.switches++
		if _, alive := t.next(); !alive || t.exited {
			s.current = nil
			s.finish(t)
		}
		if s.stepEnded {
			s.stepEnded = false
		} else {
			s.endStep()
		}
	}
}

// begin starts a step of t.
func (s *Sim) begin(t *task) {
	s.steps++
	s.trace.decision(s.steps, s.nowNs, t.id)
	s.current = t
	if l := s.last; l != t {
		s.switched(l, t)
	}
}

// switched counts a step that goes to another task than the last one. It
// is a preemption when the last one could have gone on (it yielded, it was
// not blocked or done): the CHESS measure of how hard a schedule is to
// find.
func (s *Sim) switched(l, t *task) {
	s.last = t
	var preempted *task
	if l != nil && l.state == taskRunnable {
		s.preemptions++
		preempted = l
		if s.trace.record {
			s.preemptSteps = append(s.preemptSteps, s.steps)
		}
	}
	if s.rec != nil {
		s.recordSwitch(t, preempted)
	}
}

// endStep ends the current step: no task runs, and StepDuration passes.
func (s *Sim) endStep() {
	s.current = nil
	if s.stepNs > 0 && s.failure == nil {
		s.nowNs += s.stepNs
		s.fireDueTimers()
	}
}

// needLoop is decide's answer on a task's coroutine when only the loop can
// go on: every task is blocked with no timer pending, and the deadlock
// report resumes each blocked task to capture its stack.
const needLoop = -2

// pickClock is a strategy's pick that runs no task: the clock jumps to the
// next timer instead, as if the processor paused (Sim.jumpClock).
const pickClock = -3

// ClockDecision is the entry of a decision list (Result.Decisions) for a
// step that ran no task: the clock jumped to the next timer while tasks
// could run. Replay and a shrinker's guided run make the same jump there.
const ClockDecision int32 = -1

// decide chooses the next step: an index into s.runnable, moving the clock
// when no task can run; -1 when the run is over (main returned, a failure, a
// limit, a replay divergence or an explorer cut-off).
func (s *Sim) decide(onTask bool) int {
	for s.failure == nil && (s.root.state != taskDone || s.settling()) {
		if s.leak.started && s.settleOver() {
			if onTask {
				return needLoop
			}
			s.failLeak(s.cutOffWhy())
			continue
		}
		if s.leak.started && s.tickersOnly() {
			if onTask {
				return needLoop
			}
			s.failLeak("")
			continue
		}
		if len(s.runnable) == 0 {
			if s.timers.first() == nil {
				if onTask {
					return needLoop
				}
				s.stuck()
				continue
			}
			s.advanceToNextTimer()
			continue
		}
		if s.steps >= s.stepCap {
			if s.watch != nil {
				if s.watch.hung.Load() {
					return -1 // Run has returned: touch nothing more
				}
				s.publishProgress(s.steps)
			}
			if s.steps >= s.cfg.MaxSteps {
				s.failLimit(fmt.Sprintf("step limit of %d exceeded", s.cfg.MaxSteps))
				return -1
			}
			if s.cfg.Abandon != nil && s.cfg.Abandon.Load() {
				s.abandoned = true
				s.failLimit(fmt.Sprintf("abandoned at step %d: the harness no longer needs this run", s.steps))
				return -1
			}
			s.stepCap = min(s.steps+s.checkSteps, s.cfg.MaxSteps)
		}
		if s.walk { // random walk's pick, without an interface call
			hi, _ := bits.Mul64(s.schedSrc.Uint64(), uint64(len(s.runnable)))
			return int(hi)
		}
		i := s.strategy.pick(s)
		if i == pickClock {
			s.jumpClock()
			continue
		}
		return i
	}
	return -1
}

// continueSelf runs, on the coroutine of t, whose step ends at a scheduling
// point (it yields, or blocks), the part of the loop up to the next
// decision. It reports true when the decision is t again: t then goes on
// with the next step without any coroutine switch. Otherwise the decision
// waits in s.decision for the loop, and t gives control back.
func (s *Sim) continueSelf(t *task) bool {
	s.endStep()
	s.stepEnded = true
	var i int
	if s.walk && len(s.runnable) > 0 && s.failure == nil && s.steps < s.stepCap && s.root.state != taskDone {
		// decide's answer in this, the common case, without the calls.
		hi, _ := bits.Mul64(s.schedSrc.Uint64(), uint64(len(s.runnable)))
		i = int(hi)
	} else {
		i = s.decide(true)
	}
	if i >= 0 && s.runnable[i] == t {
		s.stepEnded = false
		s.begin(t)
		return true
	}
	if i != needLoop {
		s.decided, s.decision = true, i
	}
	return false
}

func (s *Sim) finish(t *task) {
	if t.exited {
		s.release(t)
	}
	if t.state == taskRunnable {
		s.removeRunnable(t)
	}
	t.state = taskDone
	s.trace.event(s.steps, s.nowNs, evDone, t.id, 0, "")
	if s.rec != nil {
		s.recordOn(t.id, record.Event{Kind: record.EventDone})
	}
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
	t := s.newTask()
	t.id, t.name, t.s = int32(len(s.tasks)), name, s
	t.obj = -1 - t.id
	s.tasks = append(s.tasks, t)
	if s.watch != nil {
		s.watch.mu.Lock()
		s.watch.names = append(s.watch.names, name)
		s.watch.mu.Unlock()
	}
	s.assignWorker(t, f)
	s.addRunnable(t)
	s.strategy.spawned(s, t)
	s.trace.event(s.steps, s.nowNs, evSpawn, t.id, 0, name)
	if s.rec != nil {
		s.recordOn(t.id, record.Event{Kind: record.EventSpawn, Text: name})
	}
	return t
}

// maxTaskSlab is how many tasks one allocation makes room for at most.
const maxTaskSlab = 32

// newTask returns a zeroed task, carved from a slab: spawning allocates once
// per maxTaskSlab tasks in a long run. Slabs grow from 4 tasks, so that a
// short run (an exploration makes many) does not pay for room it never
// uses. Tasks live as long as the run (s.tasks keeps them).
func (s *Sim) newTask() *task {
	if len(s.slab) == 0 {
		s.slab = make([]task, min(max(4, len(s.tasks)), maxTaskSlab))
	}
	t := &s.slab[0]
	s.slab = s.slab[1:]
	t.runIdx, t.prioIdx = -1, -1
	return t
}

// worker is a coroutine that runs tasks one after another. When a task's
// function returns, the worker parks in the run's idle list and the next
// spawn reuses it. So a task that ends and a task that starts (an AfterFunc
// firing, say) cost no new coroutine.
type worker struct {
	next     func() (struct{}, bool)
	stop     func()
	t        *task
	f        func()
	nextIdle *worker // the idle list's link
}

// assignWorker gives t a coroutine that will run f: an idle one if there is
// one, else a new one.
func (s *Sim) assignWorker(t *task, f func()) {
	var w *worker
	if w = s.idle; w != nil {
		s.idle, w.nextIdle = w.nextIdle, nil
	} else {
		w = &worker{}
		w.next, w.stop = iter.Pull(w.body)
	}
	w.t, w.f = t, f
	t.w, t.next, t.stop = w, w.next, w.stop
}

// body is a worker's coroutine: run the task assigned, mark it exited and
// park until the next one. A worker stopped while it runs a task (its task
// killed at the end of the run) or while it is idle ends, and so does one
// whose task ends in a run that keeps no idle workers (Sim.pool).
func (w *worker) body(yield func(struct{}) bool) {
	for {
		t, f := w.t, w.f
		w.t, w.f = nil, nil
		t.yield = yield
		var run uint64
		if t.s.watch != nil {
			run = t.s.watch.run
		}
		w.runTask(hangToken{run, uint64(t.id)}, t, f)
		t.exited = true
		if t.killed || !t.s.pool {
			return
		}
		if !yield(struct{}{}) {
			return
		}
	}
}

func (t *task) run(f func()) {
	defer t.recoverPanic()
	f()
}

// release parks the worker of t, which has exited.
func (s *Sim) release(t *task) {
	if w := t.w; w != nil && !t.killed && s.pool {
		w.nextIdle, s.idle = s.idle, w
	}
	t.w, t.next, t.stop, t.yield = nil, nil, nil, nil
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
	// By index: a deferred call may start a task, which is stopped too.
	for i := 0; i < len(s.tasks); i++ {
		t := s.tasks[i]
		if t.state == taskDone {
			continue
		}
		if s.watch != nil {
			// Deferred calls run user code, which may hang too.
			s.publishProgress(s.steps + int64(i) + 1)
		}
		t.killed = true
		s.current = t
		t.stop()
		s.current = nil
		t.state = taskDone
	}
	for w := s.idle; w != nil; w = w.nextIdle {
		w.stop()
	}
	s.idle = nil
	s.runnable = s.runnable[:0]
	s.prio = s.prio[:0]
}

func (s *Sim) addRunnable(t *task) {
	t.state = taskRunnable
	t.runIdx = len(s.runnable)
	s.runnable = append(s.runnable, t)
	if s.prioOn {
		s.prio.push(t)
	}
}

func (s *Sim) removeRunnable(t *task) {
	i := t.runIdx
	last := len(s.runnable) - 1
	s.runnable[i] = s.runnable[last]
	s.runnable[i].runIdx = i
	s.runnable = s.runnable[:last]
	t.runIdx = -1
	if s.prioOn {
		s.prio.remove(t)
	}
}

// wake makes a blocked task runnable. Waking a runnable or finished task is a
// no-op, so wakers need not know whether someone else woke it first.
func (s *Sim) wake(t *task) {
	if t.state == taskBlocked {
		s.addRunnable(t)
		if s.goOrder != nil {
			s.goOrder.readied(s, t)
		}
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

// stepsSoFar is the number of scheduling steps so far (protocol.Steps). A task
// that reads it depends on every other task's progress (see Explore).
func (s *Sim) stepsSoFar() int64 {
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
	text := fmt.Sprintf(format, a...)
	s.trace.event(s.steps, s.nowNs, evNote, id, 0, text)
	if s.rec != nil {
		s.recordOn(id, record.Event{Kind: record.EventNote, Text: text})
	}
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
