package claims

import (
	"context"
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
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// The fixtures run in a child process (WINDTUNNEL_CLAIMS_FIXTURE set): the
// tests below check the records a declared claim check files and whether
// it fails.

// toyAge is a world with one figure: an answer served ageMs after a fill,
// for every multiple of 10 ms up to limit.
func toyAge(s *sim.Sim, limit time.Duration, probe bool) (Sample, error) {
	var smp Sample
	for at := time.Duration(0); at <= limit; at += 5 * time.Millisecond {
		_ = s.Sleep(context.Background(), 5*time.Millisecond)
		smp.Observe(at.Seconds(), func() string { return fmt.Sprintf("served %v after the fill", at) })
	}
	if probe {
		s.Probe("toy/served-late")
	}
	return smp, nil
}

func TestFixtureCheck(t *testing.T) {
	mode := os.Getenv("WINDTUNNEL_CLAIMS_FIXTURE")
	if mode == "" {
		t.Skip("fixture: run by TestDeclaredChecks in a child process")
	}
	limit := map[string]time.Duration{"holds": 995 * time.Millisecond, "loose": 500 * time.Millisecond,
		"broken": time.Second, "noprobe": 995 * time.Millisecond}[mode]
	Run(t, Check[Sample]{
		Claim: "OC-2", Bound: "open set max age", Options: simtest.Options{Seeds: 3},
		Fly: func(s *sim.Sim, b Bound) (Sample, error) {
			if b.Duration() != time.Second {
				return Sample{}, fmt.Errorf("the bound did not come from the table: %v", b)
			}
			return toyAge(s, limit, mode != "noprobe")
		},
		Measured: func(o Outcome) string { return "worst " + o.WorstText() },
		Probes:   []Probe{{Name: "toy/served-late", What: "an answer served late", Min: 3}},
	})
}

func fixtureRecords(t *testing.T, mode string) ([]findings.Record, string, error) {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestFixtureCheck$", "-test.v")
	file := filepath.Join(dir, "claims.jsonl")
	cmd.Env = append(os.Environ(), "WINDTUNNEL_CLAIMS_FIXTURE="+mode, "WINDTUNNEL_CLAIMS="+file, "WINDTUNNEL_SIM_RECORD=false", "WINDTUNNEL_SIM_OUT="+dir)
	cmd.Dir = dir
	out, runErr := cmd.CombinedOutput()
	recs, err := findings.Read(file)
	require.NoError(t, err, string(out))
	require.Len(t, recs, 1, string(out))
	return recs, string(out), runErr
}

func TestDeclaredChecks(t *testing.T) {
	recs, out, err := fixtureRecords(t, "holds")
	require.NoError(t, err, out)
	r := recs[0]
	assert.Equal(t, findings.Holds, r.Verdict)
	assert.Equal(t, "worst 995ms", r.Measured, "computed from the measured figure")
	assert.Equal(t, "< 1s", r.Bound)
	assert.Equal(t, 1.0, r.BoundValue)
	require.NotNil(t, r.Tightness)
	assert.InDelta(t, 0.995, *r.Tightness, 1e-9)
	assert.Equal(t, 3, r.Seeds)
	require.Len(t, r.Probes, 1)
	assert.Equal(t, int64(3), r.Probes[0].Count)
	assert.Equal(t, 3, r.Probes[0].Seeds)
	require.NotNil(t, r.Hist)
	assert.Equal(t, int64(3*200), r.Hist.Total(), "one value per observation, each seed once")
	assert.True(t, strings.HasPrefix(r.Witness, "seed 0x"), r.Witness)
	_ = out

	// A check that stops short of its bound cannot tell it from a wider one.
	recs, out, err = fixtureRecords(t, "loose")
	require.Error(t, err, out)
	assert.Equal(t, findings.Violated, recs[0].Verdict)
	assert.Contains(t, out, "reached only 0.5000 of its bound")

	// A figure at the bound of a half-open window is outside it.
	recs, out, err = fixtureRecords(t, "broken")
	require.Error(t, err, out)
	assert.Equal(t, findings.Violated, recs[0].Verdict)
	assert.Contains(t, out, "worst 1s breaks the bound < 1s")

	// Seeds that never reach a required probe fail the check.
	recs, out, err = fixtureRecords(t, "noprobe")
	require.Error(t, err, out)
	assert.Equal(t, findings.Violated, recs[0].Verdict)
	assert.Contains(t, out, "probe toy/served-late (an answer served late) reached 0 times in 3 seeds")
}

// TestProbeMinKeepsTheDefaultRate: fewer seeds than the default need the
// same rate of a probe, never zero; more seeds still need the declared Min.
func TestProbeMinKeepsTheDefaultRate(t *testing.T) {
	for _, c := range []struct {
		min        int64
		seeds, def int
		want       int64
	}{
		{10, 20, 20, 10},
		{10, 50, 20, 10},
		{10, 2, 20, 1},
		{10, 5, 20, 3},
		{5, 2, 10, 1},
		{1, 1, 100, 1},
		{0, 2, 20, 0},
		{7, 3, 0, 7},
	} {
		assert.Equal(t, c.want, probeMin(c.min, c.seeds, c.def), "min %d at %d of %d seeds", c.min, c.seeds, c.def)
	}
}

// TestMoreWrongThanObservedIsABrokenTally: a check that counts two wrong
// series in one observed step has a tally no verdict can rest on.
func TestMoreWrongThanObservedIsABrokenTally(t *testing.T) {
	o := Outcome{Claim: "X-1", Seeds: 1, Wrong: 2, Of: 1, Witness: "w"}
	assert.Equal(t, findings.Violated, judge(&o, true, false))
	assert.Contains(t, strings.Join(o.Problems, "; "), "counted 2 wrong of only 1 observations")
	ok := Outcome{Claim: "X-1", Seeds: 1, Wrong: 0, Of: 5}
	assert.Equal(t, findings.Holds, judge(&ok, true, false))
}

// TestScreeningJudgesOnlyWhatASeedBreaksAlone: a screening check (the
// audit's one-seed pass over a mutant) still fails on a wrong observation
// and on a figure beyond the bound, and no longer on the rates over the
// seeds that one seed cannot meet: the bound's tightness, a probe's count,
// a bound nothing was compared with.
func TestScreeningJudgesOnlyWhatASeedBreaksAlone(t *testing.T) {
	b := Bound{Kind: AtMost, Value: 1, Unit: Seconds, Tight: true}
	rates := func() Outcome {
		return Outcome{Claim: "X-1", Seeds: 1, Bound: &b, Seen: true, Worst: 0.5, Tightness: 0.5,
			Probes: []findings.ProbeCount{{Name: "p", Min: 1, Count: 0}}}
	}
	full := rates()
	assert.Equal(t, findings.Violated, judge(&full, true, false))
	assert.Len(t, full.Problems, 2, "the tightness and the probe: %v", full.Problems)
	screened := rates()
	assert.Equal(t, findings.Holds, judge(&screened, true, true), "%v", screened.Problems)
	unseen := Outcome{Claim: "X-1", Seeds: 1, Bound: &b}
	assert.Equal(t, findings.Violated, judge(&unseen, true, false))
	unseen = Outcome{Claim: "X-1", Seeds: 1, Bound: &b}
	assert.Equal(t, findings.Holds, judge(&unseen, true, true))

	beyond := Outcome{Claim: "X-1", Seeds: 1, Bound: &b, Seen: true, Worst: 1.5, Tightness: 1.5, Witness: "w"}
	assert.Equal(t, findings.Violated, judge(&beyond, true, true), "a figure beyond the bound is one seed's")
	wrong := Outcome{Claim: "X-1", Seeds: 1, Wrong: 1, Of: 3, Witness: "w"}
	assert.Equal(t, findings.Violated, judge(&wrong, true, true), "a wrong observation is one seed's")
	failed := Outcome{Claim: "X-1", Seeds: 1, Failed: 1, FirstFailure: "seed 0x1: boom"}
	assert.Equal(t, findings.Violated, judge(&failed, true, true), "a failed seed is its own")
}

// TestSampleDefaultsToTheIdentityOnlyForSample: a Check[Sample] may leave
// Sample out; a check of any other result type without one is refused,
// naming the type, since Run would have no figure to judge.
func TestSampleDefaultsToTheIdentityOnlyForSample(t *testing.T) {
	id, err := sampler[Sample](nil)
	require.NoError(t, err)
	assert.Equal(t, Sample{Worst: 2, Seen: true}, id(Sample{Worst: 2, Seen: true}))
	_, err = sampler[time.Duration](nil)
	assert.ErrorContains(t, err, "Check[time.Duration] has no Sample func")
	own, err := sampler(func(d time.Duration) Sample { return Sample{Worst: d.Seconds()} })
	require.NoError(t, err)
	assert.Equal(t, 1.5, own(1500*time.Millisecond).Worst)
}

// TestNotesJoin: a fixed note and one computed from the outcome both reach
// the record, either alone as it is.
func TestNotesJoin(t *testing.T) {
	assert.Equal(t, "fixed; computed", joinNotes("fixed", "computed"))
	assert.Equal(t, "computed", joinNotes("", "computed"))
	assert.Equal(t, "fixed", joinNotes("fixed", ""))
}
