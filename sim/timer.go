package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

type timerKind uint8

const (
	timerWake     timerKind = iota // wake a sleeping task
	timerSpawn                     // AfterFunc: start a task
	timerDeadline                  // cancel a context at its deadline
)

// timer is a pending event of the virtual clock. Timers due at the same
// instant are released together; which of the tasks they make runnable goes
// first is then the strategy's (seeded) choice.
type timer struct {
	when    int64  // virtual ns since Epoch
	seq     uint64 // insertion order, for a total order in the heap
	kind    timerKind
	fired   bool // released by the clock (since it was last set)
	pending bool // in the heap and neither fired nor removed
	task    *task
	fn      func()
	name    string
	ctx     *simCtx
}

// timerEntry is a heap slot. The key is kept in the slot, so that sifting
// compares and moves slots without following a pointer per level.
type timerEntry struct {
	when int64
	seq  uint64
	t    *timer
}

func (a *timerEntry) before(b *timerEntry) bool {
	return a.when < b.when || (a.when == b.when && a.seq < b.seq)
}

// live reports whether the slot is the timer's current setting: a removed
// timer stays in the heap as a dead slot until it surfaces (or the heap is
// compacted), and a timer set again (a task's Sleep timer) has a new seq.
func (a *timerEntry) live() bool { return a.t.pending && a.t.seq == a.seq }

// timerHeap is the virtual clock's queue of timers, ordered by (when,
// seq). (when, seq) is a total order (seq is unique), so the order timers
// fire in does not depend on how the queue is arranged inside: it is always
// the sorted order.
//
// It is a 4-ary min-heap of slots plus a front slot. Four children per node
// halve the depth of a binary heap, and the four keys compared at each level
// of a sift-down share a cache line or two. Removal is lazy, so a sift
// touches the heap's array only, never the timers themselves. The front
// slot holds a timer set earlier than every timer in the heap, the common
// case of a short Sleep while long timers (deadlines, idle timeouts) wait:
// setting it and firing it are O(1), however many timers are pending.
type timerHeap struct {
	h        []timerEntry
	dead     int // slots in h whose timer was removed
	front    timerEntry
	hasFront bool // front holds a pending timer before every slot in h
}

const timerArity = 4

func (th *timerHeap) push(t *timer) {
	e := timerEntry{when: t.when, seq: t.seq, t: t}
	if th.hasFront {
		if !e.before(&th.front) {
			th.pushHeap(e)
			return
		}
		th.pushHeap(th.front)
	} else if top := th.firstInHeap(); top != nil && !e.before(top) {
		th.pushHeap(e)
		return
	}
	th.front, th.hasFront = e, true
}

func (th *timerHeap) pushHeap(e timerEntry) {
	th.h = append(th.h, e)
	up(th.h, len(th.h)-1)
}

// pop removes the first slot, which first returned.
func (th *timerHeap) pop() timerEntry {
	if th.hasFront {
		th.hasFront = false
		e := th.front
		th.front = timerEntry{}
		return e
	}
	return th.popHeap()
}

// popHeap removes the heap's top slot; the heap must not be empty.
func (th *timerHeap) popHeap() timerEntry {
	h := th.h
	e := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = timerEntry{}
	th.h = h[:last]
	if last > 0 {
		down(th.h, 0)
	}
	return e
}

// first returns the earliest pending timer's slot, or nil when no timer is
// pending.
func (th *timerHeap) first() *timerEntry {
	if th.hasFront {
		return &th.front
	}
	return th.firstInHeap()
}

// firstInHeap drops dead slots from the top of the heap and returns the top.
func (th *timerHeap) firstInHeap() *timerEntry {
	for len(th.h) > 0 {
		if e := &th.h[0]; e.live() {
			return e
		}
		th.popHeap()
		th.dead--
	}
	return nil
}

// all reports whether f holds for every pending timer; it stops at the
// first that fails.
func (th *timerHeap) all(f func(*timer) bool) bool {
	if th.hasFront && !f(th.front.t) {
		return false
	}
	for i := range th.h {
		if e := &th.h[i]; e.live() && !f(e.t) {
			return false
		}
	}
	return true
}

// remove unsets t, which is pending. In the front slot it goes at once; in
// the heap its slot stays until it surfaces, and when dead slots outnumber
// live ones the heap is rebuilt without them, so that removal costs O(1)
// amortized and the heap stays O(pending timers).
func (th *timerHeap) remove(t *timer) {
	t.pending = false
	if th.hasFront && th.front.t == t && th.front.seq == t.seq {
		th.hasFront = false
		th.front = timerEntry{}
		return
	}
	th.dead++
	if th.dead > 32 && th.dead > len(th.h)/2 {
		live := th.h[:0]
		for _, e := range th.h {
			if e.live() {
				live = append(live, e)
			}
		}
		clear(th.h[len(live):])
		th.h = live
		th.dead = 0
		for i := (len(live) - 2) / timerArity; i >= 0 && len(live) > 1; i-- {
			down(live, i)
		}
	}
}

