package audit

import (
	"fmt"
	"time"
)

// Usage is what the processes an audit started and waited for used, all
// of them together: the go commands that built its binaries, the claim
// parts, every mutant's runs. It is the figure to read when an audit got
// slower. Short processes each touch a fresh heap, so where a page fault
// is dear, kernel time is a large share of the CPU, which the wall time
// alone does not show.
type Usage struct {
	User, System time.Duration
	MinorFaults  int64
}

// ChildrenUsage returns the usage of every child process of this one that
// has ended and been waited for (getrusage RUSAGE_CHILDREN); ok is false
// where the system does not report it.
func ChildrenUsage() (u Usage, ok bool) { return childrenUsage() }

// Sub is the usage between an earlier reading b and u.
func (u Usage) Sub(b Usage) Usage {
	return Usage{User: u.User - b.User, System: u.System - b.System, MinorFaults: u.MinorFaults - b.MinorFaults}
}

// String reads "412.3 CPU-s (97.1 in the kernel, 4,890,550 minor page faults)".
func (u Usage) String() string {
	cpu := (u.User + u.System).Seconds()
	return fmt.Sprintf("%.1f CPU-s (%.1f in the kernel, %s minor page faults)", cpu, u.System.Seconds(), thousands(u.MinorFaults))
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
