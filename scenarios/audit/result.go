package audit

import (
	"fmt"
	"github.com/windtunnel/windtunnel/sim/simtest"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

// ClaimResult is the audit's verdict on one claim, merged from every record
// the claim checks wrote for it.
type ClaimResult struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Verdict  string   `json:"verdict"`
	Expected string   `json:"expected"`
	Measured string   `json:"measured"`
	Bound    string   `json:"bound"`
	Seeds    int      `json:"seeds"`
	Tests    []string `json:"tests,omitempty"`
	// BoundName and BoundValue are the claims table's entry the worst
	// figure was compared with; Worst is that figure, in Unit.
	BoundName  string  `json:"bound_name,omitempty"`
	BoundValue float64 `json:"bound_value,omitempty"`
	Worst      float64 `json:"worst"`
	Unit       string  `json:"unit,omitempty"`
	// Tightness is the largest worst/bound over the claim's directed
	// checks (nil for a claim whose bound the design need not reach).
	Tightness *float64              `json:"tightness,omitempty"`
	Witness   string                `json:"witness,omitempty"`
	Artifact  string                `json:"artifact,omitempty"`
	Timeline  string                `json:"timeline,omitempty"`
	Table     string                `json:"table,omitempty"`
	Buckets   []findings.Bucket     `json:"buckets,omitempty"`
	Hist      *findings.Hist        `json:"hist,omitempty"`
	Probes    []findings.ProbeCount `json:"probes,omitempty"`
	Note      string                `json:"note,omitempty"`
}

// MutantResult says whether a mutant was caught, and how quickly.
type MutantResult struct {
	ID           string   `json:"id"`
	Kind         string   `json:"kind"` // "catalogue", "tolerance" or "lock"
	Claims       []string `json:"claims"`
	What         string   `json:"what"`
	Caught       bool     `json:"caught"`
	SeedsToCatch int      `json:"seeds_to_catch"`
	SeedBudget   int      `json:"seed_budget"`
	CaughtBy     string   `json:"caught_by,omitempty"`
	// Reproduce is the command, pasted at the module's root, that runs
	// the catch again on the mutant: its first failing seed, or the test
	// whose verdict over all its seeds failed.
	Reproduce string `json:"reproduce,omitempty"`
	Error     string `json:"error,omitempty"`
	// Shrunk is the minimal counterexample of the first failing seed, when
	// the audit shrinks (Runner.ShrinkAttempts).
	Shrunk *simtest.ShrinkSummary `json:"shrunk,omitempty"`
	// Schema says the mutant ran on its family's schema build, where it
	// can be switched off (faultswitch): its counterexample must then pass
	// without it (Shrunk.Controlled).
	Schema bool `json:"schema,omitempty"`
	// AfterControl is, for a mutant with a build of its own, whose shrink
	// could not switch it off, what its shrunk run did when replayed on
	// the code without it afterwards: "passes", or "fails: " and why (see
	// controlAfter); "" when not run.
	AfterControl string `json:"after_control,omitempty"`
	// RaceRunsCaught and RaceRunsMissed are, for a Race mutant, how many
	// of its race-detector runs (mutants.RaceRuns at each of
	// mutants.RaceCPUs) failed and how many passed. A run that passed is
	// a problem: the check's verdict would hang on the machine's timing.
	RaceRunsCaught int `json:"race_runs_caught,omitempty"`
	RaceRunsMissed int `json:"race_runs_missed,omitempty"`
	// Screened says the mutant was caught by the one-seed screen of its
	// checks (Runner.judgeMutant), on what that seed broke on its own.
	Screened bool `json:"screened,omitempty"`
}

// Catch says how a caught mutant was caught, its catching check quoted
// by quote: after how many seeds, or, for a Race mutant, in how many of
// its race-detector runs.
func (m MutantResult) Catch(quote func(string) string) string {
	if n := m.RaceRunsCaught + m.RaceRunsMissed; n > 0 {
		return fmt.Sprintf("caught in %d of %d race-detector runs by %s", m.RaceRunsCaught, n, quote(m.CaughtBy))
	}
	return fmt.Sprintf("caught after %d seed(s) by %s", m.SeedsToCatch, quote(m.CaughtBy))
}

