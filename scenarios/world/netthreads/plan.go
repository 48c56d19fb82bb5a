package netthreads

import (
	"fmt"
	"time"
)

// Pause is a pod pause or a forward clock jump: from Stop until Restart every
// net thread's cop is stopped and the workload is frozen; at Restart the cops
// start again and their first pass catches up (TW-5). Instants are virtual
// time since sim.Epoch, which is also every cop's tick 0.
type Pause struct {
	Stop, Restart time.Duration
}

// Plan is the world's timetable. Passes run at every multiple of Tick while
// the cops run, and at each Restart; the Quiet window after each of those
// instants belongs to the pass and its budget continuations (TW-4). Nothing
// else happens in a quiet window and no deadline falls in one, so the
// full-scan reference, which fires everything due at the pass instant, and
// the wheel, which may fire part of it up to Quiet later, see the same
// connections in the same state (TW-2's differential is exact).
type Plan struct {
	Tick   time.Duration
	Quiet  time.Duration
	Pauses []Pause // in time order, not overlapping
}

// Validate checks the shape of the plan.
func (p Plan) Validate() error {
	switch {
	case p.Tick <= 0:
		return fmt.Errorf("netthreads: Tick must be positive, got %v", p.Tick)
	case p.Quiet <= 0 || 3*p.Quiet > p.Tick:
		return fmt.Errorf("netthreads: Quiet must be in (0, Tick/3], got %v with Tick %v", p.Quiet, p.Tick)
	}
	var last time.Duration
	for i, ps := range p.Pauses {
		if ps.Stop <= last || ps.Restart <= ps.Stop {
			return fmt.Errorf("netthreads: pause %d (%v..%v) is out of order or empty", i, ps.Stop, ps.Restart)
		}
		if off := ps.Stop % p.Tick; off < p.Quiet {
			return fmt.Errorf("netthreads: pause %d stops at %v, inside the quiet window of a pass", i, ps.Stop)
		}
		if off := ps.Restart % p.Tick; off > p.Tick-2*p.Quiet {
			return fmt.Errorf("netthreads: pause %d restarts at %v, too close to the next tick for its catch-up to finish first", i, ps.Restart)
		}
		last = ps.Restart + p.Quiet
	}
	return nil
}

// GridAfter returns the first pass instant of the tick grid strictly after t.
func (p Plan) GridAfter(t time.Duration) time.Duration {
	return (t/p.Tick + 1) * p.Tick
}

// frozen reports whether t lies in a pause or in the quiet window of its
// restart, and if so when that ends.
func (p Plan) frozen(t time.Duration) (time.Duration, bool) {
	for _, ps := range p.Pauses {
		if t >= ps.Stop && t < ps.Restart+p.Quiet {
			return ps.Restart + p.Quiet, true
		}
	}
	return 0, false
}

// OpAllowed reports whether the workload may act at t: outside every quiet
// window and every pause.
func (p Plan) OpAllowed(t time.Duration) bool {
	if t%p.Tick < p.Quiet {
		return false
	}
	_, f := p.frozen(t)
	return !f
}

// NextOp returns the earliest instant at or after t at which the workload
// may act.
func (p Plan) NextOp(t time.Duration) time.Duration {
	for range len(p.Pauses) + 3 { // each round leaves one window behind
		if off := t % p.Tick; off < p.Quiet {
			t += p.Quiet - off
			continue
		}
		if end, f := p.frozen(t); f {
			t = end
			continue
		}
		return t
	}
	return t
}

// DeadlineAllowed reports whether a deadline may fall at d: outside every
// quiet window (exactly on a tick only for aligned threads, which never
// continue a pass) and outside the catch-up window of every restart, which
// for a restart off the grid begins at the start of its tick.
func (p Plan) DeadlineAllowed(d time.Duration, aligned bool) bool {
	if off := d % p.Tick; off < p.Quiet && (off != 0 || !aligned) {
		return false
	}
	for _, ps := range p.Pauses {
		if d >= p.restartWindow(ps) && d < ps.Restart+p.Quiet {
			return false
		}
	}
	return true
}

// restartWindow is where the deadlines a restart's catch-up could decide
// differently from the full scan begin: the start of the restart's tick. A
// pass off the grid visits only buckets whose tick has begun, so a deadline
// earlier in the restart's own tick waits for the next tick, unless the
// wheel held it earlier; the full scan at the restart fires it at once.
func (p Plan) restartWindow(ps Pause) time.Duration { return ps.Restart - ps.Restart%p.Tick }

// NextDeadline returns the earliest allowed deadline at or after d.
func (p Plan) NextDeadline(d time.Duration, aligned bool) time.Duration {
	for range len(p.Pauses) + 3 {
		if p.DeadlineAllowed(d, aligned) {
			return d
		}
		if off := d % p.Tick; off < p.Quiet {
			d += p.Quiet - off
			continue
		}
		for _, ps := range p.Pauses {
			if d >= p.restartWindow(ps) && d < ps.Restart+p.Quiet {
				d = ps.Restart + p.Quiet
			}
		}
	}
	return d
}
