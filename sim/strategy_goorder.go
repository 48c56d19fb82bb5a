package sim

import "time"

// GoOrder runs tasks in the order Go's own scheduler runs goroutines on one
// processor (runtime/proc.go), with seeded switches for what other
// processors and preemption would do:
//
//   - the running task goes on until it blocks, ends or calls Yield
//     (runtime.Gosched): Go does not switch at a channel send or an Unlock;
//   - a task made runnable, spawned or woken, runs next (Go's runnext slot);
//     the task that held that slot moves to the back of the run queue;
//   - Yield sends its task behind every other runnable one (Gosched puts it
//     on the global queue, which a processor reads when its own is empty),
//     and so does running goSliceSteps steps in a row (sysmon's preemption);
//   - at each step, with a probability drawn once per run from the seed,
//     between 1/2 and 1/65536, a uniformly chosen runnable task runs
//     instead, and the task it displaced runs next once it stops;
//   - at each step, with probability 1/128, when a timer is due within a
//     millisecond, no task runs and the clock jumps to it (the processor
//     pauses: a collection, the OS taking its thread), so the sleeper it
//     wakes runs next.
//
// Some bugs only show in Go's own order: a goroutine started just before its
// parent yields runs first there, which a walk that switches at every step
// does only about half the time. The switches keep the other orders
// reachable, and a run's rate of them sets how far it strays. The pauses
// reach what no order of steps can: a lone poll loop whose partner sleeps
// 100 µs meets it early only if time passes while the loop could run.
func GoOrder() Strategy { return &goOrder{} }

// goSliceSteps bounds how long one task runs before it is sent to the back:
// a task that polls without blocking cannot keep the others waiting.
const goSliceSteps = 4096

// goMaxRateShift is the smallest switch rate, as a power of two: a run
// switches at each step with probability 2^-k, k from 1 to goMaxRateShift.
const goMaxRateShift = 16

// goJumpShift sets the rate of pauses, 2^-goJumpShift per step: a poll loop
// of about ten steps a round meets one within a few hundred rounds, while
// a run still spends over 99% of its steps running tasks.
const goJumpShift = 7

// goMaxPauseNs bounds a pause: a timer further off does not fire early,
// so a timeout (a second, a minute) keeps its distance from the work.
const goMaxPauseNs = int64(time.Millisecond)

// The priority bands of the heap (Sim.prio): the runnext slot above the run
// queue above the tasks sent to the back. Within a band a smaller sequence
// number is older and ranks higher, so each band is first in, first out.
const (
	goBandNext  int64 = 3 << 60
	goBandQueue int64 = 2 << 60
	goBandBack  int64 = 1 << 60
)

type goOrder struct {
	cur      *task // the task on the processor, nil before the first step
	next     *task // the task in the runnext slot, nil when it is empty
	ran      int   // steps cur has run in a row
	seq      int64 // enqueue order, for first in, first out
	rateBits int   // a step switches when a draw's top rateBits bits are 0
	yielded  bool  // cur's last step was a Yield (set by Sim.Yield)
	switched int64 // seeded switches so far (tests)
	jumps    int64 // pauses so far (tests)
	// fixedRate, when positive, replaces the seed's draw of rateBits
	// (tests: at 64 a step switches with probability 2^-64).
	fixedRate int
}

func (g *goOrder) String() string { return "goorder" }

func (g *goOrder) start(s *Sim) error {
	rate := g.fixedRate
	if rate <= 0 {
		rate = 1 + s.sched.IntN(goMaxRateShift)
	}
	*g = goOrder{rateBits: rate, fixedRate: g.fixedRate}
	s.prioOn = true
	s.goOrder = g
	return nil
}

func (*goOrder) end(*Sim) {}

func (g *goOrder) spawned(s *Sim, t *task) { g.readied(s, t) }

// readied puts t, just made runnable, in the runnext slot.
func (g *goOrder) readied(s *Sim, t *task) {
	if n := g.next; n != nil && n != t && n.state == taskRunnable {
		g.enqueue(s, n, goBandQueue)
	}
	g.next = t
	t.prio = goBandNext
	s.prio.fix(t)
}

// enqueue puts t at the back of band.
func (g *goOrder) enqueue(s *Sim, t *task, band int64) {
	g.seq++
	t.prio = band - g.seq
	s.prio.fix(t)
	if g.next == t {
		g.next = nil
	}
}

func (g *goOrder) pick(s *Sim) int {
	if e := s.timers.first(); e != nil && e.when-s.nowNs <= goMaxPauseNs && s.schedSrc.Uint64()>>(64-goJumpShift) == 0 {
		g.jumps++
		return pickClock
	}
	c := g.cur
	goesOn := c != nil && c.state == taskRunnable
	if goesOn && (g.yielded || g.ran >= goSliceSteps) {
		g.enqueue(s, c, goBandBack)
		goesOn = false
	}
	g.yielded = false
	if s.schedSrc.Uint64()>>(64-g.rateBits) == 0 {
		r := s.runnable[s.sched.IntN(len(s.runnable))]
		if r != c {
			g.switched++
			if goesOn {
				g.readied(s, c) // the displaced task runs next
			}
			return g.run(r)
		}
	}
	if goesOn {
		g.ran++
		return c.runIdx
	}
	return g.run(s.prio[0])
}

// run makes t the task on the processor.
func (g *goOrder) run(t *task) int {
	if g.next == t {
		g.next = nil
	}
	g.cur, g.ran = t, 1
	return t.runIdx
}
