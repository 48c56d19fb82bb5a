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
	// The cross-check covers both classes; it is only meaningful (and
	// only cheap) when both hold the bound.
	if !rep.Holds(within) {
		return out, nil
	}
	cross := checks.CrossCheckWithin(reads, w.Tracker.Truth(), within, CrossCheckTimeout)
	out.Undecided = cross.Undecided
	if !cross.Agree && !cross.Undecided {
		return out, fmt.Errorf("the exact checker and porcupine disagree at Δ=%v: %s", within, cross.Detail)
	}
	return out, nil
}
