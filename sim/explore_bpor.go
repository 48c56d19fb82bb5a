package sim

import "slices"

// Race detection under a preemption bound: DPOR as Flanagan and Godefroid
// (POPL 2005) state it, with the extra backtracking points of BPOR (Coons,
// Musuvathi and McKinley, OOPSLA 2013), and without sleep sets.
//
// At every state, for every runnable task, the operation it waits to perform
// next is checked against the earlier steps. For each other task, its last
// step dependent with that operation and not ordered before the waiting
// task is a race. The search must then also try the waiting task at the
// node before that step (every task enabled there, if it was not). This is
// done incrementally. When a task's next operation is new, it is checked
// against every earlier step (bporNewOp). After each step, the tasks still
// waiting are checked (bporWaiting). When a step turns out wider than the
// operation it waited at, the whole step is checked again (bporWider).
// Under a bound the
// alternative may cost a preemption the schedule no longer has, so BPOR also
// adds it at the last context switch before the racing step, where the
// switch is paid for already.

// bporNewOp checks task p, whose next operation on obj is new.
func (x *explorer) bporNewOp(p, obj int32) {
	d := &x.d
	tp := &d.tasks[p]
	for r := range d.tasks {
		if j := d.lastDep(int32(r), obj); int32(r) != p && j >= 0 && d.steps[j].seq > tp.clock.at(int32(r)) {
			x.bporRace(j, p)
		}
	}
}

// bporWaiting checks step idx (by q, on obj) against the tasks that waited
// before it and still wait: it is the newest step before their operation.
func (x *explorer) bporWaiting(s *Sim, idx, q, obj int32) {
	d := &x.d
	for _, rt := range s.runnable {
		if rt.id != q && d.tasks[rt.id].pending && !independent(obj, rt.obj) {
			x.bporRace(idx, rt.id)
		}
	}
}

// bporWider checks a step by q that touched obj beyond the operation it
// waited at (it spawned, read shared state, or ended the run) as a whole.
func (x *explorer) bporWider(q, obj int32) {
	d := &x.d
	tq := &d.tasks[q]
	for r := range d.tasks {
		if j := d.lastDep(int32(r), obj); int32(r) != q && j >= 0 && d.steps[j].seq > tq.clock.at(int32(r)) {
			x.bporRace(j, q)
		}
	}
}

// bporRace adds p as an alternative at the node before step j and at the
// last context switch before step j.
func (x *explorer) bporRace(j, p int32) {
	x.addAlternative(j, p)
	c := x.stack[j].blockStart
	if c == j {
		c = -1
		if j > 0 {
			c = x.stack[j-1].blockStart
		}
	}
	if c >= 0 {
		x.addAlternative(c, p)
	}
}

// addAlternative adds p at node i, or every task enabled there if p was not.
func (x *explorer) addAlternative(i, p int32) {
	n := &x.stack[i]
	if slices.Contains(n.enabled, p) {
		n.addBacktrack(p)
		return
	}
	for _, t := range n.enabled {
		n.addBacktrack(t)
	}
}
