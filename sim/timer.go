package sim

import (
	"container/heap"
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

// timer is an entry of the virtual clock's heap. Timers due at the same
// instant are released together; which of the tasks they make runnable goes
// first is then the strategy's (seeded) choice.
type timer struct {
	when  int64  // virtual ns since Epoch
	seq   uint64 // insertion order, for a total order in the heap
	kind  timerKind
	task  *task
	fn    func()
	name  string
	ctx   *simCtx
	index int // position in the heap, -1 once popped or removed
	fired bool
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}

func (s *Sim) addTimer(t *timer) *timer {
	s.nextSeq++
	t.seq = s.nextSeq
	heap.Push(&s.timers, t)
	return t
}

func (s *Sim) removeTimer(t *timer) {
	if t.index >= 0 {
		heap.Remove(&s.timers, t.index)
	}
}

// advanceToNextTimer moves the clock to the earliest timer and releases every
// timer due then. It reports false when there is no timer at all.
func (s *Sim) advanceToNextTimer() bool {
	if len(s.timers) == 0 {
		return false
	}
	next := s.timers[0].when
	if next > s.nowNs {
		if time.Duration(next) > s.cfg.MaxVirtual {
			s.failLimit(fmt.Sprintf("virtual time limit of %v exceeded (next timer at +%v)", s.cfg.MaxVirtual, time.Duration(next)))
			return true
		}
		s.nowNs = next
		s.trace.event(s.steps, s.nowNs, evClock, -1, 0, "")
	}
	s.advances++
	s.fireDueTimers()
	return true
}

// fireDueTimers releases every timer whose instant has come, in heap order.
func (s *Sim) fireDueTimers() {
	if time.Duration(s.nowNs) > s.cfg.MaxVirtual && s.failure == nil {
		s.failLimit(fmt.Sprintf("virtual time limit of %v exceeded", s.cfg.MaxVirtual))
		return
	}
	for len(s.timers) > 0 && s.timers[0].when <= s.nowNs {
		t := heap.Pop(&s.timers).(*timer)
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
	c := s.simContext(ctx, "Sleep")
	if err := ctx.Err(); err != nil || d <= 0 {
		s.yieldPoint()
		return ctx.Err()
	}
	tm := s.addTimer(&timer{when: s.nowNs + int64(d), kind: timerWake, task: t})
	t.obj = objAll // the step that wakes from the sleep follows a clock jump
	c.watch(t)
	for !tm.fired && ctx.Err() == nil {
		s.block("Sleep", d.String())
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
	tm := s.addTimer(&timer{when: s.nowNs + int64(d), kind: timerSpawn, fn: f, name: "afterfunc"})
	// Timers due together spawn in the order they were set, and task ids
	// follow spawn order: setting one is a spawn for the explorer.
	s.touch(objSpawn)
	s.yieldPoint()
	return &simTimer{s: s, t: tm}
}

type simTimer struct {
	s *Sim
	t *timer
}

func (st *simTimer) Stop() bool {
	st.s.touch(objSpawn) // decides whether a spawn happens, like AfterFunc
	if st.t.fired || st.t.index < 0 {
		return false
	}
	st.s.removeTimer(st.t)
	return true
}
