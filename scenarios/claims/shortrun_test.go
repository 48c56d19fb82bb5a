package claims

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/claims/findings"
	"github.com/windtunnel/windtunnel/scenarios/claims/shard"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// A run of fewer seeds than a check's default that breaks nothing but
// exercises the check less than its default seeds must is inconclusive,
// never violated; at the default seeds, or for the audit, the same
// shortfall is a violation.

// TestAShortRunThatExercisesTooLittleIsInconclusive: the requirements on
// exercise (a probe's count, a tight bound's tightness, anything observed to
// compare with the bound) make a short run inconclusive and a run at the
// default seeds violated; what a seed breaks makes either violated.
func TestAShortRunThatExercisesTooLittleIsInconclusive(t *testing.T) {
	b := Bound{Kind: AtMost, Value: 1, Unit: Seconds, Tight: true, Strict: true}
	probe := func(seeds, rateSeeds int) Outcome {
		return Outcome{Claim: "X-1", Seeds: seeds, rateSeeds: rateSeeds, Bound: &b, Seen: true, Worst: 0.999, Tightness: 0.999,
			Probes: []findings.ProbeCount{{Name: "p", What: "a rare thing", Min: 3, Count: 2}}}
	}
	short := probe(5, 200)
	assert.Equal(t, findings.Inconclusive, judge(&short, true, false))
	assert.Empty(t, short.Problems)
	require.Len(t, short.Unexercised, 1)
	assert.Contains(t, short.Unexercised[0], "probe p (a rare thing) reached 2 times in 5 seeds, fewer than 3")
	assert.Contains(t, short.Unexercised[0], "-sim.seeds=200 judges it")
	full := probe(200, 200)
	assert.Equal(t, findings.Violated, judge(&full, true, false))
	assert.Empty(t, full.Unexercised)
	assert.Contains(t, strings.Join(full.Problems, "; "), "reached 2 times in 200 seeds, fewer than 3")
	audit := probe(5, 0) // Run judges a run filing records for the audit in full
	assert.Equal(t, findings.Violated, judge(&audit, true, false))
	screened := probe(1, 200)
	assert.Equal(t, findings.Holds, judge(&screened, true, true), "the screen does not judge rates at all")
	reached := probe(5, 200)
	reached.Probes[0].Count = 3
	assert.Equal(t, findings.Holds, judge(&reached, true, false), "%v %v", reached.Problems, reached.Unexercised)

	loose := Outcome{Claim: "X-1", Seeds: 5, rateSeeds: 20, Bound: &b, Seen: true, Worst: 0.5, Tightness: 0.5}
	assert.Equal(t, findings.Inconclusive, judge(&loose, true, false))
	assert.Contains(t, strings.Join(loose.Unexercised, "; "), "reached only 0.5000 of its bound < 1s")
	loose = Outcome{Claim: "X-1", Seeds: 20, rateSeeds: 20, Bound: &b, Seen: true, Worst: 0.5, Tightness: 0.5}
	assert.Equal(t, findings.Violated, judge(&loose, true, false))

	unseen := Outcome{Claim: "X-1", Seeds: 5, rateSeeds: 20, Bound: &b}
	assert.Equal(t, findings.Inconclusive, judge(&unseen, true, false))
	assert.Contains(t, strings.Join(unseen.Unexercised, "; "), "no seed of 5 observed anything to compare with the bound < 1s")
	unseen = Outcome{Claim: "X-1", Seeds: 20, rateSeeds: 20, Bound: &b}
	assert.Equal(t, findings.Violated, judge(&unseen, true, false))

	// What a seed breaks on its own is a violation however few the seeds.
	for name, o := range map[string]Outcome{ //windtunnel:unordered independent cases
		"beyond the bound":    {Claim: "X-1", Seeds: 5, rateSeeds: 20, Bound: &b, Seen: true, Worst: 1, Tightness: 1, Witness: "w"},
		"a wrong one":         {Claim: "X-1", Seeds: 5, rateSeeds: 20, Wrong: 1, Of: 3, Witness: "w"},
		"wrong, none seen":    {Claim: "X-1", Seeds: 5, rateSeeds: 20, Bound: &b, Wrong: 1, Of: 1, Witness: "w"},
		"a failed seed":       {Claim: "X-1", Seeds: 5, rateSeeds: 20, Failed: 1, FirstFailure: "seed 0x1: boom"},
		"failed, probe unmet": {Claim: "X-1", Seeds: 5, rateSeeds: 20, Failed: 1, FirstFailure: "seed 0x1: boom", Probes: []findings.ProbeCount{{Name: "p", Min: 1}}},
	} {
		assert.Equal(t, findings.Violated, judge(&o, true, false), name)
	}

	// A check's own Judge decides between holds, a documented deviation and
	// violated; a short run that exercised too little is inconclusive
	// either way it found nothing broken.
	o := Outcome{Unexercised: []string{"probe p reached 0 times"}}
	assert.Equal(t, findings.Inconclusive, unexercised(findings.KnownDeviation, &o))
	assert.Equal(t, findings.Inconclusive, unexercised(findings.Holds, &o))
	assert.Equal(t, findings.Violated, unexercised(findings.Violated, &o))
	assert.Equal(t, findings.KnownDeviation, unexercised(findings.KnownDeviation, &Outcome{}))
}

