package claims

import (
	"fmt"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/checks"
)

// FromStaleness is a seed's sample of one class of reads (grants or
// denials) from the exact staleness checker: the worst staleness in
// seconds with its witness, every read's staleness for the distribution,
// and each phantom answer (one that was never true) as a wrong
// observation of infinite staleness. describe renders a read by its ID.
func FromStaleness(c checks.ClassReport, describe func(id int) string) Sample {
	var s Sample
	s.Of = int64(c.Reads)
	for i, v := range c.Values {
		if i >= MaxValues {
			break
		}
		s.Values = append(s.Values, v.Seconds())
	}
	if c.Witness != nil {
		s.Worst, s.Seen = c.MaxStaleness.Seconds(), true
		s.Witness = DescribeWitness(c.Witness, describe)
	}
	if c.Phantoms > 0 {
		s.Wrong = int64(c.Phantoms)
		s.Worst, s.Seen = Phantom, true
		s.Witness = fmt.Sprintf("%d phantom answers (never true), e.g. %s", c.Phantoms, describe(c.PhantomExamples[0].ID))
	}
	return s
}

// DescribeWitness renders the read behind a worst staleness and the commit
// that made its answer false.
func DescribeWitness(w *checks.Witness, describe func(id int) string) string {
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