func up(h []timerEntry, i int) {
	e := h[i]
	for i > 0 {
		p := (i - 1) / timerArity
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

func down(h []timerEntry, i int) {
	n := len(h)
	e := h[i]
	for {
		c := timerArity*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+timerArity && k < n; k++ {
			if h[k].before(&h[m]) {
				m = k
			}
		}
		if !h[m].before(&e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}

// addTimer sets t (again): it fires at t.when unless removed first.
func (s *Sim) addTimer(t *timer) *timer {
	s.nextSeq++
	t.seq = s.nextSeq
	t.fired = false
	t.pending = true
	s.timers.push(t)
	return t
}

func (s *Sim) removeTimer(t *timer) {
	if t.pending {
		s.timers.remove(t)
	}
}

// advanceToNextTimer moves the clock to the earliest timer (rounded up to
// Config.IdleWake) and releases every timer due then. It reports false when
// there is no timer at all.
func (s *Sim) advanceToNextTimer() bool {
	e := s.timers.first()
	if e == nil {
		return false
	}
	next := e.when
	if g := int64(s.cfg.IdleWake); g > 0 && next > s.nowNs {
		next = s.nowNs + (next-s.nowNs+g-1)/g*g
	}
	if next > s.nowNs {
		if !s.clockTo(next) {
			return true
		}
		s.trace.event(s.steps, s.nowNs, evClock, -1, 0, "")
	}
	s.advances++
	s.fireDueTimers()
	return true
}

// clockTo moves the clock forward to next, a timer's instant; past
// MaxVirtual it fails the run instead and reports false.
func (s *Sim) clockTo(next int64) bool {
	if time.Duration(next) > s.cfg.MaxVirtual {
		s.failLimit(fmt.Sprintf("virtual time limit of %v exceeded (next timer at +%v)", s.cfg.MaxVirtual, time.Duration(next)))
		return false
	}
	s.nowNs = next
	return true
}

// jumpClock is a step that runs no task: the clock jumps to the next timer,
// which fires, although tasks could run. Go's runtime may pause a
// processor between two goroutine steps (the collector stops the world, the
// OS takes the thread away) while the clock runs on, so a sleeper can wake
// before a runnable goroutine moves; without such steps the clock moves
// only with steps, and a lone poll loop never meets its own timer early.
// It counts as a preemption: a runnable task did not run.
func (s *Sim) jumpClock() {
	s.steps++
	s.preemptions++
	if s.trace.record {
		s.preemptSteps = append(s.preemptSteps, s.steps)
	}
	if e := s.timers.first(); e != nil && e.when > s.nowNs && !s.clockTo(e.when) {
		return
	}
	s.trace.jump(s.steps, s.nowNs)
	s.fireDueTimers()
}

// fireDueTimers releases every timer whose instant has come, in heap order.
func (s *Sim) fireDueTimers() {
	if time.Duration(s.nowNs) > s.cfg.MaxVirtual && s.failure == nil {
		s.failLimit(fmt.Sprintf("virtual time limit of %v exceeded", s.cfg.MaxVirtual))
		return
	}
	for {
		e := s.timers.first()
		if e == nil || e.when > s.nowNs {
			return
		}
		t := s.timers.pop().t
		t.pending = false
		t.fired = true
		switch t.kind {
		case timerWake:
			s.wake(t.task)
		case timerSpawn:
			if len(s.tasks) >= s.cfg.MaxTasks {
				s.failLimit(fmt.Sprintf("task limit of %d exceeded (AfterFunc %q)", s.cfg.MaxTasks, t.name))
				return
			}
			s.spawn(t.name, t.fn)
		case timerDeadline:
			t.ctx.cancel(context.DeadlineExceeded)
		}
	}
}

// Now returns the virtual time. It is never a scheduling point.
func (s *Sim) Now() time.Time { return Epoch.Add(time.Duration(s.nowNs)) }

// Sleep implements rt.Runtime on the virtual clock.
func (s *Sim) Sleep(ctx context.Context, d time.Duration) error {
	t := s.cur()
	// Background cannot end: the commonest Sleep skips the context's
	// interface calls, one before and one after every wake.
	live := ctx != background
	var c *simCtx
	if live {
		c = s.simContext(ctx, "Sleep")
	}
	if d <= 0 || live && ctx.Err() != nil {
		s.yieldPoint()
		return ctx.Err()
	}
	// The task's own timer, reused: no allocation per Sleep. It can only be
	// pending still if the task was stopped in a Sleep and sleeps again in a
	// deferred call.
	tm := &t.sleep
	s.removeTimer(tm)
	tm.when, tm.kind, tm.task = s.nowNs+int64(d), timerWake, t
	s.addTimer(tm)
	t.obj = objAll // the step that wakes from the sleep follows a clock jump
	c.watch(t)
	for !tm.fired && (!live || ctx.Err() == nil) {
		t.waitDur = d // formatted only for a report (waitString)
		s.block("Sleep", "")
	}
	c.unwatch(t)
	if tm.fired {
		return nil
	}
	s.removeTimer(tm)
	return ctx.Err()
}

// AfterFunc implements rt.Runtime: f runs on a new task named "afterfunc"
// once d has elapsed on the virtual clock.
func (s *Sim) AfterFunc(d time.Duration, f func()) rt.Timer {
	s.cur()
	if d < 0 {
		d = 0
	}
	// One allocation: the handle is the timer.
	st := &simTimer{s: s, t: timer{when: s.nowNs + int64(d), kind: timerSpawn, fn: f, name: "afterfunc"}}
	s.addTimer(&st.t)
	// Timers due together spawn in the order they were set, and task ids
	// follow spawn order: setting one is a spawn for the explorer.
	s.touch(objSpawn)
	s.yieldPoint()
	return st
}

type simTimer struct {
	s *Sim
	t timer
}

func (st *simTimer) Stop() bool {
	st.s.touch(objSpawn) // decides whether a spawn happens, like AfterFunc
	if !st.t.pending {
		return false
	}
	st.s.removeTimer(&st.t)
	return true
}
