package sim

// POS is partial order sampling (Yuan, Yang and Gu, CAV 2018). Every
// pending event (a runnable task's next step) holds a random priority and
// the highest-priority one runs. After a step, the task that ran draws a
// fresh priority (its next step is a new event), and so does every runnable
// task whose pending step races with the step that ran. Priorities of the
// other events stay, which is what makes POS sample partial orders rather
// than interleavings: events that commute keep their relative order.
//
// Racing is what the scheduler knows of each step: the sim object the step
// operated on (a lock, an event, a wait group) and what it touched besides
// (the world's stream, a spawn). Two steps race unless they are on different
// objects; a step on no one object (Yield, Sleep, Go, a context) races with
// every step, the sound fallback, as the exhaustive explorer's dependency
// relation does (see independent).
func POS() Strategy { return &pos{} }

type pos struct {
	last    *task // the task of the step that ran, nil before the first
	lastObj int32 // the object that task was at when it ran (its label)
	redrawn int64 // priorities re-drawn for races so far (tests)
}

func (*pos) String() string { return "pos" }

func (p *pos) start(s *Sim) error {
	p.last = nil
	s.prioOn = true
	return nil
}

func (*pos) end(*Sim) {}

func (p *pos) spawned(s *Sim, t *task) { p.draw(s, t) }

// draw gives t a fresh priority. The range is wide, so ties (broken by id)
// are negligible.
func (*pos) draw(s *Sim, t *task) {
	t.prio = int64(s.schedSrc.Uint64() >> 2)
	if t.prioIdx >= 0 {
		s.prio.fix(t)
	}
}

func (p *pos) pick(s *Sim) int {
	if l := p.last; l != nil {
		done := footprint(p.lastObj, s.touched, s.touchedObj)
		if l.state == taskRunnable {
			p.draw(s, l)
		}
		// By runnable index, an order that is a function of the history:
		// the draws, and so the schedule, are the same for the same seed.
		for _, t := range s.runnable {
			if t != l && !independent(done, t.obj) {
				p.draw(s, t)
				p.redrawn++
			}
		}
	}
	s.touched = false
	best := s.prio[0]
	p.last, p.lastObj = best, best.obj
	return best.runIdx
}
