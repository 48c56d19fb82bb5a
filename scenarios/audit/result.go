package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// ClaimResult is the audit's verdict on one claim, merged from every record
// the scenario tests wrote for it.
type ClaimResult struct {
	ID       string          `json:"id"`
	Text     string          `json:"text"`
	Verdict  string          `json:"verdict"`
	Expected string          `json:"expected"`
	Measured string          `json:"measured"`
	Bound    string          `json:"bound"`
	Seeds    int             `json:"seeds"`
	Tests    []string        `json:"tests,omitempty"`
	Witness  string          `json:"witness,omitempty"`
	Artifact string          `json:"artifact,omitempty"`
	Buckets  []claims.Bucket `json:"buckets,omitempty"`
	Note     string          `json:"note,omitempty"`
}

// MutantResult says whether a mutant was caught, and how quickly.
type MutantResult struct {
	ID           string   `json:"id"`
	Claims       []string `json:"claims"`
	What         string   `json:"what"`
	Caught       bool     `json:"caught"`
	SeedsToCatch int      `json:"seeds_to_catch"`
	SeedBudget   int      `json:"seed_budget"`
	CaughtBy     string   `json:"caught_by,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// ProofResult is one bounded-exhaustive check: every schedule of a small
// configuration within a preemption bound.
type ProofResult struct {
	ID       string        `json:"id"`
	Test     string        `json:"test"`
	Verdict  string        `json:"verdict"`
	Expected string        `json:"expected"`
	Measured string        `json:"measured"`
	Proof    *claims.Proof `json:"proof"`
	Witness  string        `json:"witness,omitempty"`
}

// Report is the whole audit: out/audit.json.
type Report struct {
	Commit   string         `json:"commit"`
	Seeds    int            `json:"seeds"`
	Claims   []ClaimResult  `json:"claims"`
	Proofs   []ProofResult  `json:"proofs"`
	Mutants  []MutantResult `json:"mutants"`
	Problems []string       `json:"problems"`
}

// Proofs separates the proof records (each its own line in the report).
// A proof is expected to hold, and to have exhausted its space.
func Proofs(recs []claims.Record) []ProofResult {
	var out []ProofResult
	for _, r := range recs {
		if r.Proof == nil {
			continue
		}
		out = append(out, ProofResult{ID: r.ID, Test: r.Test, Verdict: r.Verdict, Expected: Expected(r.ID), Measured: r.Measured, Proof: r.Proof, Witness: r.Witness})
	}
	return out
}

// Expected verdicts other than "holds": deviations the authors documented,
// which the checks must reproduce.
var expectedVerdict = map[string]string{
	"OC-6": claims.KnownDeviation,
}

// Expected returns the verdict the audit expects for a claim.
func Expected(id string) string {
	if v, ok := expectedVerdict[id]; ok {
		return v
	}
	return claims.Holds
}

var severity = map[string]int{claims.Holds: 0, claims.KnownDeviation: 1, claims.Violated: 2, claims.NotChecked: 3}

// Merge combines the records of every test into one result per claim, in
// the order of CLAIMS.md. A claim without records is not-checked. Of several
// records the worst verdict wins, and the measured figure is the record with
// the largest value (the worst case over tests).
func Merge(cs []Claim, recs []claims.Record) []ClaimResult {
	byID := map[string][]claims.Record{}
	for _, r := range recs {
		if r.Proof != nil {
			continue // proofs are reported on their own lines
		}
		byID[r.ID] = append(byID[r.ID], r)
	}
	out := make([]ClaimResult, 0, len(cs))
	for _, c := range cs {
		res := ClaimResult{ID: c.ID, Text: c.Text, Expected: Expected(c.ID), Verdict: claims.NotChecked,
			Measured: "no check ran", Bound: "-"}
		rs := byID[c.ID]
		var worst *claims.Record
		verdict := -1
		var buckets []claims.Bucket
		for i := range rs {
			r := &rs[i]
			res.Seeds += r.Seeds
			if !slices.Contains(res.Tests, r.Test) {
				res.Tests = append(res.Tests, r.Test)
			}
			if sv := severity[r.Verdict]; sv > verdict {
				verdict = sv
				res.Verdict = r.Verdict
			}
			if worst == nil || r.Value > worst.Value || (r.Value == worst.Value && severity[r.Verdict] > severity[worst.Verdict]) {
				worst = r
			}
			buckets = mergeBuckets(buckets, r.Buckets)
		}
		if worst != nil {
			res.Measured, res.Bound, res.Witness, res.Artifact, res.Note = worst.Measured, worst.Bound, worst.Witness, worst.Artifact, worst.Note
			res.Buckets = buckets
		}
		out = append(out, res)
	}
	return out
}

// mergeBuckets adds distributions with the same labels; different label sets
// keep the first (records of one claim use one bucketing).
func mergeBuckets(a, b []claims.Bucket) []claims.Bucket {
	if len(a) == 0 {
		return slices.Clone(b)
	}
	if len(b) != len(a) {
		return a
	}
	for i := range a {
		if a[i].Label != b[i].Label {
			return a
		}
		a[i].Count += b[i].Count
	}
	return a
}

// Judge lists every reason the audit fails: a verdict other than expected,
// a claim nobody checked, a mutant that survived or could not be applied.
func Judge(r *Report) {
	r.Problems = nil
	for _, c := range r.Claims {
		switch {
		case c.Verdict == claims.NotChecked:
			r.Problems = append(r.Problems, fmt.Sprintf("%s is not checked by any scenario", c.ID))
		case c.Verdict != c.Expected:
			r.Problems = append(r.Problems, fmt.Sprintf("%s: verdict %s, expected %s (%s)", c.ID, c.Verdict, c.Expected, c.Measured))
		}
	}
	for _, p := range r.Proofs {
		switch {
		case p.Verdict != p.Expected:
			r.Problems = append(r.Problems, fmt.Sprintf("proof %s (%s): verdict %s, expected %s (%s)", p.ID, p.Test, p.Verdict, p.Expected, p.Measured))
		case !p.Proof.Exhausted:
			r.Problems = append(r.Problems, fmt.Sprintf("proof %s (%s): the space was not exhausted (%d schedules explored)", p.ID, p.Test, p.Proof.Explored))
		}
	}
	for _, m := range r.Mutants {
		switch {
		case m.Error != "":
			r.Problems = append(r.Problems, fmt.Sprintf("mutant %s: %s", m.ID, m.Error))
		case !m.Caught:
			r.Problems = append(r.Problems, fmt.Sprintf("mutant %s (%s) survived %d seeds of %s", m.ID, strings.Join(m.Claims, ", "), m.SeedBudget, m.What))
		}
	}
}

// MutantsFor returns the results of the mutants that serve a claim.
func (r *Report) MutantsFor(id string) []MutantResult {
	var out []MutantResult
	for _, m := range r.Mutants {
		if slices.Contains(m.Claims, id) {
			out = append(out, m)
		}
	}
	return out
}
