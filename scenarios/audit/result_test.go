package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
)

var sample = []claims.Claim{{ID: "OC-1", Text: "union"}, {ID: "OC-6", Text: "debt"}, {ID: "OC-9", Text: "metrics"}}

func TestMergeKeepsTheWorstAndFlagsGaps(t *testing.T) {
	recs := []findings.Record{
		{ID: "OC-1", Test: "TestOC1_Private", Verdict: findings.Holds, Measured: "0.7s", Bound: "≤ 1s", Value: 0.7, Seeds: 10,
			Buckets: []findings.Bucket{{Label: "<1s", Count: 5}, {Label: "≥1s", Count: 0}}},
		{ID: "OC-1", Test: "TestOC1_Deleted", Verdict: findings.Holds, Measured: "0.9s", Bound: "≤ 1s", Value: 0.9, Seeds: 10, Witness: "read 7",
			Buckets: []findings.Bucket{{Label: "<1s", Count: 3}, {Label: "≥1s", Count: 0}}},
		{ID: "OC-6", Test: "TestOC6_Lin", Verdict: findings.KnownDeviation, Measured: "found in 3 of 10 seeds", Seeds: 10},
	}
	got := Merge(sample, recs)
	require.Len(t, got, 3)
	assert.Equal(t, findings.Holds, got[0].Verdict)
	assert.Equal(t, "0.9s", got[0].Measured)
	assert.Equal(t, "read 7", got[0].Witness)
	assert.Equal(t, 20, got[0].Seeds)
	assert.Equal(t, []string{"TestOC1_Private", "TestOC1_Deleted"}, got[0].Tests)
	assert.Equal(t, []findings.Bucket{{Label: "<1s", Count: 8}, {Label: "≥1s", Count: 0}}, got[0].Buckets)
	assert.Equal(t, findings.KnownDeviation, got[1].Verdict)
	assert.Equal(t, findings.KnownDeviation, got[1].Expected)
	assert.Equal(t, findings.NotChecked, got[2].Verdict)

	rep := &Report{Claims: got, Mutants: []MutantResult{
		{ID: "m1", Claims: []string{"OC-1"}, Caught: true, SeedsToCatch: 3, CaughtBy: "TestOC1_Private"},
		{ID: "m2", Claims: []string{"OC-1"}, What: "no age check", SeedBudget: 50},
		{ID: "m3", Claims: []string{"OC-6"}, Error: "snippet occurs 0 times"},
		// Race mutants: caught in every run; caught in some; in none.
		{ID: "r1", Claims: []string{"OC-1"}, Caught: true, SeedsToCatch: 1, CaughtBy: "TestOC1_RaceFree", RaceRunsCaught: 6},
		{ID: "r2", Claims: []string{"OC-1"}, Caught: true, SeedsToCatch: 1, CaughtBy: "TestOC1_RaceFree", RaceRunsCaught: 4, RaceRunsMissed: 2},
		{ID: "r3", Claims: []string{"OC-1"}, SeedBudget: 50, RaceRunsMissed: 6},
	}}
	Judge(rep)
	assert.Len(t, rep.Problems, 5, "%v", rep.Problems)
	assert.Contains(t, rep.Problems[0], "OC-9 is not checked")
	assert.Contains(t, rep.Problems[1], "m2")
	assert.Contains(t, rep.Problems[2], "m3")
	assert.Contains(t, rep.Problems[3], "r2 (OC-1) survived 2 of its 6 race-detector runs")
	assert.Contains(t, rep.Problems[4], "r3 (OC-1) survived 6 race-detector runs")

	var table bytes.Buffer
	require.NoError(t, WriteTable(&table, rep))
	assert.Contains(t, table.String(), "m1: caught@3")
	assert.Contains(t, table.String(), "m2: SURVIVED 50")
	assert.Contains(t, table.String(), "not-checked (expected holds)")
	assert.Contains(t, table.String(), "r1: caught in 6/6 runs")
	assert.Contains(t, table.String(), "r2: caught in 4/6 runs")
	assert.Contains(t, table.String(), "r3: SURVIVED 6 runs")
	assert.Contains(t, table.String(), "5 problem(s)")

	dir := t.TempDir()
	require.NoError(t, WriteFiles(dir, rep))
	md, err := os.ReadFile(filepath.Join(dir, "AUDIT.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "![OC-1 distribution](charts/OC-1.svg)")
	assert.Contains(t, string(md), "caught in 6 of 6 race-detector runs by `TestOC1_RaceFree`")
	assert.Contains(t, string(md), "**survived** 6 race-detector runs")
	svg, err := os.ReadFile(filepath.Join(dir, "charts", "OC-1.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	js, err := os.ReadFile(filepath.Join(dir, "audit.json"))
	require.NoError(t, err)
	assert.Contains(t, string(js), `"seeds_to_catch": 3`)
	assert.Contains(t, string(js), `"verdict": "not-checked"`)
}

func TestAViolatedClaimIsAProblem(t *testing.T) {
	got := Merge(sample[:1], []findings.Record{
		{ID: "OC-1", Verdict: findings.Holds, Value: 0.5},
		{ID: "OC-1", Verdict: findings.Violated, Value: 1.4, Measured: "1.4s"},
	})
	rep := &Report{Claims: got}
	Judge(rep)
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0], "OC-1: verdict violated, expected holds (1.4s)")
}

func TestProofsAreTheirOwnLines(t *testing.T) {
	recs := []findings.Record{
		{ID: "OC-1", Verdict: findings.Holds, Value: 0.5, Measured: "0.5s"},
		{ID: "OC-1", Test: "TestOC1_Proof", Verdict: findings.Holds, Measured: "all schedules", Proof: &findings.Proof{Config: "1 pod", MaxPreemptions: 2, Explored: 40, Exhausted: true}},
		{ID: "OC-1", Test: "TestOC1_Proof2", Verdict: findings.Holds, Proof: &findings.Proof{Config: "bigger", MaxPreemptions: 2, Explored: 9, Exhausted: false}},
	}
	rep := &Report{Claims: Merge(sample[:1], recs), Proofs: Proofs(recs)}
	assert.Equal(t, "0.5s", rep.Claims[0].Measured, "proofs do not merge into the sampled verdict")
	require.Len(t, rep.Proofs, 2)
	Judge(rep)
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0], "was not exhausted")
	var table bytes.Buffer
	require.NoError(t, WriteTable(&table, rep))
	assert.Contains(t, table.String(), "PROOFS")
}

