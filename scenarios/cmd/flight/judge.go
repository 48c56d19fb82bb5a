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
	U            time.Duration // the clock's uncertainty, added to the bound
	Fill         time.Duration // OC-7: the longest database read, which the TTL's insertion adds
	Reads        int
	Worst        time.Duration // the largest staleness measured against the commit log's instants
	// Adjusted is the largest staleness less the uncertainty of the commit
	// that ended each read's answer (that commit's Acked − At): the least
	// each read's true staleness can be. The verdict compares it.
	Adjusted time.Duration
	Delta    time.Duration // porcupine's cross-check ran at this Δ
	Seen     bool
	Holds    bool
	Tight    float64
	Witness  string
	Cross    string // porcupine's Δ-shift cross-check
}

func (v verdict) Limit() time.Duration { return v.b.Duration() + v.Fill + v.U }

// uncertainty is what the flight knows it does not know: the clock's U,
// added to every bound, and each commit's: a change became visible at
// some instant in [At, Acked], and the truth takes At, so a read's measured
// staleness may exceed its true one by up to its ending commit's
// Acked − At, which is subtracted from that read's staleness alone.
type uncertainty struct {
	Clock  clockReport
	Commit time.Duration // max Acked − At over the flight's commits
	ByAt   map[int64]time.Duration
}

// commitSlack indexes each commit's Acked − At by its instant.
func commitSlack(cs []flight.Commit) map[int64]time.Duration {
	m := map[int64]time.Duration{}
	for _, c := range cs {
		m[c.At] = max(m[c.At], time.Duration(c.Acked-c.At))
	}
	return m
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
	v := verdict{Claim: claim, Bound: bound, What: what, b: b, U: u.Clock.U(), Fill: fill}
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
	adjusted, at, err := adjustedWorst(cr, truth, grants, both, u.ByAt)
	if err != nil {
		return v, fmt.Errorf("%s: %w", claim, err)
	}
	v.Adjusted = adjusted
	v.Holds = class.Phantoms == 0 && v.Adjusted < v.Limit()
	if b.Value > 0 {
		v.Tight = float64(v.Worst) / float64(b.Duration())
	}
	if w := class.Witness; w != nil && (v.Holds || at < 0) {
		r := sel[w.Read.ID]
		v.Witness = fmt.Sprintf("relay%d asked at %s, answer ended by the commit at %s (%v earlier)",
			r.Relay, time.Unix(0, r.Invoke).UTC().Format("15:04:05.000000"), time.Unix(0, w.L).UTC().Format("15:04:05.000000"), w.Staleness)
	}
	if !v.Holds && at >= 0 {
		r := sel[at]
		v.Witness = fmt.Sprintf("relay%d asked at %s, %v after the commit that ended its answer, less that commit's uncertainty",
			r.Relay, time.Unix(0, r.Invoke).UTC().Format("15:04:05.000000"), v.Adjusted)
	}
	if class.Phantoms > 0 {
		v.Witness = fmt.Sprintf("%d phantom answers (never true)", class.Phantoms)
	}
	// The two checkers must agree on the raw staleness at the bound plus
	// every uncertainty (the largest commit's too).
	v.Delta = v.Limit() + u.Commit - time.Nanosecond
	switch {
	case !rep.Holds(v.Delta):
		v.Cross = "not run (a class breaks the bound)"
	default:
		x := checks.CrossCheckWithin(cr, truth, v.Delta, crossCheckTimeout)
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

// adjustedWorst is the largest staleness, over the reads of the judged
// class, less the uncertainty of the commit that ended each read's answer,
// and that read's index (-1: none). Each read is run through the exact
// checker alone, with its own key's truth, to find its ending commit.
func adjustedWorst(cr []checks.Read, truth checks.Truth, grants, both bool, slack map[int64]time.Duration) (time.Duration, int, error) {
	worst, at := time.Duration(-1), -1
	for i, r := range cr {
		if !both && r.Granted != grants {
			continue
		}
		rep, err := checks.Staleness([]checks.Read{r}, checks.Truth{r.Key: truth[r.Key]})
		if err != nil {
			return 0, -1, err
		}
		class := rep.Deny
		if r.Granted {
			class = rep.Grant
		}
		w := class.Witness
		if w == nil {
			continue // a phantom: counted by the class report
		}
		s := w.Staleness
		if w.Ended {
			s = max(0, s-slack[w.EndCommit.At])
		}
		if s > worst {
			worst, at = s, i
		}
	}
	return max(worst, 0), at, nil
}
