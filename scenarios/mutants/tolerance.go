package mutants

import (
	"fmt"
	"math"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// A tolerance mutant widens one bound of the claims table where impl
// encodes it: a time or size bound ×1.01, a count +1, or the comparison
// that decides the bound made one step more lenient (< becomes ≤). A check
// that cannot catch it cannot tell the source text's number from a
// slightly wider one, so every tolerance mutant must be caught by the claim
// it belongs to, like the hand-written ones.

// Site is where impl encodes one bound of the claims table.
type Site struct {
	Claim, Bound string // the table entry (claims.Get)
	File         string // relative to the module root
	// Old is the snippet that encodes the bound, exactly once in File.
	Old string
	// Literal is the bound's value as written inside Old ("1 * time.Second",
	// "16384", "64 << 20"); the widened mutant replaces it with the table's
	// value widened. Empty for a comparison site.
	Literal string
	// Lenient, for a comparison site, is Old with the comparison that
	// decides the bound made one step more lenient.
	Lenient string
	// Tests and Pkg are the claim checks that must catch it.
	Tests, Pkg string
}

// Widen is the table's value one step wider, as a Go expression of the
// literal's kind: a duration ×1.01 in nanoseconds, a size ×1.01 in bytes,
// a count +1.
func Widen(b claims.Bound, literal string) (string, error) {
	duration := strings.Contains(literal, "time.")
	switch b.Unit {
	case claims.Seconds:
		if !duration {
			return "", fmt.Errorf("%s/%s: a duration bound, but the literal %q is not a time.Duration expression", b.Claim, b.Name, literal)
		}
		return fmt.Sprintf("%d * time.Nanosecond", int64(math.Round(b.Value*1.01*1e9))), nil
	case claims.Bytes:
		return fmt.Sprintf("%d", int64(math.Ceil(b.Value*1.01))), nil
	case claims.Count:
		if b.Value != math.Trunc(b.Value) {
			return "", fmt.Errorf("%s/%s: a count bound with a fraction", b.Claim, b.Name)
		}
		return fmt.Sprintf("%d", int64(b.Value)+1), nil
	}
	return "", fmt.Errorf("%s/%s: no tolerance for a %s bound", b.Claim, b.Name, b.Unit)
}

// Sites is every place impl encodes a bound of the table.
func Sites() []Site {
	var all []Site
	for _, family := range [][]Site{ocSites, msSites, drSites, twSites, lfSites} {
		all = append(all, family...)
	}
	return all
}

// Tolerance derives the tolerance mutants from the sites.
func Tolerance() ([]Mutant, error) {
	var out []Mutant
	for _, s := range Sites() {
		b := claims.Get(s.Claim, s.Bound)
		id := "tol-" + strings.ToLower(s.Claim) + "-" + strings.ReplaceAll(s.Bound, " ", "-")
		switch {
		case s.Literal != "":
			wide, err := Widen(b, s.Literal)
			if err != nil {
				return nil, err
			}
			if strings.Count(s.Old, s.Literal) != 1 {
				return nil, fmt.Errorf("site %s: the literal %q must occur exactly once in %q", id, s.Literal, s.Old)
			}
			out = append(out, Mutant{ID: id + "-widened", Claims: []string{s.Claim}, Kind: KindTolerance,
				What: fmt.Sprintf("%s %s widened to %s (%s)", s.Claim, s.Bound, wide, widenedWords(b)),
				File: s.File, Old: s.Old, New: strings.Replace(s.Old, s.Literal, wide, 1), Tests: s.Tests, Pkg: s.Pkg})
		case s.Lenient != "":
			out = append(out, Mutant{ID: id + "-lenient", Claims: []string{s.Claim}, Kind: KindTolerance,
				What: fmt.Sprintf("the comparison that decides %s %s made lenient (an answer exactly at the bound is still served)", s.Claim, s.Bound),
				File: s.File, Old: s.Old, New: s.Lenient, Tests: s.Tests, Pkg: s.Pkg})
		default:
			return nil, fmt.Errorf("site %s: neither a literal nor a lenient comparison", id)
		}
	}
	return out, nil
}

func widenedWords(b claims.Bound) string {
	switch b.Unit {
	case claims.Seconds, claims.Bytes:
		return "the bound ×1.01"
	}
	return "the bound +1"
}