// TestProbeCountsScaleBeforeTheyJudge: merge scales a probe's Min to the
// seeds that ran, then judge holds the run to it: 120 over a default of
// 200 seeds is 3 at 5 seeds, where 2 reaches are inconclusive, and 120 at
// 200 seeds, where 2 are a violation.
func TestProbeCountsScaleBeforeTheyJudge(t *testing.T) {
	probes := []Probe{{Name: "p", What: "a rare thing", Min: 120}}
	run := func(n int) Outcome {
		seeds := make([]shard.Seed[Sample], n)
		for i := range seeds {
			seeds[i] = shard.Seed[Sample]{Seed: uint64(i + 1), Index: i, Sample: Sample{Of: 1}}
			if i < 2 {
				seeds[i].Probes = map[string]int64{"p": 1}
			}
		}
		var o Outcome
		merge(&o, "X-1", probes, 200, seeds)
		return o
	}
	short := run(5)
	assert.Equal(t, int64(3), short.Probes[0].Min)
	assert.Equal(t, findings.Inconclusive, judge(&short, true, false))
	full := run(200)
	assert.Equal(t, int64(120), full.Probes[0].Min)
	assert.Equal(t, findings.Violated, judge(&full, true, false))
}

// reachesProbe says whether a seed reaches the fixture's probe: the test's
// first two regular seeds do, however many run, and in any order.
func reachesProbe(t *testing.T, s *sim.Sim) bool {
	return s.Seed() == simtest.SeedAt(t.Name(), 0) || s.Seed() == simtest.SeedAt(t.Name(), 1)
}

func TestFixtureShortRun(t *testing.T) {
	mode := os.Getenv("WINDTUNNEL_CLAIMS_SHORT_FIXTURE")
	if mode == "" {
		t.Skip("fixture: run by TestShortRunsAreInconclusiveAndPass in a child process")
	}
	claim, limit := "OC-2", 995*time.Millisecond
	switch mode {
	case "unknown-claim":
		claim = "MY-1"
	case "broken":
		limit = time.Second
	}
	Run(t, Check[Sample]{
		Claim: claim, Bound: "open set max age", Options: simtest.Options{Seeds: 200},
		Fly: func(s *sim.Sim, b Bound) (Sample, error) {
			return toyAge(s, limit, reachesProbe(t, s))
		},
		Measured: func(o Outcome) string { return fmt.Sprintf("%d observations", o.Of) },
		Probes:   []Probe{{Name: "toy/served-late", What: "an answer served late", Min: 120}},
	})
}

