package claims

import (
	"fmt"
	"math"
	"time"
)

// Unit is what a bound counts.
type Unit string

const (
	Seconds Unit = "s"
	Count   Unit = "count"
	Bytes   Unit = "bytes"
	Ratio   Unit = "x"
	Percent Unit = "%"
)

// Kind says how a measured figure is compared with a bound; its value is
// the name records carry (findings.Record.BoundKind).
type Kind string

const (
	// AtMost: the worst figure over every seed must not exceed the bound.
	AtMost Kind = "at-most"
	// AtLeast: the worst (smallest) figure must reach the bound (ratios).
	AtLeast Kind = "at-least"
	// Exactly: the figure must equal the bound (counts the design hits
	// exactly: 16,385 rows fetched, 0 visits).
	Exactly Kind = "exactly"
)

// Bound is one number of a source text.
type Bound struct {
	Claim string // the claim it belongs to: "OC-2"
	Name  string // what it is, unique within the claim: "open set max age"
	Value float64
	Unit  Unit
	Kind  Kind
	// Tight marks a bound the design is allowed to reach: a check of it
	// must drive its worst case to the bound on purpose (directed
	// constructions, search), and the audit fails when the tightness
	// (worst / bound) stays below findings.MinTightness. Only a check that reaches
	// its bound can tell it from a bound 1% wider.
	Tight bool
	// Strict marks a half-open window: the design serves an answer only
	// while its age is below the bound ("for 1 s after the read began"), so
	// an answer exactly at the bound is already outside it and the figure
	// must stay strictly below it. A comparison flipped from < to ≤ in the
	// code is then a violation the checks can see.
	Strict bool
	// Source quotes the source text the number comes from.
	Source string
}

// Duration is the bound as a duration (Unit Seconds).
func (b Bound) Duration() time.Duration {
	return time.Duration(math.Round(b.Value * float64(time.Second)))
}

// Int is the bound as an integer (counts and bytes).
func (b Bound) Int() int64 { return int64(math.Round(b.Value)) }

// Holds reports whether a measured figure satisfies the bound.
func (b Bound) Holds(v float64) bool {
	switch b.Kind {
	case AtMost:
		if b.Strict {
			return v < b.Value
		}
		return v <= b.Value
	case AtLeast:
		return v >= b.Value
	case Exactly:
		return v == b.Value
	}
	return false
}

// tightness is how close a measured worst case came to the bound: worst /
// bound for an upper bound (1 means the check drove the design to its
// limit), 1 for an exact count that was hit.
func (b Bound) tightness(worst float64) float64 {
	switch {
	case b.Kind == Exactly && worst == b.Value:
		return 1
	case b.Kind == Exactly:
		return 0
	case b.Value == 0:
		return 0
	}
	return worst / b.Value
}

// Format renders a figure in the bound's unit.
func (b Bound) Format(v float64) string { return formatValue(v, b.Unit) }

// String is the bound in words: "< 1s", "≤ 16385", "≥ 20x".
func (b Bound) String() string {
	op := map[Kind]string{AtMost: "≤", AtLeast: "≥", Exactly: "="}[b.Kind]
	if b.Kind == AtMost && b.Strict {
		op = "<"
	}
	return op + " " + b.Format(b.Value)
}

// formatValue renders a figure with its unit.
func formatValue(v float64, u Unit) string {
	if math.IsInf(v, 0) || math.Abs(v) >= Phantom {
		return "∞ (an answer that was never true)"
	}
	switch u {
	case Seconds:
		return time.Duration(math.Round(v * float64(time.Second))).String()
	case Bytes:
		switch {
		case v >= 1<<20 && math.Mod(v, 1<<20) == 0:
			return fmt.Sprintf("%.0f MiB", v/(1<<20))
		case v >= 1<<10 && math.Mod(v, 1<<10) == 0:
			return fmt.Sprintf("%.0f KiB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	case Ratio:
		if v >= 100 {
			return fmt.Sprintf("%.0fx", v) // 10000x, not 1e+04x
		}
		return fmt.Sprintf("%.3gx", v)
	case Percent:
		return fmt.Sprintf("%.4g%%", v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// Phantom is the figure of an answer that was never true: its staleness is
// infinite. (JSON has no infinity; every bound is far below this.)
const Phantom = 1e15
