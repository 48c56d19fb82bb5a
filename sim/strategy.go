package sim

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Strategy chooses which runnable task runs at each scheduling point. Every
// strategy is deterministic given the run's seed. Construct one with
// RandomWalk, PCT, POS, SURW, GoOrder or Replay; a Strategy value holds
// per-run state, so use a fresh one for every run.
type Strategy interface {
	// String names the strategy and its parameters, as the harness's flags
	// spell them (for the reproduce command).
	String() string
	start(s *Sim) error
	spawned(s *Sim, t *task)
	// pick returns an index into s.runnable, or -1 to end the run: after
	// recording a failure, or when the explorer cuts a redundant run short.
	pick(s *Sim) int
	// end runs once after the last step, before the remaining tasks are
	// stopped.
	end(s *Sim)
}

// RandomWalk picks uniformly among the runnable tasks at every step.
func RandomWalk() Strategy { return &randomWalk{} }

type randomWalk struct{}

func (*randomWalk) String() string      { return "random" }
func (*randomWalk) start(*Sim) error    { return nil }
func (*randomWalk) spawned(*Sim, *task) {}
func (*randomWalk) end(*Sim)            {}

// pick maps a 64-bit draw onto [0, n) by multiply-shift (Lemire). The bias
// is at most n/2^64, far below anything a schedule could show, and it avoids
// a division on the scheduler's hot path. The scheduler makes the same draw
// itself (Sim.decide, Sim.continueSelf), to save the interface call.
func (*randomWalk) pick(s *Sim) int {
	hi, _ := bits.Mul64(s.schedSrc.Uint64(), uint64(len(s.runnable)))
	return int(hi)
}

// PCT is probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi and
// Nagarakatte, ASPLOS 2010). Each task gets a random priority when it starts,
// above depth; the highest-priority runnable task always runs; at depth−1
// change points drawn uniformly from [1, steps] the running task's priority
// drops to i (the i-th change point), below every initial priority. For a
// program with n tasks and k steps it finds any bug of depth d with
// probability at least 1/(n·k^(d−1)) per run.
//
// steps is the expected number of scheduling steps of a run (the harness
// measures it with one calibration run). Change points past the end of a run
// simply never happen, so overestimating only costs sensitivity.
func PCT(depth int, steps int64) Strategy { return &pct{depth: depth, steps: steps} }

type pct struct {
	depth   int
	steps   int64
	changes []int64 // sorted step numbers of the change points
	nextCh  int
}

func (p *pct) String() string { return fmt.Sprintf("pct(depth=%d,steps=%d)", p.depth, p.steps) }

func (p *pct) start(s *Sim) error {
	if p.depth < 1 {
		return fmt.Errorf("sim: PCT depth must be at least 1, got %d", p.depth)
	}
	if p.steps < 1 {
		return fmt.Errorf("sim: PCT expected steps must be at least 1, got %d", p.steps)
	}
	p.changes = make([]int64, p.depth-1)
	for i := range p.changes {
		p.changes[i] = 1 + s.sched.Int64N(p.steps)
	}
	slices.Sort(p.changes)
	p.nextCh = 0
	s.prioOn = true
	return nil
}

func (*pct) end(*Sim) {}

func (p *pct) spawned(s *Sim, t *task) {
	// Initial priorities are above every change-point priority (1..depth-1);
	// drawing them from a wide range makes ties (broken by id) negligible.
	t.prio = int64(p.depth) + 1 + s.sched.Int64N(1<<40)
	s.prio.fix(t) // it joined the heap, runnable, before it had a priority
}

// pick runs the highest-priority runnable task, ties to the lowest id: the
// top of the heap, which orders the runnable tasks exactly so.
func (p *pct) pick(s *Sim) int {
	best := s.prio[0]
	step := s.steps + 1
	for p.nextCh < len(p.changes) && p.changes[p.nextCh] <= step {
		if p.changes[p.nextCh] == step {
			// The task that runs this step is demoted after it; later change
			// points demote to higher values, as in the paper (d−i ordering
			// is equivalent up to relabelling).
			best.prio = int64(p.nextCh + 1)
			s.prio.fix(best)
		}
		p.nextCh++
	}
	return best.runIdx
}

// prioHeap is a binary max-heap of tasks by (prio descending, id
// ascending). Ids are unique, so that is a total order and its top is the
// very task a scan of the runnable set would choose.
type prioHeap []*task

func (a *task) outranks(b *task) bool {
	return a.prio > b.prio || (a.prio == b.prio && a.id < b.id)
}