// shortRun runs TestFixtureShortRun over seeds seeds, filing its records in
// claimsFile ("" for none, as a go test run outside the audit).
func shortRun(t *testing.T, mode string, seeds int, claimsFile string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestFixtureShortRun$", "-test.v")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WINDTUNNEL_CLAIMS") && !strings.HasPrefix(kv, "WINDTUNNEL_SIM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "WINDTUNNEL_CLAIMS_SHORT_FIXTURE="+mode, fmt.Sprintf("WINDTUNNEL_SIM_SEEDS=%d", seeds),
		"WINDTUNNEL_SIM_RECORD=false", "WINDTUNNEL_SIM_OUT="+dir)
	if claimsFile != "" {
		cmd.Env = append(cmd.Env, "WINDTUNNEL_CLAIMS="+claimsFile)
	}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestShortRunsAreInconclusiveAndPass: `go test -sim.seeds=5` on a check
// whose probe its 200 default seeds must reach 120 times passes with the
// claim inconclusive when only 2 seeds reach it, naming the probe, its count
// and the seeds that judge it; at 200 seeds, or for the audit, it fails.
func TestShortRunsAreInconclusiveAndPass(t *testing.T) {
	out, err := shortRun(t, "probe", 5, "")
	require.NoError(t, err, out)
	assert.Contains(t, out, "claim OC-2: inconclusive: measured 1000 observations (bound < 1s) over 5 seeds")
	assert.Contains(t, out, "OC-2: inconclusive, not violated: probe toy/served-late (an answer served late) reached 2 times in 5 seeds, fewer than 3")
	assert.Contains(t, out, "-sim.seeds=200 judges it")
	assert.NotContains(t, out, "claim OC-2: violated")
	assert.NotContains(t, out, "--- FAIL")

	out, err = shortRun(t, "probe", 200, "")
	require.Error(t, err, out)
	assert.Contains(t, out, "claim OC-2: violated")
	assert.Contains(t, out, "probe toy/served-late (an answer served late) reached 2 times in 200 seeds, fewer than 120")
	assert.NotContains(t, out, "claim OC-2: inconclusive")
	assert.NotContains(t, out, "judges it")

	// The audit files records and judges any seed count in full.
	file := filepath.Join(t.TempDir(), "claims.jsonl")
	out, err = shortRun(t, "probe", 5, file)
	require.Error(t, err, out)
	recs, rerr := findings.Read(file)
	require.NoError(t, rerr, out)
	require.Len(t, recs, 1, out)
	assert.Equal(t, findings.Violated, recs[0].Verdict)
	assert.Contains(t, out, "reached 2 times in 5 seeds, fewer than 3")

	// A figure beyond the bound is a violation at any seed count.
	out, err = shortRun(t, "broken", 5, "")
	require.Error(t, err, out)
	assert.Contains(t, out, "worst 1s breaks the bound < 1s")
	assert.Contains(t, out, "claim OC-2: violated")
}

// TestRunRefusesAClaimCLAIMSmdDoesNotHave: a check of a claim nobody made
// fails before it flies a seed, naming the claim and the known ones.
func TestRunRefusesAClaimCLAIMSmdDoesNotHave(t *testing.T) {
	out, err := shortRun(t, "unknown-claim", 5, "")
	require.Error(t, err, out)
	assert.Contains(t, out, "claims.Run: claim MY-1 is not in CLAIMS.md (known: OC-1, ")
	assert.NotContains(t, out, "seeds (random)", "no seed flew")
	assert.NotContains(t, out, "claim MY-1: holds")

	out, err = shortRun(t, "probe", 5, "")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "is not in CLAIMS.md")
	assert.NoError(t, knownClaim("OC-9"))
	assert.ErrorContains(t, knownClaim(""), "names no claim")
}
