package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The scheduler's queues against the plain scans they replace, under long
// random sequences of operations.

// The timer queue releases timers in (when, seq) order whatever the mix of
// sets, re-sets of the same timer (a task's Sleep timer), removals (a
// cancelled sleep, a stopped AfterFunc, a cancelled context) and pops,
// including compactions and the front slot.
func TestTimerQueueReleasesInOrder(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		s := &Sim{}
		var pool []*timer    // timers that may be set again
		var pending []*timer // set and neither released nor removed
		unset := func(tm *timer) {
			s.removeTimer(tm)
			pending = slices.DeleteFunc(pending, func(x *timer) bool { return x == tm })
		}
		now := int64(0)
		for i := range 3000 {
			// Phases: the queue grows, then mostly loses timers to removal
			// (compactions), then churns.
			sets, removals := 4, 6
			switch {
			case i < 800:
				sets, removals = 8, 9
			case i < 1600:
				sets, removals = 2, 8
			}
			switch op := rng.IntN(10); {
			case op < sets: // set a timer, new or reused
				var tm *timer
				if len(pool) > 0 && rng.IntN(3) == 0 {
					tm = pool[rng.IntN(len(pool))]
					if tm.pending {
						unset(tm)
					}
				} else {
					tm = &timer{}
					pool = append(pool, tm)
				}
				// Near and far timers, and many due at the same instant.
				tm.when = now + []int64{0, 1, 5, 1000, 1 << 30}[rng.IntN(5)]
				s.addTimer(tm)
				pending = append(pending, tm)
			case op < removals: // remove a pending timer
				if len(pending) > 0 {
					unset(pending[rng.IntN(len(pending))])
				}
			default: // release the earliest
				e := s.timers.first()
				if len(pending) == 0 {
					if e != nil {
						t.Fatalf("seed %d: no timer pending, the queue offers one", seed)
					}
					continue
				}
				var want *timer
				for _, tm := range pending {
					if want == nil || tm.when < want.when || tm.when == want.when && tm.seq < want.seq {
						want = tm
					}
				}
				if e == nil || e.t != want {
					t.Fatalf("seed %d: the queue offers %v, the earliest pending timer is %v", seed, e, want)
				}
				got := s.timers.pop().t
				got.pending = false
				pending = slices.DeleteFunc(pending, func(x *timer) bool { return x == got })
				now = got.when
			}
			if live := len(s.timers.h) - s.timers.dead; live < 0 || live+b2i(s.timers.hasFront) != len(pending) {
				t.Fatalf("seed %d: %d slots (%d dead, front %v) for %d pending timers", seed, len(s.timers.h), s.timers.dead, s.timers.hasFront, len(pending))
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PCT's heap always offers the task a scan of the runnable set would pick:
// the highest priority, ties to the lowest id.
func TestPCTHeapMatchesTheScan(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		s := &Sim{prioOn: true}
		var all []*task
		for range 2000 {
			switch op := rng.IntN(10); {
			case op < 3 || len(s.runnable) == 0: // a task joins (spawned or woken)
				var tk *task
				if len(all) > 0 && rng.IntN(2) == 0 {
					tk = all[rng.IntN(len(all))]
				}
				if tk == nil || tk.state == taskRunnable {
					tk = &task{id: int32(len(all)), runIdx: -1, prioIdx: -1, state: taskBlocked}
					all = append(all, tk)
				}
				s.addRunnable(tk)
				tk.prio = rng.Int64N(8) // small range: many ties
				s.prio.fix(tk)
			case op < 6: // a task blocks or ends
				tk := s.runnable[rng.IntN(len(s.runnable))]
				s.removeRunnable(tk)
				tk.state = taskBlocked
			default: // a change point demotes the top
				top := s.prio[0]
				top.prio = rng.Int64N(8)
				s.prio.fix(top)
			}
			if len(s.runnable) == 0 {
				continue
			}
			best := s.runnable[0]
			for _, tk := range s.runnable[1:] {
				if tk.prio > best.prio || tk.prio == best.prio && tk.id < best.id {
					best = tk
				}
			}
			if s.prio[0] != best || len(s.prio) != len(s.runnable) {
				t.Fatalf("seed %d: heap top %d (of %d), scan picks %d (of %d)", seed, s.prio[0].id, len(s.prio), best.id, len(s.runnable))
			}
		}
	}
}

// A mutex's wait queue is FIFO, lets a task leave from anywhere and put
// itself back at the front, as the slice it replaces did.
func TestWaitQueueMatchesASlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var q waitQueue
	var ref []*task
	tasks := make([]*task, 20)
	for i := range tasks {
		tasks[i] = &task{id: int32(i)}
	}
	for range 20000 {
		tk := tasks[rng.IntN(len(tasks))]
		switch rng.IntN(4) {
		case 0:
			if !q.has(tk) {
				q.pushBack(tk)
				ref = append(ref, tk)
			}
		case 1:
			if !q.has(tk) {
				q.pushFront(tk)
				ref = slices.Insert(ref, 0, tk)
			}
		case 2:
			if q.has(tk) {
				q.remove(tk)
				ref = slices.DeleteFunc(ref, func(x *task) bool { return x == tk })
			}
		case 3:
			got := q.popFront()
			var want *task
			if len(ref) > 0 {
				want, ref = ref[0], ref[1:]
			}
			if got != want {
				t.Fatalf("popFront gave %v, want %v", got, want)
			}
		}
		var walk []*task
		for x := q.head; x != nil; x = x.wnext {
			walk = append(walk, x)
		}
		if !slices.Equal(walk, ref) {
			t.Fatalf("queue %v, want %v", ids(walk), ids(ref))
		}
	}
}

func ids(ts []*task) []int32 {
	out := make([]int32, len(ts))
	for i, t := range ts {
		out[i] = t.id
	}
	return out
}
