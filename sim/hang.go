package sim

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A task that blocks outside the simulator (a Go channel, a sync lock, I/O)
// or loops without an rt call never gives control back, and no scheduling
// code runs again to notice. So a watched run (Config.HangAfter > 0) runs
// its scheduler on a goroutine of its own, and Run's goroutine watches it.
// The scheduler publishes its step count every hangCheckSteps steps (an
// atomic store on a path it takes anyway, so a step costs nothing more).
// When that count stays still for HangAfter, Run takes every goroutine's
// stack, finds the one that runs a task of this run outside a coroutine
// switch, and returns a FailHang failure naming it. The wedged goroutine
// cannot be unwound: it stays parked, with the run's other coroutines.

// FailHang: a task ran Config.HangAfter of wall time without reaching a
// scheduling point.
const FailHang FailureKind = "hang"

// hangCheckSteps is how often a watched run publishes its progress: a run
// is taken for wedged only when it takes fewer steps than this in
// HangAfter.
const hangCheckSteps = 16

// hangRuns numbers watched runs, so that a goroutine dump tells this run's
// tasks from those of runs on other goroutines.
var hangRuns atomic.Uint64

// hangMagic marks the run number in a goroutine dump.
const hangMagic = 0x5eed << 48

// hangToken is the argument that names a run and a task in a goroutine
// dump. An array of two words is passed on the stack, where a traceback
// prints it exactly (register arguments may print stale).
type hangToken [2]uint64

// schedulerTask is the token's task for the scheduler's own goroutine.
const schedulerTask = ^uint64(0)

func (k hangToken) String() string { return fmt.Sprintf("{%#x, %#x}", k[0], k[1]) }

// hangWatch is the watched run's state shared with Run's goroutine.
type hangWatch struct {
	run      uint64 // the token's first word
	progress atomic.Int64
	nowNs    atomic.Int64 // virtual time at the last progress
	hung     atomic.Bool  // Run gave up on the run: the scheduler must stop

	mu    sync.Mutex
	names []string // task names by id: the dump gives ids
}

// publishProgress is the scheduler's progress report, from decide's periodic
// check (and from stopAll, which runs deferred user code too).
func (s *Sim) publishProgress(p int64) {
	s.watch.progress.Store(p)
	s.watch.nowNs.Store(s.nowNs)
}

// runTask runs a task's function under a frame whose token names it.
//
//go:noinline
func (w *worker) runTask(tok hangToken, t *task, f func()) {
	t.run(f)
}

// schedulerEnd is how the scheduler's goroutine ended: normally, by a
// panic outside every task, or by runtime.Goexit in a task (iter.Pull
// carries it into the goroutine that resumed the coroutine). Run's
// goroutine repeats the last two, as it would have met them itself.
type schedulerEnd struct {
	panicked bool
	goexit   bool
	value    any
}

// runScheduler is the scheduler's goroutine of a watched run.
//
//go:noinline
func (s *Sim) runScheduler(tok hangToken, done chan<- schedulerEnd) {
	normal := false
	defer func() {
		var end schedulerEnd
		if !normal {
			if r := recover(); r != nil {
				end = schedulerEnd{panicked: true, value: r}
			} else {
				end.goexit = true
			}
		}
		done <- end
	}()
	s.runAll()
	normal = true
}

// runAll runs the scheduler to the end of the run and stops every task. A
// run given up as hung stops at its next check instead, touching nothing.
func (s *Sim) runAll() {
	s.loop()
	if s.watch != nil && s.watch.hung.Load() {
		return
	}
	s.strategy.end(s)
	s.stopAll()
}

// runWatched runs the scheduler on a goroutine of its own and waits for it,
// or for HangAfter without progress.
func (s *Sim) runWatched(strategy string) Result {
	w := s.watch
	done := make(chan schedulerEnd, 1) // the scheduler never waits for a Run that gave up
	go s.runScheduler(hangToken{w.run, schedulerTask}, done)
	limit := s.cfg.HangAfter
	tick := max(limit/8, time.Millisecond)
	timer := time.NewTimer(tick)
	defer timer.Stop()
	last, since := w.progress.Load(), time.Now()
	busyUntil := time.Time{} // when a stall whose goroutines all compute is given up on
	for {
		select {
		case end := <-done:
			switch {
			case end.panicked:
				panic(end.value)
			case end.goexit:
				runtime.Goexit()
			}
			return s.result()
		case now := <-timer.C:
			if p := w.progress.Load(); p != last {
				last, since, busyUntil = p, now, time.Time{}
			} else if now.Sub(since) >= limit && busyUntil.IsZero() && computing(wedgedGoroutines(allStacks(), w.run)) {
				// A task that computes may be slow work on a loaded machine,
				// not a wait that only the simulator could end: it gets
				// busyFactor times the limit before it counts as a loop.
				busyUntil = since.Add(busyFactor * limit)
			} else if now.Sub(since) >= limit && (busyUntil.IsZero() || !now.Before(busyUntil)) {
				w.hung.Store(true)
				if x, ok := s.strategy.(*explorer); ok {
					// Explore must not go on from a run that never ended.
					x.err = s.hangFailure(last, now.Sub(since))
					return Result{Seed: s.cfg.Seed, Strategy: strategy, Steps: last, Err: x.err}
				}
				return Result{Seed: s.cfg.Seed, Strategy: strategy, Steps: last, Err: s.hangFailure(last, now.Sub(since)),
					TailAbout: "none: the run is wedged, its trace stays with it"}
			}
			timer.Reset(tick)
		}
	}
}

