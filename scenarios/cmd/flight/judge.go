package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// crossCheckTimeout bounds porcupine in the Δ-shift cross-check.
const crossCheckTimeout = 20 * time.Second

// verdict is one window claim judged on the flight's history.
type verdict struct {
	Claim, Bound string
	What         string
	b            claims.Bound
	U            time.Duration // clock + commit uncertainty added to the bound
	Fill         time.Duration // OC-7: the longest database read, which the TTL's insertion adds
	Reads        int
	Worst        time.Duration
	Seen         bool
	Holds        bool
	Tight        float64
	Witness      string
	Cross        string // porcupine's Δ-shift cross-check
}

func (v verdict) Limit() time.Duration { return v.b.Duration() + v.Fill + v.U }

// uncertainty is what the flight adds to every bound: the clock's U and
// the commit log's: a change became visible at some instant in
// [At, Acked], and the truth takes At, so a measured staleness may exceed
// the true one by up to Acked − At.
type uncertainty struct {
	Clock  clockReport
	Commit time.Duration // max Acked − At over the flight's commits
}

func (u uncertainty) Total() time.Duration { return u.Clock.U() + u.Commit }

// commitUncertainty is max(Acked − At) over commits the writer saw acked.
func commitUncertainty(mine []flight.Commit) time.Duration {
	var m int64
	for _, c := range mine {
		m = max(m, c.Acked-c.At)
	}
	return time.Duration(m)
}

// judgeStaleness runs the exact staleness checker over the reads keep
// selects against the truth, judging their grant-staleness (grants), their
// deny-staleness, or both, and porcupine's Δ-shift cross-check at the
// bound plus U (less 1 ns: the claims' windows are half-open).
func judgeStaleness(claim, bound, what string, grants, both bool, reads []read, keep func(read) bool, truth checks.Truth, u uncertainty, fill time.Duration) (verdict, error) {
	b := claims.Get(claim, bound)
	v := verdict{Claim: claim, Bound: bound, What: what, b: b, U: u.Total(), Fill: fill}
	var sel []read
	for _, r := range reads {
		if keep(r) {
			sel = append(sel, r)
		}
	}
	cr := checkReads(sel)
	rep, err := checks.Staleness(cr, truth)
	if err != nil {
		return v, fmt.Errorf("%s: %w", claim, err)
	}
	class := rep.Deny
	switch {
	case both && (rep.Grant.Phantoms > 0 || rep.Grant.MaxStaleness >= rep.Deny.MaxStaleness):
		class.Reads += rep.Grant.Reads
		class.Phantoms += rep.Grant.Phantoms
		class.MaxStaleness, class.Witness = rep.Grant.MaxStaleness, rep.Grant.Witness
	case both:
		class.Reads += rep.Grant.Reads
		class.Phantoms += rep.Grant.Phantoms
	case grants:
		class = rep.Grant
	}
	v.Reads = class.Reads
	v.Worst = class.MaxStaleness
	v.Seen = class.Witness != nil
	v.Holds = class.Phantoms == 0 && v.Worst < v.Limit()
	if b.Value > 0 {
		v.Tight = float64(v.Worst) / float64(b.Duration())
	}
	if w := class.Witness; w != nil {
		r := sel[w.Read.ID]
		v.Witness = fmt.Sprintf("relay%d asked at %s, answer ended by the commit at %s (%v earlier)",
			r.Relay, time.Unix(0, r.Invoke).UTC().Format("15:04:05.000000"), time.Unix(0, w.L).UTC().Format("15:04:05.000000"), w.Staleness)
	}
	if class.Phantoms > 0 {
		v.Witness = fmt.Sprintf("%d phantom answers (never true)", class.Phantoms)
	}
	switch {
	case !rep.Holds(v.Limit() - time.Nanosecond):
		v.Cross = "not run (a class breaks the bound)"
	default:
		x := checks.CrossCheckWithin(cr, truth, v.Limit()-time.Nanosecond, crossCheckTimeout)
		switch {
		case x.Undecided:
			v.Cross = "undecided (porcupine timed out)"
		case x.Agree:
			v.Cross = "porcupine agrees"
		default:
			return v, fmt.Errorf("%s: the exact checker and porcupine disagree: %s", claim, x.Detail)
		}
	}
	return v, nil
}

// quantiles returns the p-quantiles of ns values.
func quantiles(ns []int64, ps ...float64) []time.Duration {
	if len(ns) == 0 {
		return make([]time.Duration, len(ps))
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		j := int(p * float64(len(s)-1))
		out[i] = time.Duration(s[j])
	}
	return out
}

// countVerdict is OC-10: grants of a channel asked under another
// community; any is a violation.
type countVerdict struct {
	Reads, Grants int
}

func countGrants(reads []read, class string) countVerdict {
	var c countVerdict
	for _, r := range reads {
		if r.Class == class {
			c.Reads++
			if r.OK {
				c.Grants++
			}
		}
	}
	return c
}
