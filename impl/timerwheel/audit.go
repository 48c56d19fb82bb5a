package timerwheel

import "iter"

// Verdict is the audit's finding for one element.
type Verdict uint8

const (
	// OK: no real deadline, or the wheel holds it no later than the real one.
	OK Verdict = iota
	// Lost: a live real deadline that this wheel does not hold, so no pass
	// will ever visit it (the TS-4131 failure mode of the seed).
	Lost
	// Late: the wheel holds a deadline later than the real one, so the
	// element would be fired late (TW-1 broken).
	Late
)

func (v Verdict) String() string {
	switch v {
	case OK:
		return "ok"
	case Lost:
		return "lost"
	case Late:
		return "late"
	}
	return "Verdict(?)"
}

// Check audits one element against the TW-1 contract: a live real deadline
// must be held by this wheel at that deadline or earlier (TW-7). It reads
// the element's real deadline once.
func (w *Wheel) Check(t Timer) Verdict {
	real := t.Deadline()
	if real.IsZero() {
		return OK
	}
	e := t.element()
	if e.w != w {
		return Lost
	}
	if e.at.After(real) {
		return Late
	}
	return OK
}

// Report is the result of Audit.
type Report struct {
	// Checked is the number of elements audited.
	Checked int
	// Lost and Late list the offending elements in the order audited.
	Lost, Late []Timer
}

// Clean reports whether the audit found nothing.
func (r Report) Clean() bool { return len(r.Lost) == 0 && len(r.Late) == 0 }

// Audit checks every live element the caller knows of (the wheel cannot
// enumerate an element it lost) and lists the lost and late ones (TW-7). It
// costs one Deadline call per element: it is a debugging aid, not a pass.
func (w *Wheel) Audit(live iter.Seq[Timer]) Report {
	var r Report
	for t := range live {
		r.Checked++
		switch w.Check(t) {
		case Lost:
			r.Lost = append(r.Lost, t)
		case Late:
			r.Late = append(r.Late, t)
		}
	}
	return r
}
