// Package stale turns the exact staleness checker's report of a class of
// reads (checks.ClassReport) into a claim check's sample: the window claims
// of OC and MS measure staleness this way.
package stale

import (
	"fmt"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// Sample is a seed's sample of one class of reads (grants or denials). It
// holds the worst staleness in seconds with its witness, every read's
// staleness for the distribution, and each phantom answer (one that was
// never true) as a wrong observation of infinite staleness (claims.Phantom).
// describe renders a read by its ID.
func Sample(c checks.ClassReport, describe func(id int) string) claims.Sample {
	var s claims.Sample
	s.Of = int64(c.Reads)
	for _, v := range c.Values {
		s.Values = append(s.Values, v.Seconds())
	}
	if c.Witness != nil {
		s.Worst, s.Seen = c.MaxStaleness.Seconds(), true
		s.Witness = Witness(c.Witness, describe)
	}
	if c.Phantoms > 0 {
		s.Wrong = int64(c.Phantoms)
		s.Worst, s.Seen = claims.Phantom, true
		s.Witness = fmt.Sprintf("%d phantom answers (never true), e.g. %s", c.Phantoms, describe(c.PhantomExamples[0].ID))
	}
	return s
}

// Witness renders the read behind a worst staleness and the commit that
// made its answer false.
func Witness(w *checks.Witness, describe func(id int) string) string {
	if w == nil {
		return "no read"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  staleness %v: the answer was last true at +%v", describe(w.Read.ID), w.Staleness, time.Duration(w.L))
	if w.Ended {
		fmt.Fprintf(&b, " (the commit at +%v made it false)", time.Duration(w.EndCommit.At))
	}
	return b.String()
}
