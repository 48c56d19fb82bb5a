package sim

import (
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

	killed     bool
	panicVal   any
	panicStack string

	wantStack bool // deadlock report: capture the stack and block again
	stack     string
}

// yieldPoint is a scheduling point at which the current task stays runnable:
// the strategy may run any runnable task next, including this one. It is the
// hot path of every rt call, kept small enough to inline.
func (s *Sim) yieldPoint() {
	t := s.current
	if t == nil || t.killed {
		s.yieldSlow()
		return
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
