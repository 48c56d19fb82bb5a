package sim

import (
	"math"
	"runtime/debug"
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
	id     int32
	name   string
	s      *Sim
	next   func() (struct{}, bool)
	stop   func()
	yield  func(struct{}) bool
	state  taskState
	runIdx int   // position in Sim.runnable, -1 when not runnable
	prio   int64 // PCT priority: higher runs first

	waitOp  string // what a blocked task waits for ("Lock", "Sleep", ...)
	waitObj string // on what ("mutex user-lock#3")

	// obj is the sim object the task's next step operates on, set when it
	// reaches a scheduling point: the id of the mutex, event or wait group
	// whose operation it is inside, or objAll when that operation may touch
	// anything (Yield, Sleep, Go, a context); before its first step, -1-id,
	// an object of its own. The exhaustive explorer reads it to decide which
	// steps commute; it costs one store per step.
	obj int32
	// blocks counts how often the task blocked, so that the explorer can
	// tell a task that yielded (a switch away from it is a preemption) from
	// one that blocked and was woken again by the clock.
	blocks uint32

	killed     bool
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
// (objAll: on anything). It is the hot path of every rt call, kept small
// enough to inline.
func (s *Sim) yieldOn(obj int32) {
	t := s.current
	if t == nil || t.killed {
		s.yieldSlow()
		return
	}
	t.obj = obj
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
	t.waitOp, t.waitObj = "", ""
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
