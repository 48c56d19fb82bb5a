package sim

import (
	"fmt"
	"slices"
)

// The decision tree of an exploration: one node per step of the current
// schedule, kept across runs so that the search can backtrack. Node i is the
// state before step i+1 (0-based: node 0 is the state before the first step).

// slept is a task in a sleep set, with the footprint (object) of the step it
// takes from the node where it was explored. It stays asleep along a branch
// while every step of the branch commutes with that step.
type slept struct {
	task int32
	obj  int32
}

type exNode struct {
	enabled     []int32 // runnable task ids, sorted
	chosen      int32   // the task this schedule runs here
	obj         int32   // footprint of the chosen step in this run
	prev        int32   // task of the previous step, -1 at the root
	prevYielded bool    // prev's step ended at a scheduling point, still runnable
	preempt     int32   // preemptions before this node
	blockStart  int32   // first node of the run of steps of chosen's task ending here
	done        []slept // alternatives already explored here, with footprints
	sleep       []slept // inherited sleep set
	backtrack   []int32 // DPOR: alternatives to explore here
}

// cost is the number of preemptions that running task t at n takes.
func (n *exNode) cost(t int32) int32 {
	if n.prevYielded && t != n.prev {
		return 1
	}
	return 0
}

func (n *exNode) asleep(t int32) bool {
	return slices.ContainsFunc(n.sleep, func(e slept) bool { return e.task == t })
}

func (n *exNode) isDone(t int32) bool {
	return slices.ContainsFunc(n.done, func(e slept) bool { return e.task == t })
}

func (n *exNode) addBacktrack(t int32) {
	if !slices.Contains(n.backtrack, t) {
		n.backtrack = append(n.backtrack, t)
	}
}

// explorer is the persistent state of one Explore call, and the Strategy of
// each of its runs.
type explorer struct {
	opts      ExploreOptions
	bound     int32 // preemption bound, -1: none
	sleepSets bool
	dpor      bool
	stack     []exNode
	pruned    int64
	err       error // the program diverged from a recorded prefix

	// Per run.
	k            int   // steps chosen so far in this run
	cut          bool  // the run was cut short (every runnable task asleep)
	stepPending  bool  // step k has run but has not been accounted for
	stepObj      int32 // the label of step k: the object its task was at
	stepBlocks   uint32
	stepAdvances int64
	lastYielded  bool // the task of step k is still runnable and did not block
	enabledBuf   []int32
	d            dporRun
}

func newExplorer(opts ExploreOptions) *explorer {
	return &explorer{
		opts:      opts,
		bound:     int32(opts.MaxPreemptions),
		sleepSets: opts.Reduction == ReductionSleepSets || (opts.Reduction == ReductionDPOR && opts.MaxPreemptions == unboundedPreemptions),
		dpor:      opts.Reduction == ReductionDPOR,
	}
}

func (x *explorer) String() string {
	if x.bound < 0 {
		return fmt.Sprintf("explore(preemptions=unbounded,reduction=%s)", x.opts.Reduction)
	}
	return fmt.Sprintf("explore(preemptions=%d,reduction=%s)", x.bound, x.opts.Reduction)
}

func (x *explorer) start(s *Sim) error {
	x.k = 0
	x.cut = false
	x.stepPending = false
	if x.dpor {
		x.d.reset()
	}
	return nil
}

func (x *explorer) spawned(*Sim, *task) {}

// allowed reports whether running t at n stays within the preemption bound.
func (x *explorer) allowed(n *exNode, t int32) bool {
	return x.bound < 0 || n.preempt+n.cost(t) <= x.bound
}

// pick accounts for the step that just ran, then follows the recorded prefix
// or, past it, opens a new node and takes the default choice.
func (x *explorer) pick(s *Sim) int {
	if x.stepPending {
		x.afterStep(s, false)
	}
	en := x.enabledBuf[:0]
	for _, t := range s.runnable {
		en = append(en, t.id)
	}
	slices.Sort(en)
	x.enabledBuf = en
	i := x.k
	var chosen int32
	if i < len(x.stack) {
		n := &x.stack[i]
		if !slices.Equal(n.enabled, en) {
			x.err = fmt.Errorf("sim: the program is not deterministic under a fixed schedule: at step %d the runnable tasks are %v, but an earlier run had %v with the same decisions before (does it keep state between runs, or use the wall clock or a real goroutine?)", i+1, en, n.enabled)
			return -1
		}
		chosen = n.chosen
	} else {
		n := x.newNode(en)
		chosen = x.defaultChoice(&n)
		if chosen < 0 {
			// Every runnable task is asleep: each continuation is equivalent
			// to one explored already.
			x.cut = true
			x.pruned += x.countUnexplored(&n)
			return -1
		}
		n.chosen = chosen
		x.stack = append(x.stack, n)
		x.setBlockStart(i)
	}
	t := s.tasks[chosen]
	x.stepObj = t.obj
	x.stepBlocks = t.blocks
	x.stepAdvances = s.advances
	s.touched = false
	x.stepPending = true
	x.k++
	return t.runIdx
}

