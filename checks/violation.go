package checks

import (
	"fmt"
	"slices"
	"time"
)

// Instant is a point of virtual time: the time since the simulation's
// epoch (sim.Epoch), in ns. Histories, truths and violations of every world
// use it, so a figure from one world reads like a figure from another.
type Instant int64

// At is the instant d after the epoch (sim.Sim.Elapsed's value).
func At(d time.Duration) Instant { return Instant(d) }

// Duration is the instant as the time since the epoch.
func (i Instant) Duration() time.Duration { return time.Duration(i) }

// String renders the instant as an offset from the epoch: "+1.5s".
func (i Instant) String() string { return "+" + time.Duration(i).String() }

// Violation is one broken claim found in a run: the claim it breaks, what
// was seen, and when. Every world reports what its checks find this way.
type Violation struct {
	Claim string // "DR-2", or "harness" for a broken assumption of the world itself
	Msg   string
	At    Instant
}

func (v Violation) String() string { return v.Claim + ": " + v.Msg }

// Error makes a violation an error naming its claim.
func (v Violation) Error() string { return v.String() }

// DefaultViolationsPerClaim bounds what a badly broken run records per
// claim; the count stays exact.
const DefaultViolationsPerClaim = 8

// Violations collects a run's violations, bounded per claim (the first ones
// are the useful ones) with exact counts. The zero value is ready to use.
type Violations struct {
	// PerClaim bounds the violations kept per claim (0: the default).
	PerClaim int
	list     []Violation
	counts   map[string]int
}

// Add records a violation of claim and reports whether it was kept.
func (vs *Violations) Add(claim string, at Instant, format string, a ...any) bool {
	if vs.counts == nil {
		vs.counts = map[string]int{}
	}
	vs.counts[claim]++
	limit := vs.PerClaim
	if limit == 0 {
		limit = DefaultViolationsPerClaim
	}
	if vs.counts[claim] > limit {
		return false
	}
	vs.list = append(vs.list, Violation{Claim: claim, Msg: fmt.Sprintf(format, a...), At: at})
	return true
}

// Count is the number of violations of claim, kept or not.
func (vs *Violations) Count(claim string) int { return vs.counts[claim] }

// Of returns the kept violations of the given claims (every claim when none
// is given), in the order they were found; "harness" ones always.
func (vs *Violations) Of(claims ...string) []Violation {
	var out []Violation
	for _, v := range vs.list {
		if len(claims) == 0 || v.Claim == "harness" || slices.Contains(claims, v.Claim) {
			out = append(out, v)
		}
	}
	return out
}

// Has reports whether any violation of claim was found.
func (vs *Violations) Has(claim string) bool { return vs.counts[claim] > 0 }

// Err returns the first violation of the given claims, with how many others
// there were, or nil.
func (vs *Violations) Err(claims ...string) error {
	kept := vs.Of(claims...)
	if len(kept) == 0 {
		return nil
	}
	total := 0
	for c, n := range vs.counts { //windtunnel:unordered summing counts
		if len(claims) == 0 || c == "harness" || slices.Contains(claims, c) {
			total += n
		}
	}
	if total == 1 {
		return kept[0]
	}
	return fmt.Errorf("%w (%d violations in all)", kept[0], total)
}
