package claims

import (
	"fmt"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// record is the finding a check files: the outcome in the audit's terms,
// with the check's note and, for a verdict that is not Holds, why.
func record[R any](c Check[R], o Outcome, verdict string, ex simtest.Explanation) findings.Record {
	rec := findings.Record{ID: c.Claim, Verdict: verdict, Measured: c.Measured(o), Value: o.Worst, Seeds: o.Seeds,
		Witness: o.Witness, Artifact: o.Artifact, Hist: o.Hist, Probes: o.Probes, Timeline: ex.Timeline, Table: ex.Table}
	rec.Note = c.Note
	if c.More.NoteFrom != nil {
		rec.Note = joinNotes(c.Note, c.More.NoteFrom(o))
	}
	if b := o.Bound; b != nil {
		rec.Bound, rec.BoundName, rec.BoundValue, rec.Unit, rec.Tight = b.String(), b.Name, b.Value, string(b.Unit), b.Tight
		rec.BoundKind = string(b.Kind)
		if o.limited {
			rec.Bound = fmt.Sprintf("%s + what each run adds (measured: up to %s)", b, b.Format(o.Limit-b.Value))
		}
		if b.Tight {
			tt := o.Tightness
			rec.Tightness, rec.Sampled = &tt, c.Sampled
		}
	} else {
		rec.Bound, rec.Value = "0 wrong", float64(o.Wrong)
	}
	if len(o.Problems) > 0 && verdict == findings.Violated {
		rec.Note = strings.TrimPrefix(rec.Note+"; "+strings.Join(o.Problems, "; "), "; ")
	}
	if verdict == findings.Inconclusive {
		rec.Note = strings.TrimPrefix(rec.Note+"; inconclusive: "+strings.Join(o.Unexercised, "; "), "; ")
	}
	return rec
}

// joinNotes joins a check's fixed note and the one computed from its
// outcome, either of which may be empty.
func joinNotes(fixed, computed string) string {
	switch {
	case fixed == "":
		return computed
	case computed == "":
		return fixed
	}
	return fixed + "; " + computed
}
