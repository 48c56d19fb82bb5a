package pods

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/checks"
)

// CrossCheckTimeout bounds porcupine in the Δ-shift cross-check: proving a
// long violating history Illegal can take it exponential time.
const CrossCheckTimeout = 20 * time.Second

// Staleness is the exact staleness of one class of the world's answers.
type Staleness struct {
	checks.ClassReport
	// Undecided: porcupine's cross-check ran out of time on this history
	// (reported, never counted as agreement).
	Undecided bool
}

// Staleness runs the exact checker over the recorded answers of the given
// classes (grant-staleness when grants, else deny-staleness) against the
// truth, and the Δ-shift cross-check at within (porcupine on the history
// with every read's invoke moved back by within), which must agree with it
// whenever it reaches a verdict. For a half-open window ("less than 1 s")
// pass the bound minus 1 ns.
func (w *World) Staleness(grants bool, within time.Duration, classes ...Class) (Staleness, error) {
	return w.StalenessWhere(grants, within, func(r ReadOp) bool { return hasClass(classes, r.Class) })
}

// StalenessWhere is Staleness over the answers keep selects.
func (w *World) StalenessWhere(grants bool, within time.Duration, keep func(ReadOp) bool) (Staleness, error) {
	reads := w.History.ReadsWhere(keep)
	rep, err := checks.Staleness(reads, w.Tracker.Truth())
	if err != nil {
		return Staleness{}, err
	}
	out := Staleness{ClassReport: rep.Deny}
	if grants {
		out.ClassReport = rep.Grant
	}
	// In a recorded run, mark the reads past the window and the commits
	// that made them stale.
	w.blameStaleness(out.ClassReport, grants, within)
	out.Undecided, err = w.crossCheck(reads, rep, within)
	return out, err
}

// StalenessBoth is Staleness of both classes of the same answers: the
// grant-staleness and the deny-staleness. The exact checker reports both
// classes at once and the cross-check covers both, so both run once here.
// A Staleness call for each ran them twice over the same answers (MS-2's
// two checks and MS-7's ask for both).
func (w *World) StalenessBoth(within time.Duration, classes ...Class) (grant, deny Staleness, err error) {
	reads := w.History.ReadsWhere(func(r ReadOp) bool { return hasClass(classes, r.Class) })
	rep, err := checks.Staleness(reads, w.Tracker.Truth())
	if err != nil {
		return Staleness{}, Staleness{}, err
	}
	grant, deny = Staleness{ClassReport: rep.Grant}, Staleness{ClassReport: rep.Deny}
	w.blameStaleness(grant.ClassReport, true, within)
	w.blameStaleness(deny.ClassReport, false, within)
	undecided, err := w.crossCheck(reads, rep, within)
	grant.Undecided, deny.Undecided = undecided, undecided
	return grant, deny, err
}

// crossCheck runs the Δ-shift cross-check of reads at within, which covers
// both classes of rep, and reports whether porcupine ran out of time; it is
// an error for porcupine and the exact checker to disagree. It runs only
// when both classes hold the bound: it is only meaningful (and only cheap)
// then.
func (w *World) crossCheck(reads []checks.Read, rep checks.Report, within time.Duration) (undecided bool, err error) {
	if !rep.Holds(within) {
		return false, nil
	}
	cross := checks.CrossCheckWithin(reads, w.Tracker.Truth(), within, CrossCheckTimeout)
	if !cross.Agree && !cross.Undecided {
		return cross.Undecided, fmt.Errorf("the exact checker and porcupine disagree at Δ=%v: %s", within, cross.Detail)
	}
	return cross.Undecided, nil
}
