// Package findings holds what claim checks file for the audit: one Record
// per check and claim, the file the records go to (WINDTUNNEL_CLAIMS), and
// the screen the audit asks the checks for (ScreenEnv). The checks write
// records through scenarios/claims; the audit reads them back here and
// merges them per claim ID.
package findings

// Verdicts, as the audit prints them.
const (
	Holds          = "holds"           // the check ran and the claim held on every seed
	KnownDeviation = "known-deviation" // the claim does not hold, as its authors documented; the check reproduced it
	Violated       = "violated"        // the check found the claim broken (or failed to reproduce a documented deviation)
	NotChecked     = "not-checked"     // no check serves the claim: always a failure of the audit
	// Inconclusive: nothing was found broken, but a run of fewer seeds than
	// the check's default did not exercise it as much as its requirements
	// ask (a probe reached too rarely, a tight bound not approached); its
	// default seeds judge it. Always a failure of the audit.
	Inconclusive = "inconclusive"
)

// Verdict returns Holds when ok, otherwise Violated: the common case of a
// check that either held on every seed or did not.
func Verdict(ok bool) string {
	if ok {
		return Holds
	}
	return Violated
}

func validVerdict(v string) bool {
	switch v {
	case Holds, KnownDeviation, Violated, NotChecked, Inconclusive:
		return true
	}
	return false
}

// MinTightness is how close to its bound every tight check must get under
// the correct code (worst / bound): only a check that reaches its bound can
// tell it from a bound 1% wider.
const MinTightness = 0.995

// Record is one test's finding for one claim.
type Record struct {
	ID       string `json:"id"`
	Test     string `json:"test"`
	Verdict  string `json:"verdict"`
	Measured string `json:"measured"` // computed from what was measured, never written in advance
	Bound    string `json:"bound"`    // the bound in words, from the table
	// BoundName names the table entry the figure is compared with.
	BoundName string `json:"bound_name,omitempty"`
	// BoundValue is the table's number in Unit (0 when the claim has none).
	BoundValue float64 `json:"bound_value,omitempty"`
	// BoundKind is how the figure meets the bound: "at-most", "at-least"
	// or "exactly" (the worst of several records is the largest figure,
	// or the smallest for "at-least").
	BoundKind string  `json:"bound_kind,omitempty"`
	Value     float64 `json:"value"` // the worst measured figure in Unit, for merging records (the audit keeps the worst)
	Unit      string  `json:"unit,omitempty"`
	// Tightness is worst / bound for a bound the design may reach (nil
	// otherwise): how close the check drove the design to its limit.
	Tightness *float64 `json:"tightness,omitempty"`
	// Tight says the bound requires tightness ≥ MinTightness; Sampled that
	// this record's check samples at random and leaves that to another.
	Tight    bool   `json:"tight,omitempty"`
	Sampled  bool   `json:"sampled,omitempty"`
	Seeds    int    `json:"seeds"`
	Witness  string `json:"witness,omitempty"`  // the read, history or counterexample behind the figure
	Artifact string `json:"artifact,omitempty"` // a file the report links, e.g. a porcupine visualization
	// Timeline and Table are the pages of the seed a check explained
	// (claims.Hooks.Explain): a documented deviation's counterexample.
	Timeline string   `json:"timeline,omitempty"`
	Table    string   `json:"table,omitempty"`
	Buckets  []Bucket `json:"buckets,omitempty"`
	// Hist is the distribution of every observation on a linear axis up to
	// 1.2 × the bound, for window claims.
	Hist  *Hist  `json:"hist,omitempty"`
	Note  string `json:"note,omitempty"`
	Proof *Proof `json:"proof,omitempty"`
	// Probes are the rare interleavings this check's seeds had to reach.
	Probes []ProbeCount `json:"probes,omitempty"`
}

// Bucket is one bar of a distribution: Count values with Label.
type Bucket struct {
	Label string `json:"label"`
	Count int64  `json:"count"`
}

// Proof describes the space a bounded-exhaustive check covered.
type Proof struct {
	Config         string `json:"config"`          // the small configuration, in words
	MaxPreemptions int    `json:"max_preemptions"` // P
	Reduction      string `json:"reduction"`
	Explored       int64  `json:"explored"` // schedules run to their end
	Pruned         int64  `json:"pruned"`   // branches the reduction skipped
	Exhausted      bool   `json:"exhausted"`
}

// ProbeCount is a probe a check required, and how often its seeds reached it.
type ProbeCount struct {
	Name  string `json:"name"`
	Claim string `json:"claim"`
	What  string `json:"what"`
	Min   int64  `json:"min"`
	Seeds int    `json:"seeds"` // seeds that reached it at least once
	Count int64  `json:"count"` // times reached, over every seed
}