// newNode opens node len(stack) of this run, after the step of node
// len(stack)-1 has been accounted for.
func (x *explorer) newNode(en []int32) exNode {
	n := exNode{enabled: slices.Clone(en), prev: -1}
	i := len(x.stack)
	if i == 0 {
		return n
	}
	p := &x.stack[i-1]
	n.prev = p.chosen
	n.prevYielded = x.lastYielded
	n.preempt = p.preempt + p.cost(p.chosen)
	if x.sleepSets {
		// Sleep(child) = the parent's sleeping and explored alternatives
		// whose steps commute with the step taken (Godefroid 1996).
		for _, list := range [][]slept{p.sleep, p.done} {
			for _, e := range list {
				if e.task != p.chosen && independent(e.obj, p.obj) && !n.asleep(e.task) {
					n.sleep = append(n.sleep, e)
				}
			}
		}
	}
	return n
}

// defaultChoice never preempts: the previous task while it is runnable,
// else the lowest runnable id; never a sleeping task. -1: all asleep.
func (x *explorer) defaultChoice(n *exNode) int32 {
	if n.prev >= 0 && slices.Contains(n.enabled, n.prev) && !n.asleep(n.prev) {
		n.addBacktrack(n.prev)
		return n.prev
	}
	for _, t := range n.enabled {
		if !n.asleep(t) && x.allowed(n, t) {
			n.addBacktrack(t)
			return t
		}
	}
	return -1
}

// backtrack moves to the next schedule: the deepest node with an
// alternative left takes it, and the nodes below are dropped. It reports
// false when the tree is exhausted.
func (x *explorer) backtrack() bool {
	for len(x.stack) > 0 {
		n := &x.stack[len(x.stack)-1]
		n.done = append(n.done, slept{task: n.chosen, obj: n.obj})
		if next := x.nextChoice(n); next >= 0 {
			n.chosen = next
			x.setBlockStart(len(x.stack) - 1)
			return true
		}
		x.pruned += x.countUnexplored(n)
		x.stack = x.stack[:len(x.stack)-1]
	}
	return false
}

// setBlockStart records where the block of consecutive steps of node i's
// task that ends at node i begins.
func (x *explorer) setBlockStart(i int) {
	n := &x.stack[i]
	if i > 0 && x.stack[i-1].chosen == n.chosen {
		n.blockStart = x.stack[i-1].blockStart
	} else {
		n.blockStart = int32(i)
	}
}

// nextChoice is the lowest-id alternative at n still to explore, or -1.
func (x *explorer) nextChoice(n *exNode) int32 {
	candidates := n.enabled
	if x.dpor {
		candidates = n.backtrack
	}
	best := int32(-1)
	for _, t := range candidates {
		if n.isDone(t) || (x.sleepSets && n.asleep(t)) || !x.allowed(n, t) {
			continue
		}
		if best < 0 || t < best {
			best = t
		}
	}
	return best
}

// countUnexplored counts the alternatives at n within the bound that the
// unreduced search would have explored and this one did not.
func (x *explorer) countUnexplored(n *exNode) int64 {
	if x.opts.Reduction == ReductionNone {
		return 0
	}
	var c int64
	for _, t := range n.enabled {
		if x.allowed(n, t) && !n.isDone(t) {
			c++
		}
	}
	return c
}

// decisions is the current schedule's decision list.
func (x *explorer) decisions() []int32 {
	out := make([]int32, x.k)
	for i := range out {
		out[i] = x.stack[i].chosen
	}
	return out
}

// preemptionsUsed counts the preemptions of the current schedule.
func (x *explorer) preemptionsUsed() int {
	if x.k == 0 {
		return 0
	}
	n := &x.stack[x.k-1]
	return int(n.preempt + n.cost(n.chosen))
}

// footprint is the object of a step that resumed in an operation on label
// and touched touchedObj on the way (if touched).
func footprint(label int32, touched bool, touchedObj int32) int32 {
	switch {
	case !touched || label == touchedObj:
		return label
	case label < 0: // the task's own object conflicts with nothing
		return touchedObj
	}
	return objAll
}

// independent reports whether steps on objects a and b commute: different
// objects, neither of them "anything".
func independent(a, b int32) bool {
	return a != objAll && b != objAll && a != b
}