// A tight bound must be reached by a directed check; sampled records do
// not count, and the largest tightness of the directed ones is the claim's.
func TestTightBoundsMustBeReached(t *testing.T) {
	cs := []claims.Claim{{ID: "OC-2", Text: "age"}}
	low, high := 0.83, 0.9999
	recs := []findings.Record{
		{ID: "OC-2", Test: "TestOC2_Churn", Verdict: findings.Holds, Value: 0.83, BoundName: "open set max age", Tightness: &high, Sampled: true},
		{ID: "OC-2", Test: "TestOC2_Race", Verdict: findings.Holds, Value: 0.83, BoundName: "open set max age", Tightness: &low},
	}
	rep := &Report{Claims: Merge(cs, recs)}
	Judge(rep)
	require.Len(t, rep.Problems, 1, "%v", rep.Problems)
	assert.Contains(t, rep.Problems[0], "reached only 0.8300 of the bound")
	recs[1].Tightness = &high
	rep = &Report{Claims: Merge(cs, recs)}
	Judge(rep)
	assert.Empty(t, rep.Problems)
	rep = &Report{Claims: Merge(cs, recs[:1])}
	Judge(rep)
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0], "no directed check reported")
}

// Of several records of a lower bound, the worst is the smallest figure.
func TestTheWorstOfALowerBoundIsTheSmallest(t *testing.T) {
	cs := []claims.Claim{{ID: "OC-8", Text: "load"}}
	got := Merge(cs, []findings.Record{
		{ID: "OC-8", Verdict: findings.Holds, Value: 40, BoundName: "row reduction", BoundKind: "at-least", Measured: "40x"},
		{ID: "OC-8", Verdict: findings.Holds, Value: 25, BoundName: "row reduction", BoundKind: "at-least", Measured: "25x"},
	})
	assert.Equal(t, "25x", got[0].Measured)
}

// Every probe a check required must have been reached.
func TestUnreachedProbesAreProblems(t *testing.T) {
	recs := []findings.Record{
		{ID: "MS-3", Test: "TestMS3_A", Verdict: findings.Holds, Probes: []findings.ProbeCount{{Name: "p", Claim: "MS-3", Min: 2, Seeds: 1, Count: 1}}},
		{ID: "MS-3", Test: "TestMS3_B", Verdict: findings.Holds, Probes: []findings.ProbeCount{{Name: "p", Claim: "MS-3", Min: 2, Seeds: 0, Count: 0}}},
	}
	ps := ProbesOf(recs)
	require.Len(t, ps, 1)
	assert.Equal(t, int64(1), ps[0].Count)
	assert.Equal(t, []string{"TestMS3_A", "TestMS3_B"}, ps[0].Tests)
	rep := &Report{Probes: ps}
	Judge(rep)
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0], "probe p")
	var table bytes.Buffer
	require.NoError(t, WriteTable(&table, rep))
	assert.Contains(t, table.String(), "PROBES")
}

// A window chart has a linear axis to 1.2 × the bound, the bound and the
// worst observation marked.
func TestWindowChartsMarkTheBoundAndTheWorst(t *testing.T) {
	c := ClaimResult{ID: "OC-2", BoundName: "open set max age", Bound: "< 1s", Hist: findings.NewHist([]float64{0.83, 0.999}, 1, 0.999)}
	svg := windowSVG(c)
	assert.Contains(t, svg, "bound 1s")
	assert.Contains(t, svg, "worst 0.999s")
}
