package sim

import (
	"math"
	"slices"
)

// Race detection without a preemption bound: source-DPOR (Abdulla, Aronis,
// Jonsson and Sagonas, POPL 2014 and JACM 2017), which is sound together
// with sleep sets.
//
// When a step e' runs, every step e of another task in an immediate race
// with it (dependent, not ordered before e' by anything else) is reversed:
// let v be the steps after e that do not depend on e, followed by e'. Some
// schedule starting, at the node before e, with one of v's initials (the
// tasks whose first step in v depends on nothing earlier in v) reverses the
// race; if no initial is an alternative there yet, one is added. Flanagan
// and Godefroid's rule (add e''s task, or everything enabled) loses states
// when the task it adds is asleep at that node; the initials do not.
//
// The simulator ends a run when main returns, stopping tasks that could
// still run. Their next steps race with what came before as if they ran at
// the end (sourceEnd): reversing such a race runs them before the end.

// sourceRace reverses the race between step j and a step e' by task q with
// clock eClock (after it ran), e' coming after the steps before index end.
func (x *explorer) sourceRace(j, q int32, eClock vclock, end int32) {
	d := &x.d
	ej := d.steps[j]
	// first[r]: the number of task r's first step in v so far; a step with a
	// predecessor in v is ordered after one of those.
	d.first = d.first[:0]
	for range d.tasks {
		d.first = append(d.first, math.MaxInt32)
	}
	d.initials = d.initials[:0]
	for k := j + 1; k < end; k++ {
		sk := &d.steps[k]
		if sk.clock.at(ej.task) >= ej.seq {
			continue // depends on e: not in v
		}
		if d.noPredecessor(sk.clock) {
			d.initials = append(d.initials, sk.task)
		}
		d.first[sk.task] = min(d.first[sk.task], sk.seq)
	}
	if d.noPredecessor(eClock) {
		d.initials = append(d.initials, q)
	}
	n := &x.stack[j]
	if slices.ContainsFunc(d.initials, func(t int32) bool { return slices.Contains(n.backtrack, t) }) {
		return
	}
	// Prefer e''s own task, as Flanagan and Godefroid would; else the lowest
	// id, for determinism.
	best := int32(-1)
	for _, t := range d.initials {
		if !slices.Contains(n.enabled, t) {
			continue
		}
		if t == q {
			best = q
			break
		}
		if best < 0 || t < best {
			best = t
		}
	}
	if best >= 0 {
		n.addBacktrack(best)
		return
	}
	// Cannot happen while the clocks are right (an initial of v is enabled
	// before e); stay sound if it does.
	for _, t := range n.enabled {
		n.addBacktrack(t)
	}
}

// noPredecessor reports whether a step with clock c is ordered after none
// of the steps of v counted in d.first.
func (d *dporRun) noPredecessor(c vclock) bool {
	for r, v := range c {
		if v >= d.first[r] {
			return false
		}
	}
	return true
}

// sourceEnd treats the next step of every task still runnable when the run
// ended as if it ran now, and reverses its races.
func (x *explorer) sourceEnd(s *Sim) {
	d := &x.d
	d.grow(len(s.tasks))
	end := int32(len(d.steps))
	for _, rt := range s.runnable {
		p, obj := rt.id, rt.obj
		before := d.tasks[p].clock
		d.collectRaces(p, obj, before)
		if len(d.cands) == 0 {
			continue
		}
		c := d.stepClock(slices.Clone(before), obj)
		c = c.set(p, d.tasks[p].seq+1)
		for _, j := range d.cands {
			x.sourceRace(j, p, c, end)
		}
	}
}