// Survival says what a mutant that was not caught survived: its seeds,
// or, for a Race mutant, its race-detector runs.
func (m MutantResult) Survival() string {
	if m.RaceRunsMissed > 0 {
		return fmt.Sprintf("%d race-detector runs", m.RaceRunsMissed)
	}
	return fmt.Sprintf("%d seeds", m.SeedBudget)
}

// ProofResult is one bounded-exhaustive check: every schedule of a small
// configuration within a preemption bound.
type ProofResult struct {
	ID       string                `json:"id"`
	Test     string                `json:"test"`
	Verdict  string                `json:"verdict"`
	Expected string                `json:"expected"`
	Measured string                `json:"measured"`
	Proof    *findings.Proof       `json:"proof"`
	Probes   []findings.ProbeCount `json:"probes,omitempty"`
	Witness  string                `json:"witness,omitempty"`
}

// ProbeResult is one probe over every check that required it.
type ProbeResult struct {
	Name  string   `json:"name"`
	Claim string   `json:"claim"`
	What  string   `json:"what"`
	Tests []string `json:"tests"`
	Min   int64    `json:"min"`
	Seeds int      `json:"seeds"` // seeds (or schedules) that reached it
	Count int64    `json:"count"`
}

// Report is the whole audit: out/audit.json.
type Report struct {
	Commit  string         `json:"commit"`
	Seeds   int            `json:"seeds"`
	Claims  []ClaimResult  `json:"claims"`
	Proofs  []ProofResult  `json:"proofs"`
	Probes  []ProbeResult  `json:"probes"`
	Mutants []MutantResult `json:"mutants"`
	// FailedTests are the tests of the claim phase that failed, as "pkg
	// TestName" (RunClaims): a claim check's failure is its claim
	// violated; any other test's failure is a problem of its own.
	FailedTests []string `json:"failed_tests,omitempty"`
	Problems    []string `json:"problems"`
}

// Proofs separates the proof records (each its own line in the report).
// A proof is expected to hold, and to have exhausted its space.
func Proofs(recs []findings.Record) []ProofResult {
	var out []ProofResult
	for _, r := range recs {
		if r.Proof == nil {
			continue
		}
		out = append(out, ProofResult{ID: r.ID, Test: r.Test, Verdict: r.Verdict, Expected: findings.Holds, Measured: r.Measured, Proof: r.Proof, Probes: r.Probes, Witness: r.Witness})
	}
	return out
}

// ProbesOf merges the probes of every record, by name, in first-seen order.
func ProbesOf(recs []findings.Record) []ProbeResult {
	var out []ProbeResult
	index := map[string]int{}
	for _, r := range recs {
		for _, p := range r.Probes {
			i, ok := index[p.Name+"\x00"+p.Claim]
			if !ok {
				i = len(out)
				index[p.Name+"\x00"+p.Claim] = i
				out = append(out, ProbeResult{Name: p.Name, Claim: p.Claim, What: p.What, Min: p.Min})
			}
			pr := &out[i]
			pr.Min = max(pr.Min, p.Min)
			pr.Seeds += p.Seeds
			pr.Count += p.Count
			if !slices.Contains(pr.Tests, r.Test) {
				pr.Tests = append(pr.Tests, r.Test)
			}
		}
	}
	return out
}

// Expected verdicts other than "holds": deviations the authors documented,
// which the checks must reproduce.
var expectedVerdict = map[string]string{
	"OC-6": findings.KnownDeviation,
}

// Expected returns the verdict the audit expects for a claim.
func Expected(id string) string {
	if v, ok := expectedVerdict[id]; ok {
		return v
	}
	return findings.Holds
}

// severity orders verdicts for merging a claim's records: an inconclusive
// record outranks any that found nothing broken, since its claim was not
// judged in full, and yields to one that found it broken.
var severity = map[string]int{findings.Holds: 0, findings.KnownDeviation: 1, findings.Inconclusive: 2, findings.Violated: 3, findings.NotChecked: 4}

