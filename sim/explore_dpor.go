package sim

import "slices"

// The happens-before bookkeeping that both forms of dynamic partial-order
// reduction share (explore_source.go without a preemption bound,
// explore_bpor.go with one).
//
// Every run tracks the happens-before order of its steps with vector clocks.
// A step follows the earlier steps of its own task, every earlier step it is
// dependent with, and the step that woke or started its task. A step of a
// task the clock woke also follows every step before the clock jump: the
// clock only jumps when no task can run, so nothing before the jump can move
// after it. A race is a pair of dependent steps of different tasks, the
// earlier not ordered before the later one by anything else. Reversing it
// may reach a new state, so the search adds an alternative at the node
// before the earlier step.

// vclock maps a task id to the number of that task's steps ordered before.
type vclock []int32

func (c vclock) at(t int32) int32 {
	if int(t) < len(c) {
		return c[t]
	}
	return 0
}

// join raises c to at least o, growing it if needed; c must not share its
// array with another clock.
func (c vclock) join(o vclock) vclock {
	if len(o) > len(c) {
		c = append(c, make(vclock, len(o)-len(c))...)
	}
	for i, v := range o {
		if v > c[i] {
			c[i] = v
		}
	}
	return c
}

func (c vclock) set(t, v int32) vclock {
	if int(t) >= len(c) {
		c = append(c, make(vclock, int(t)+1-len(c))...)
	}
	c[t] = v
	return c
}

type stepRec struct {
	task  int32
	seq   int32 // the step's number among its task's steps, from 1
	obj   int32 // footprint
	clock vclock
}

type taskClock struct {
	clock      vclock
	seq        int32 // steps run
	pending    bool  // runnable, and its next operation has been checked
	lastAll    int32 // index of its last step, -1
	lastGlobal int32 // index of its last step on objAll, -1
}

// dporRun is the happens-before bookkeeping of one run.
type dporRun struct {
	tasks       []taskClock
	steps       []stepRec
	objClock    map[int32]vclock // join of the steps on each object
	globalClock vclock           // join of the steps on objAll
	allClock    vclock           // join of every step
	lastOn      map[int64]int32  // task<<32|object: index of its last step there
	cands       []int32          // scratch: racing steps
	first       []int32          // scratch: see sourceRace
	initials    []int32          // scratch: see sourceRace
}

func (d *dporRun) reset() {
	d.tasks = d.tasks[:0]
	d.steps = d.steps[:0]
	if d.objClock == nil {
		d.objClock = map[int32]vclock{}
		d.lastOn = map[int64]int32{}
	}
	clear(d.objClock)
	clear(d.lastOn)
	d.globalClock, d.allClock = nil, nil
}

func (d *dporRun) grow(n int) {
	for len(d.tasks) < n {
		d.tasks = append(d.tasks, taskClock{lastAll: -1, lastGlobal: -1})
	}
}

// lastOnKey keys dporRun.lastOn; obj may be negative (a task's own object).
func lastOnKey(task, obj int32) int64 {
	return int64(task)<<32 | int64(uint32(obj))
}

// lastDep is the index of task r's last step dependent with an operation on
// obj, or -1.
func (d *dporRun) lastDep(r, obj int32) int32 {
	tr := &d.tasks[r]
	if obj == objAll {
		return tr.lastAll
	}
	j := tr.lastGlobal
	if k, ok := d.lastOn[lastOnKey(r, obj)]; ok && k > j {
		j = k
	}
	return j
}

// afterStep accounts for step k of the run once it has run: its footprint,
// whether its task yielded (for the preemption count) and, under DPOR, the
// races it takes part in. When final is set the step ended the run, which
// stops every other task, so it is dependent with everything.
func (x *explorer) afterStep(s *Sim, final bool) {
	x.stepPending = false
	i := x.k - 1
	n := &x.stack[i]
	q := n.chosen
	t := s.tasks[q]
	obj := footprint(x.stepObj, s.touched, s.touchedObj)
	if final {
		obj = objAll
	}
	n.obj = obj
	x.lastYielded = t.state == taskRunnable && t.blocks == x.stepBlocks
	if x.dpor {
		x.dporStep(s, int32(i), q, obj)
	}
}

