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

// Report is the whole audit: out/audit.json.
type Report struct {
	Commit   string         `json:"commit"`
	Seeds    int            `json:"seeds"`
	Claims   []ClaimResult  `json:"claims"`
	Mutants  []MutantResult `json:"mutants"`
	Problems []string       `json:"problems"`
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