// worse reports whether record a's figure is worse than b's: larger, or
// smaller for a lower bound.
func worse(a, b *findings.Record) bool {
	if a.Value != b.Value {
		if a.BoundKind == string(claims.AtLeast) {
			return a.Value < b.Value
		}
		return a.Value > b.Value
	}
	return severity[a.Verdict] > severity[b.Verdict]
}

// Merge combines the records of every test into one result per claim, in
// the order of CLAIMS.md. A claim without records is not-checked. Of several
// records the worst verdict wins, and the measured figure is the worst
// record's: the largest figure, or the smallest for a lower bound, over the
// records of the claim's main bound (the one most of its records compare
// with). Tightness is the largest over the directed records.
func Merge(cs []claims.Claim, recs []findings.Record) []ClaimResult {
	byID := map[string][]findings.Record{}
	for _, r := range recs {
		if r.Proof != nil {
			continue // proofs are reported on their own lines
		}
		byID[r.ID] = append(byID[r.ID], r)
	}
	out := make([]ClaimResult, 0, len(cs))
	for _, c := range cs {
		res := ClaimResult{ID: c.ID, Text: c.Text, Expected: Expected(c.ID), Verdict: findings.NotChecked,
			Measured: "no check ran", Bound: "-"}
		rs := byID[c.ID]
		var worst *findings.Record
		verdict := -1
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
			if r.Tightness != nil && !r.Sampled && (res.Tightness == nil || *r.Tightness > *res.Tightness) {
				t := *r.Tightness
				res.Tightness = &t
			}
			res.Probes = append(res.Probes, r.Probes...)
		}
		main := mainBound(rs)
		for i := range rs {
			r := &rs[i]
			if r.BoundName != main {
				continue
			}
			if worst == nil || worse(r, worst) {
				worst = r
			}
			res.Buckets = mergeBuckets(res.Buckets, r.Buckets)
			if r.Hist != nil {
				if res.Hist == nil {
					h := *r.Hist
					h.Bins = slices.Clone(r.Hist.Bins)
					res.Hist = &h
				} else {
					res.Hist.Merge(r.Hist)
				}
			}
		}
		for _, r := range rs {
			if r.Timeline != "" && res.Timeline == "" {
				res.Timeline, res.Table = r.Timeline, r.Table
			}
		}
		if worst != nil {
			res.Measured, res.Bound, res.Witness, res.Artifact, res.Note = worst.Measured, worst.Bound, worst.Witness, worst.Artifact, worst.Note
			res.BoundName, res.BoundValue, res.Worst, res.Unit = worst.BoundName, worst.BoundValue, worst.Value, worst.Unit
		}
		out = append(out, res)
	}
	return out
}

// mainBound is the bound most of a claim's records compare with ("" for
// zero-wrong records), the first on a tie.
func mainBound(rs []findings.Record) string {
	count := map[string]int{}
	best, n := "", -1
	for _, r := range rs {
		count[r.BoundName]++
	}
	for _, r := range rs {
		if c := count[r.BoundName]; c > n || (c == n && r.BoundName != "" && best == "") {
			best, n = r.BoundName, c
		}
	}
	return best
}

