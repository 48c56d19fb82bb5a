package sim

import (
	"math"
	"runtime/debug"
	"time"

	"github.com/windtunnel/windtunnel/sim/record"
)

type taskState uint8

const (
	taskRunnable taskState = iota
	taskBlocked
	taskDone
)

// task is a coroutine of the run. Exactly one task runs at a time; it gives
// control back to the scheduler only inside rt calls, through yieldPoint or
// block.
type task struct {
	// The fields every step reads or writes come first, within one cache
	// line: with hundreds of tasks, each step switches to a task whose
	// memory is likely cold.
	id int32
	// obj is the sim object the task's next step operates on, set when it
	// reaches a scheduling point. It is the id of the mutex, event or wait
	// group whose operation it is inside, or objAll when that operation may
	// touch anything (Yield, Sleep, Go, a context). Before its first step it
	// is -1-id, an object of its own. The exhaustive explorer reads it to
	// decide which steps commute; it costs one store per step.
	obj    int32
	state  taskState
	killed bool
	exited bool // its function returned (or unwound)
	// blocks counts how often the task blocked, so that the explorer can
	// tell a task that yielded (a switch away from it is a preemption) from
	// one that blocked and was woken again by the clock.
	blocks uint32
	runIdx int // position in Sim.runnable, -1 when not runnable
	next   func() (struct{}, bool)
	yield  func(struct{}) bool
	s      *Sim
	prio   int64 // PCT priority: higher runs first

	prioIdx int // position in Sim.prio (PCT's heap), -1 when not in it
	name    string
	inside  int // open protocol.Inside scopes
	stop    func()
	w       *worker // the coroutine running the task, nil once it exited

	// The FIFO wait queue (of a mutex) the task is in, and its neighbours
	// there: intrusive links, so that queueing, leaving the queue from the
	// middle and checking membership take O(1) and allocate nothing. A task
	// waits on one thing at a time.
	wq           *waitQueue
	wprev, wnext *task

	// ticker is the channel the task ticks on (TickerOf), nil for any
	// other task.
	ticker *simChan

	// sleep is the timer of the task's Sleep, reused by every Sleep: a task
	// sleeps at most once at a time.
	sleep timer

	// What a blocked task waits for ("Lock", "Sleep", ...) and on what
	// ("mutex user-lock#3"); for a Sleep, waitObj is empty and waitDur is the
	// duration, formatted only for a report (see waitString). Only
	// meaningful while the task is blocked.
	waitOp  string
	waitObj string
	waitDur time.Duration

	panicVal   any
	panicStack string

	wantStack bool // deadlock report: capture the stack and block again
	stack     string
}

// objAll is the object of an operation that may touch anything: it is
// dependent with every other step (see explore.go). Real objects are
// numbered from 1; a task's own object is -1-id (see task.obj).
const objAll int32 = 0

// objSpawn is the object every spawn operates on: task ids are handed out in
// spawn order.
const objSpawn int32 = math.MaxInt32

// objWorld is the object of the world's random stream (Sim.Rand).
const objWorld int32 = math.MaxInt32 - 1

// yieldPoint is a scheduling point at which the current task stays runnable:
// the strategy may run any runnable task next, including this one. The
// operation it is part of is not tied to one sim object.
func (s *Sim) yieldPoint() { s.yieldOn(objAll) }

// yieldOn is a scheduling point inside an operation on the sim object obj
// (objAll: on anything). It is the hot path of every rt call. The step ends
// here; when the next decision picks this task again it goes on without a
// coroutine switch (Sim.continueSelf).
func (s *Sim) yieldOn(obj int32) {
	t := s.current
	if t == nil || t.killed {
		s.yieldSlow()
		return
	}
	t.obj = obj
	if s.onTask && t.state == taskRunnable && s.continueSelf(t) {
		return // t runs the next step too: no switch
	}
	if !t.yield(struct{}{}) {
		panic(killSignal{})
	}
}

func (s *Sim) yieldSlow() {
	// cur panics with a clear message outside a task; a killed task is
	// unwinding after the run ended, and its deferred Unlocks and the like
	// run straight through.
	s.cur()
}

// block suspends the current task until somebody wakes it. The caller has
// already put the task on the queue of whatever it waits for, and re-checks
// its condition after block returns (wakeups may be spurious).
func (s *Sim) block(op, obj string) {
	t := s.cur()
	if t.killed {
		panic(killSignal{})
	}
	s.removeRunnable(t)
	t.state = taskBlocked
	t.blocks++
	t.waitOp, t.waitObj = op, obj
	if s.rec != nil {
		s.recordObj(record.EventWait, obj, op)
	}
	if s.onTask && s.continueSelf(t) {
		return // woken (by the clock, say) and picked again: no switch
	}
	for {
		if !t.yield(struct{}{}) {
			panic(killSignal{})
		}
		if t.wantStack {
			t.stack = string(debug.Stack())
			t.wantStack = false
			continue
		}
		break
	}
	// waitOp and waitObj are left as they are: they are read only while
	// the task is blocked, and clearing them would cost two stores per wait.
}

// waitString is what a blocked task waits for, as reports print it.
func (t *task) waitString() string {
	obj := t.waitObj
	if t.waitOp == "Sleep" && obj == "" {
		obj = t.waitDur.String()
	}
	return t.waitOp + " " + obj
}

// waitQueue is a FIFO of tasks linked through their wprev/wnext fields.
type waitQueue struct {
	head, tail *task
}

func (q *waitQueue) has(t *task) bool { return t.wq == q }

// pushBack queues t last. A task still linked into another queue (only a
// task that was stopped while it waited and whose deferred calls wait
// again) leaves that one first.
func (q *waitQueue) pushBack(t *task) {
	if t.wq != nil {
		t.wq.remove(t)
	}
	t.wq, t.wprev, t.wnext = q, q.tail, nil
	if q.tail != nil {
		q.tail.wnext = t
	} else {
		q.head = t
	}
	q.tail = t
}

// pushFront queues t first.
func (q *waitQueue) pushFront(t *task) {
	if t.wq != nil {
		t.wq.remove(t)
	}
	t.wq, t.wprev, t.wnext = q, nil, q.head
	if q.head != nil {
		q.head.wprev = t
	} else {
		q.tail = t
	}
	q.head = t
}

// popFront removes and returns the first task, or nil.
func (q *waitQueue) popFront() *task {
	t := q.head
	if t != nil {
		q.remove(t)
	}
	return t
}

// remove takes t out of q; t must be in q.
func (q *waitQueue) remove(t *task) {
	if t.wprev != nil {
		t.wprev.wnext = t.wnext
	} else {
		q.head = t.wnext
	}
	if t.wnext != nil {
		t.wnext.wprev = t.wprev
	} else {
		q.tail = t.wprev
	}
	t.wq, t.wprev, t.wnext = nil, nil, nil
}

// captureStack resumes a blocked task just long enough for it to record its
// own stack, for a deadlock report.
func (s *Sim) captureStack(t *task) string {
	t.wantStack = true
	s.current = t
	if _, alive := t.next(); !alive {
		t.state = taskDone
	}
	s.current = nil
	return t.stack
}
