package checks

import (
	"fmt"
	"strings"
	"time"
)

// String renders the report for a failure message or the audit: one block
// per class with the maximum, its witness, phantoms and the distribution.
func (r Report) String() string {
	var b strings.Builder
	r.Grant.write(&b, "grant")
	r.Deny.write(&b, "deny")
	return b.String()
}

// String renders one class as Report.String does, labelled "reads".
func (c ClassReport) String() string {
	var b strings.Builder
	c.write(&b, "reads")
	return b.String()
}

func (c ClassReport) write(b *strings.Builder, label string) {
	fmt.Fprintf(b, "%s: %d reads, max staleness %v, p50 %v, p99 %v, %d phantom(s)\n",
		label, c.Reads, c.MaxStaleness, c.P50, c.P99, c.Phantoms)
	if w := c.Witness; w != nil {
		fmt.Fprintf(b, "  witness: %s; its answer was last true at %s", describeRead(w.Read), ns(w.L))
		if w.Ended {
			fmt.Fprintf(b, ", ended by commit #%d (at %s, value %t)", w.EndIndex, ns(w.EndCommit.At), w.EndCommit.Value)
		}
		b.WriteString("\n")
	}
	for _, p := range c.PhantomExamples {
		fmt.Fprintf(b, "  phantom: %s; that answer was never true up to its return\n", describeRead(p))
	}
	if c.Phantoms > len(c.PhantomExamples) {
		fmt.Fprintf(b, "  … and %d more phantom(s)\n", c.Phantoms-len(c.PhantomExamples))
	}
	b.WriteString("  distribution:")
	for i, n := range c.Buckets {
		fmt.Fprintf(b, " %s:%d", bucketLabels[i], n)
	}
	b.WriteString("\n")
}

func describeRead(r Read) string {
	return fmt.Sprintf("read ID %d of %q answered %t, invoked %s, returned %s", r.ID, r.Key, r.Granted, ns(r.Invoke), ns(r.Return))
}

// ns renders a virtual instant both as raw ns (to match traces) and as a
// duration since the origin (to read it).
func ns(t int64) string {
	return fmt.Sprintf("%d ns (%v)", t, time.Duration(t))
}
