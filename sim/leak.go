package sim

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// The leak oracle (Config.LeakCheck): when main returns, the other tasks go
// on until none can run and no timer is pending. Every task still blocked
// then waits for something nothing left can do, like a goroutine in Go's
// leak profile: the run fails with each one, its wait and its frame. A run
// whose tasks never settle (a ticker, a spinning task) is cut off after
// LeakSettle of virtual time or LeakSettleSteps steps, and its blocked tasks
// are reported as still blocked then. Tickers (TickerOf) are the exception:
// they can wake only a receiver of their channel, so with none waiting the
// run settles beside them.

// FailLeak is the kind of a run whose tasks were left blocked forever after
// main returned.
const FailLeak FailureKind = "leak"

// Defaults of the settle phase.
const (
	defaultLeakSettle      = time.Minute
	defaultLeakSettleSteps = 1_000_000
)

// leakState is the settle phase's progress.
type leakState struct {
	started bool
	done    bool  // settled, or cut off: the run is over
	atNs    int64 // when main returned
	atStep  int64
}

// settling reports whether the run goes on although main has returned: a
// leak check that has not finished. Only decide calls it, after main ended.
func (s *Sim) settling() bool {
	if !s.cfg.LeakCheck || s.leak.done {
		return false
	}
	if !s.leak.started {
		s.leak = leakState{started: true, atNs: s.nowNs, atStep: s.steps}
	}
	return true
}

// settleOver reports whether the settle phase ran out of virtual time or
// steps while some task could still move.
func (s *Sim) settleOver() bool {
	return s.leak.started && (s.nowNs-s.leak.atNs >= int64(s.cfg.LeakSettle) || s.steps-s.leak.atStep >= s.cfg.LeakSettleSteps)
}

// stuck ends a run in which no task can run and no timer is pending: a
// deadlock while main waits, or the leak check once main has returned.
func (s *Sim) stuck() {
	if s.root.state == taskDone {
		s.failLeak("")
		return
	}
	s.failDeadlock()
}

// failLeak reports the blocked tasks as leaked, each resumed just long
// enough to capture its stack; with none, the run ends cleanly. cutOff says
// why tasks could still have moved.
func (s *Sim) failLeak(cutOff string) {
	s.leak.done = true
	var blocked []*task
	for _, t := range s.tasks {
		if t.state == taskBlocked && t.ticker == nil && !(cutOff != "" && t.waitOp == "Sleep") {
			blocked = append(blocked, t)
		}
	}
	if len(blocked) == 0 {
		return
	}
	msg := fmt.Sprintf("%d task(s) blocked forever after main returned (goroutine leak)", len(blocked))
	if cutOff != "" {
		msg = fmt.Sprintf("%d task(s) still blocked %s after main returned (possible goroutine leak)", len(blocked), cutOff)
	}
	f := &Failure{Kind: FailLeak, Message: msg}
	s.failure = f
	f.Step, f.At = s.steps, time.Duration(s.nowNs)
	for _, t := range blocked {
		wait := t.waitString()
		stack := s.captureStack(t)
		f.Blocked = append(f.Blocked, BlockedTask{ID: t.id, Name: t.name, Wait: wait, Site: waitSite(stack), Stack: stack})
	}
}

// cutOffWhy says how long the settle phase ran, for the report.
func (s *Sim) cutOffWhy() string {
	return fmt.Sprintf("%v and %d steps", time.Duration(s.nowNs-s.leak.atNs), s.steps-s.leak.atStep)
}

// TickerOf marks the current task as the ticker of c: from now on it only
// sleeps and, between sleeps, sends on c without blocking (rtgo's
// time.Ticker, which in Go is no goroutine at all). Such a task can wake no
// task but a receiver of c, so once every other task is blocked and none
// waits on c, the leak check settles while it still ticks, and does not
// report it. A channel of another runtime marks nothing.
func (s *Sim) TickerOf(c rt.AnyChan) {
	if sc, ok := c.(*simChan); ok && sc.s == s {
		s.cur().ticker = sc
	}
}

// tickersOnly reports whether only tickers can still move, none of whose
// channels a task waits to receive from: every runnable task is such a
// ticker and every pending timer wakes one. Nothing left would wake a
// blocked task, although the tickers keep ticking.
func (s *Sim) tickersOnly() bool {
	idle := func(t *task) bool { return t != nil && t.ticker != nil && !hasLive(t.ticker.recvq) }
	for _, t := range s.runnable {
		if !idle(t) {
			return false
		}
	}
	if len(s.runnable) == 0 && s.timers.first() == nil {
		return false // stuck: the usual end
	}
	return s.timers.all(func(tm *timer) bool { return tm.kind == timerWake && idle(tm.task) })
}