// mergeBuckets adds distributions with the same labels; different label sets
// keep the first (records of one claim use one bucketing).
func mergeBuckets(a, b []findings.Bucket) []findings.Bucket {
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

// tightBound reports whether a claim has a bound the design may reach.
func tightBound(id string) (claims.Bound, bool) {
	for _, b := range claims.Table {
		if b.Claim == id && b.Tight {
			return b, true
		}
	}
	return claims.Bound{}, false
}

// Judge lists every reason the audit fails: a verdict other than expected,
// a claim nobody checked, a tight bound not reached, a probe never reached,
// a proof that failed or did not exhaust its space, a mutant that survived
// or could not be applied.
func Judge(r *Report) {
	r.Problems = nil
	checks := map[string]bool{}
	top := func(test string) string { t, _, _ := strings.Cut(test, "/"); return t }
	for _, c := range r.Claims {
		for _, t := range c.Tests {
			checks[top(t)] = true
		}
	}
	for _, p := range r.Proofs {
		checks[top(p.Test)] = true
	}
	for _, f := range r.FailedTests {
		_, name, _ := strings.Cut(f, " ")
		switch {
		case !strings.HasPrefix(name, "Test") || strings.Contains(name, " "):
			r.Problems = append(r.Problems, fmt.Sprintf("claim phase: %s (see claims/output.txt)", f)) // a package-level failure
		case !checks[name]:
			r.Problems = append(r.Problems, fmt.Sprintf("%s failed and is not a claim check (see claims/output.txt)", f))
		}
	}
	for _, c := range r.Claims {
		switch {
		case c.Verdict == findings.NotChecked:
			r.Problems = append(r.Problems, fmt.Sprintf("%s is not checked by any claim check", c.ID))
		case c.Verdict == findings.Inconclusive:
			// Never a pass: a check judged short of what its seeds must
			// exercise has not shown the claim holds.
			r.Problems = append(r.Problems, fmt.Sprintf("%s: verdict inconclusive, expected %s: a check's seeds broke nothing but did not exercise it as its default seeds must (%s)", c.ID, c.Expected, c.Measured))
		case c.Verdict != c.Expected:
			r.Problems = append(r.Problems, fmt.Sprintf("%s: verdict %s, expected %s (%s)", c.ID, c.Verdict, c.Expected, c.Measured))
		}
		if b, ok := tightBound(c.ID); ok && c.Verdict != findings.NotChecked {
			switch {
			case c.Tightness == nil:
				r.Problems = append(r.Problems, fmt.Sprintf("%s: its bound %s (%s) may be reached by the design, but no directed check reported how close it came", c.ID, b, b.Name))
			case *c.Tightness < findings.MinTightness:
				r.Problems = append(r.Problems, fmt.Sprintf("%s: the checks reached only %.4f of the bound %s (need %.3f)", c.ID, *c.Tightness, b, findings.MinTightness))
			}
		}
	}
	for _, p := range r.Probes {
		if p.Count < p.Min {
			r.Problems = append(r.Problems, fmt.Sprintf("probe %s (%s, %s) reached %d times, fewer than %d", p.Name, p.Claim, p.What, p.Count, p.Min))
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
			r.Problems = append(r.Problems, fmt.Sprintf("%s mutant %s (%s) survived %s: %s", m.Kind, m.ID, strings.Join(m.Claims, ", "), m.Survival(), m.What))
		case m.RaceRunsMissed > 0:
			r.Problems = append(r.Problems, fmt.Sprintf("%s mutant %s (%s) survived %d of its %d race-detector runs (caught by the others): its check sees the race only when the machine's timing lets it; %s", m.Kind, m.ID, strings.Join(m.Claims, ", "), m.RaceRunsMissed, m.RaceRunsMissed+m.RaceRunsCaught, m.What))
		case m.Shrunk == nil:
		case m.Shrunk.ControlFailed:
			r.Problems = append(r.Problems, fmt.Sprintf("mutant %s: its first failing seed (%s) fails without the mutant too, on the code the claim phase passed: %s", m.ID, m.Shrunk.Test, m.Shrunk.ShrinkFail))
		case m.Shrunk.NotReplayed:
			r.Problems = append(r.Problems, fmt.Sprintf("mutant %s: its first failing seed (%s) could not be shrunk, because a run did not replay (a determinism bug in the simulator or the test): %s", m.ID, m.Shrunk.Test, m.Shrunk.ShrinkFail))
		case strings.HasPrefix(m.AfterControl, afterFails):
			r.Problems = append(r.Problems, fmt.Sprintf("mutant %s: its shrunk counterexample (%s) fails without the mutant too, replayed after the shrink: %s", m.ID, m.Shrunk.Test, strings.TrimPrefix(m.AfterControl, afterFails)))
		case m.Schema && m.Shrunk.ShrinkFail == "" && !m.Shrunk.Controlled:
			r.Problems = append(r.Problems, fmt.Sprintf("mutant %s ran on a schema build, but its shrunk counterexample (%s) was not checked against the code without it: is the mutant switch registered (faultswitch)?", m.ID, m.Shrunk.Test))
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