// end accounts for the last step of the run. A run that main's return or a
// failure ended stops the tasks still runnable: without a bound, their next
// steps race with what came before as if they ran now (see sourceEnd).
func (x *explorer) end(s *Sim) {
	final := s.failure != nil || s.root.state == taskDone
	if x.stepPending {
		x.afterStep(s, final)
	}
	if x.dpor && x.bound < 0 && final && !x.cut && x.err == nil {
		x.sourceEnd(s)
	}
}

// dporStep accounts for step idx, by task q with footprint obj: races, then
// the vector clocks.
func (x *explorer) dporStep(s *Sim, idx, q, obj int32) {
	d := &x.d
	d.grow(len(s.tasks))
	tq := &d.tasks[q]
	if x.bound < 0 {
		d.collectRaces(q, obj, tq.clock)
	} else if obj != x.stepObj {
		x.bporWider(q, obj)
	}
	tq.clock = d.stepClock(tq.clock, obj)
	tq.seq++
	tq.clock = tq.clock.set(q, tq.seq)
	if obj == objAll {
		d.globalClock = d.globalClock.join(tq.clock)
		tq.lastGlobal = idx
	} else {
		d.objClock[obj] = d.objClock[obj].join(tq.clock)
		d.lastOn[lastOnKey(q, obj)] = idx
	}
	d.allClock = d.allClock.join(tq.clock)
	tq.lastAll = idx
	d.steps = append(d.steps, stepRec{task: q, seq: tq.seq, obj: obj, clock: slices.Clone(tq.clock)})
	if x.bound < 0 {
		for _, j := range d.cands {
			x.sourceRace(j, q, tq.clock, idx)
		}
	} else {
		x.bporWaiting(s, idx, q, obj)
	}
	x.newlyWaiting(s, q)
}

// stepClock is the clock of a step with footprint obj by a task whose clock
// is c: c joined with every earlier step it is dependent with.
func (d *dporRun) stepClock(c vclock, obj int32) vclock {
	if obj == objAll {
		return c.join(d.allClock)
	}
	return c.join(d.objClock[obj]).join(d.globalClock)
}

// collectRaces finds the steps in an immediate race with a step by task q
// with footprint obj, q's clock before it being before. For each other
// task that is its last step dependent with it and not ordered before,
// unless ordered before another such step.
func (d *dporRun) collectRaces(q, obj int32, before vclock) {
	d.cands = d.cands[:0]
	for r := range d.tasks {
		if j := d.lastDep(int32(r), obj); int32(r) != q && j >= 0 && d.steps[j].seq > before.at(int32(r)) {
			d.cands = append(d.cands, j)
		}
	}
	d.cands = slices.DeleteFunc(d.cands, func(j int32) bool {
		sj := &d.steps[j]
		return slices.ContainsFunc(d.cands, func(k int32) bool { return k != j && d.steps[k].clock.at(sj.task) >= sj.seq })
	})
}

// newlyWaiting gives the tasks whose next step is new their incoming
// happens-before edges: q itself after its step, the tasks the step woke or
// started (ordered after it), the tasks the clock woke (ordered after
// everything so far). Under a bound, BPOR checks them for races.
func (x *explorer) newlyWaiting(s *Sim, q int32) {
	d := &x.d
	advanced := s.advances != x.stepAdvances
	d.tasks[q].pending = false
	for _, rt := range s.runnable {
		p := rt.id
		tp := &d.tasks[p]
		if tp.pending {
			continue
		}
		if advanced {
			tp.clock = tp.clock.join(d.allClock)
		} else if p != q {
			tp.clock = tp.clock.join(d.tasks[q].clock)
		}
		tp.pending = true
		if x.bound >= 0 {
			x.bporNewOp(p, rt.obj)
		}
	}
}