func (h *prioHeap) push(t *task) {
	t.prioIdx = len(*h)
	*h = append(*h, t)
	h.up(t.prioIdx)
}

func (h *prioHeap) remove(t *task) {
	old := *h
	i, last := t.prioIdx, len(old)-1
	if i != last {
		old[i] = old[last]
		old[i].prioIdx = i
	}
	old[last] = nil
	*h = old[:last]
	t.prioIdx = -1
	if i != last {
		h.fix(old[i])
	}
}

// fix restores the heap after t's priority changed.
func (h prioHeap) fix(t *task) {
	if i := t.prioIdx; i > 0 && t.outranks(h[(i-1)/2]) {
		h.up(i)
	} else {
		h.down(i)
	}
}

func (h prioHeap) up(i int) {
	t := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !t.outranks(h[p]) {
			break
		}
		h[i] = h[p]
		h[i].prioIdx = i
		i = p
	}
	h[i] = t
	t.prioIdx = i
}

func (h prioHeap) down(i int) {
	n := len(h)
	t := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].outranks(h[c]) {
			c++
		}
		if !h[c].outranks(t) {
			break
		}
		h[i] = h[c]
		h[i].prioIdx = i
		i = c
	}
	h[i] = t
	t.prioIdx = i
}

// Replay follows a recorded list of scheduling decisions (task ids, one per
// step). The run fails with a clear message if the program diverges from the
// recording: a recorded task is not runnable, or the recording runs out.
func Replay(decisions []int32) Strategy { return &replay{decisions: decisions} }

type replay struct {
	decisions []int32
}

func (r *replay) String() string      { return fmt.Sprintf("replay(%d decisions)", len(r.decisions)) }
func (r *replay) start(*Sim) error    { return nil }
func (r *replay) spawned(*Sim, *task) {}
func (r *replay) end(*Sim)            {}

func (r *replay) pick(s *Sim) int {
	if s.steps >= int64(len(r.decisions)) {
		s.failReplay(fmt.Sprintf("replay diverged: the recording has %d decisions but the run wants step %d", len(r.decisions), s.steps+1))
		return -1
	}
	want := r.decisions[s.steps]
	if want >= 0 && int(want) < len(s.tasks) && s.tasks[want].state == taskRunnable {
		return s.tasks[want].runIdx
	}
	if want == ClockDecision && s.timers.first() != nil {
		return pickClock
	}
	if want == ClockDecision {
		s.failReplay(fmt.Sprintf("replay diverged at step %d: the recording jumps the clock, but no timer is pending", s.steps+1))
		return -1
	}
	var ids []string
	for _, t := range s.runnable {
		ids = append(ids, fmt.Sprintf("%d(%s)", t.id, t.name))
	}
	s.failReplay(fmt.Sprintf("replay diverged at step %d: recorded task %d is not runnable (runnable: %s)", s.steps+1, want, strings.Join(ids, " ")))
	return -1
}

// newGuided (protocol.Guided) follows a decision list as far as it fits the run, and runs
// without preempting past it: where the recorded task is not runnable, or
// the list has ended, the task of the previous step goes on if it can,
// else the runnable task with the lowest id. It never fails for a
// divergence, which makes it the strategy a shrinker edits a schedule
// with: cut the list short and every later step is non-preemptive; replace
// a preempting decision by the previous task and the rest of the list is
// followed where it still applies. A clock jump (ClockDecision) is made
// where a timer is pending. A guided run's own recorded decisions replay it
// exactly with Replay.
func newGuided(decisions []int32) Strategy { return &guided{decisions: decisions} }

type guided struct {
	decisions []int32
}

func (g *guided) String() string      { return fmt.Sprintf("guided(%d decisions)", len(g.decisions)) }
func (g *guided) start(*Sim) error    { return nil }
func (g *guided) spawned(*Sim, *task) {}
func (g *guided) end(*Sim)            {}

func (g *guided) pick(s *Sim) int {
	if s.steps < int64(len(g.decisions)) {
		want := g.decisions[s.steps]
		if want >= 0 && int(want) < len(s.tasks) && s.tasks[want].state == taskRunnable {
			return s.tasks[want].runIdx
		}
		if want == ClockDecision && s.timers.first() != nil {
			return pickClock
		}
	}
	if l := s.last; l != nil && l.state == taskRunnable {
		return l.runIdx
	}
	best := 0
	for i, t := range s.runnable {
		if t.id < s.runnable[best].id {
			best = i
		}
	}
	return best
}