// busyFactor is how many hang limits a stalled run whose goroutines are
// all computing gets: a blocked goroutine never ends without the
// simulator, a computing one may.
const busyFactor = 6

// computing reports whether every wedged goroutine is running, none
// blocked.
func computing(gs []wedgedGoroutine) bool {
	for _, g := range gs {
		if !strings.HasPrefix(g.reason, "running") {
			return false
		}
	}
	return len(gs) > 0
}

// hangFailure describes the wedged goroutines of the run from a dump of
// every goroutine's stack.
func (s *Sim) hangFailure(step int64, stalled time.Duration) *Failure {
	w := s.watch
	wedged := wedgedGoroutines(allStacks(), w.run)
	f := &Failure{Kind: FailHang, Step: step, At: time.Duration(w.nowNs.Load())}
	var b strings.Builder
	for i, g := range wedged {
		name := "the simulator's scheduler (a Config.TraceOut writer or a strategy)"
		if g.task != schedulerTask {
			w.mu.Lock()
			if g.task < uint64(len(w.names)) {
				name = fmt.Sprintf("task %q", w.names[g.task])
				if i == 0 {
					f.Task = w.names[g.task]
				}
			}
			w.mu.Unlock()
		}
		if i == 0 {
			f.Stack = g.stack
		}
		site := hangSite(g.stack)
		fmt.Fprintf(&b, "%s ran %v of wall time without reaching a scheduling point: its goroutine is [%s]", name, stalled.Round(time.Millisecond), g.reason)
		if site != "" {
			fmt.Fprintf(&b, " at %s", site)
		}
		b.WriteString("\n")
	}
	if len(wedged) == 0 {
		fmt.Fprintf(&b, "the run took no step for %v of wall time, and no goroutine of it could be found running or blocked outside the simulator\n", stalled.Round(time.Millisecond))
	}
	b.WriteString("rule: a simulated task waits only through the rt seam: no Go channels or select between tasks, no sync locks or\n" +
		"  WaitGroups, no I/O, no go statements, and no loop that waits for another task without an rt call in it\n")
	b.WriteString("fix: use the Sim's rt primitives (NewMutex, NewWaitGroup, NewEvent, Sleep, Yield) instead of sync and channels,\n" +
		"  s.Go instead of go, and a simulated world (sim/simbus, sim/simdb) instead of real I/O\n")
	fmt.Fprintf(&b, "step: at or after %d (the count as the watch last saw it)\n", step)
	fmt.Fprintf(&b, "the wedged goroutine cannot be unwound: it stays parked for the rest of the process with the run's other tasks, and the run's trace is lost (Config.HangAfter, simtest -sim.hang)")
	for _, g := range wedged {
		b.WriteString("\n\n")
		b.WriteString(g.stack)
	}
	f.Message = b.String()
	return f
}

// allStacks is every goroutine's stack, grown until it fits.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for range 8 {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
	return string(buf)
}

// wedgedGoroutine is a goroutine of the run that is not parked in a
// coroutine switch: the one that holds the run.
type wedgedGoroutine struct {
	task   uint64 // the token's task: an id, or schedulerTask
	reason string // "chan receive", "sync.Mutex.Lock", "running", ...
	stack  string
}

// wedgedGoroutines finds the goroutines of run in dump (runtime.Stack's
// format) that are not parked in a coroutine switch: the task that runs,
// or the scheduler itself when it is stuck outside every task.
func wedgedGoroutines(dump string, run uint64) []wedgedGoroutine {
	mark := fmt.Sprintf("{%#x, ", run)
	var out []wedgedGoroutine
	for _, g := range strings.Split(dump, "\n\n") {
		i := strings.Index(g, mark)
		if i < 0 {
			continue
		}
		header, _, _ := strings.Cut(g, "\n")
		reason := header
		if a, b := strings.Index(header, "["), strings.LastIndex(header, "]"); a >= 0 && b > a {
			reason = header[a+1 : b]
		}
		if strings.HasPrefix(reason, "coroutine") {
			continue
		}
		// A goroutine that loops is preempted for the dump: it shows as
		// runnable, and it was running.
		if r, _, _ := strings.Cut(reason, ","); r == "runnable" || r == "running" {
			reason = "running" + strings.TrimPrefix(reason, r)
		}
		var task uint64
		if _, err := fmt.Sscanf(g[i+len(mark):], "%v}", &task); err != nil {
			continue
		}
		out = append(out, wedgedGoroutine{task: task, reason: reason, stack: strings.TrimSpace(g)})
	}
	return out
}

// standardFrame says whether a traceback's function line is in the
// standard library: its import path's first element has no dot.
func standardFrame(fn string) bool {
	dir, rest := "", fn
	if j := strings.LastIndex(fn, "/"); j >= 0 {
		dir, rest = fn[:j+1], fn[j+1:]
	}
	pkg, _, _ := strings.Cut(rest, ".")
	first, _, _ := strings.Cut(dir+pkg, "/")
	return !strings.Contains(first, ".")
}

// hangSite is the first frame of a stack outside the standard library and
// the simulator: where user code waits or loops.
func hangSite(stack string) string { return userFrame(stack, standardFrame) }
