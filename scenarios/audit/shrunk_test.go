package audit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/sim/shrink"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

func TestShrinkStatsAreComputedFromTheSummaries(t *testing.T) {
	ms := []MutantResult{
		{ID: "small", Caught: true, Shrunk: &simtest.ShrinkSummary{After: shrink.Stats{Operations: 2, Preemptions: 1}, WallMs: 300}},
		{ID: "big", Caught: true, Shrunk: &simtest.ShrinkSummary{After: shrink.Stats{Operations: 40, Preemptions: 2}, WallMs: 900}},
		{ID: "failed", Caught: true, Shrunk: &simtest.ShrinkSummary{ShrinkFail: "the failure does not reproduce"}},
		{ID: "none", Caught: true, CaughtBy: "TestOC6_X (its verdict over all seeds)"},
		{ID: "survivor"},
	}
	st := Shrinks(ms)
	assert.Equal(t, 2, st.Shrunk)
	assert.Equal(t, 1, st.MetGoal)
	assert.Equal(t, 1, st.Failed)
	assert.Equal(t, int64(900), st.Median.Milliseconds(), "median of 300 and 900 by the upper middle")
	assert.Equal(t, []string{"big: 40 operations, 2 preemptions", "failed: not shrunk: the failure does not reproduce"}, st.Missed)
	assert.Equal(t, []string{"none (caught by TestOC6_X (its verdict over all seeds))"}, st.Unshrunk, "a caught mutant without a shrink is counted, a survivor is not")
}

func TestAuditMarkdownLinksCounterexamples(t *testing.T) {
	dir := t.TempDir()
	sum := &simtest.ShrinkSummary{Test: "TestOC2_X/seed=0x1", Before: shrink.Stats{Operations: 800, Preemptions: 90, Steps: 9000},
		After: shrink.Stats{Operations: 3, Preemptions: 1, Steps: 40}, Attempts: 120, WallMs: 1500,
		Table: filepath.Join(dir, "mutants/m/artifacts/x/shrunk/interleaving.txt"), Timeline: filepath.Join(dir, "mutants/m/artifacts/x/shrunk/timeline.html"),
		Command: "go test ./scenarios/oc -run X -sim.replay=/abs/replay.txt -v"}
	r := &Report{Mutants: []MutantResult{{ID: "oc-m", Claims: []string{"OC-2"}, Caught: true, Shrunk: sum}}}
	require.NoError(t, WriteFiles(dir, r))
	md, err := os.ReadFile(filepath.Join(dir, "AUDIT.md"))
	require.NoError(t, err)
	text := string(md)
	assert.Contains(t, text, "## Counterexamples")
	assert.Contains(t, text, "1 shrunk, 1 of them to at most 10 operations and 3 preemptions")
	assert.Contains(t, text, "| `oc-m` | 3 ← 800 |")
	assert.Contains(t, text, "[timeline](mutants/m/artifacts/x/shrunk/timeline.html)", "links are relative to AUDIT.md")
	assert.True(t, strings.Contains(text, "-sim.replay=/abs/replay.txt"))
}

func TestReadShrunkPrefersTheCatchingTest(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"TestA_seed=0x1", "TestB_seed=0x2"} {
		d := filepath.Join(dir, name, "shrunk")
		require.NoError(t, os.MkdirAll(d, 0o755))
		test := strings.ReplaceAll(strings.TrimSuffix(name, "_seed=0x1"), "_seed=0x2", "")
		require.NoError(t, os.WriteFile(filepath.Join(d, "shrink.json"), []byte(`{"test":"`+test+`/seed=x","attempts":7}`), 0o644))
	}
	got := readShrunk(dir, "TestB (seed 0x2: check: ...)")
	require.NotNil(t, got)
	assert.Equal(t, "TestB/seed=x", got.Test)
	assert.Nil(t, readShrunk(filepath.Join(dir, "absent"), ""))
}

// A counterexample checked against the code without its mutant says so in
// the stats and AUDIT.md; one of a mutant with a build of its own is named
// as not checked.
func TestCounterexamplesSayWhetherTheyPassWithoutTheMutant(t *testing.T) {
	dir := t.TempDir()
	ms := []MutantResult{
		{ID: "checked", Caught: true, Schema: true, Shrunk: &simtest.ShrinkSummary{Test: "TestA/seed=0x1", Controlled: true, Refused: 7, After: shrink.Stats{Operations: 2}}},
		{ID: "own-build", Caught: true, Shrunk: &simtest.ShrinkSummary{Test: "TestB/seed=0x2", After: shrink.Stats{Operations: 1}}},
		{ID: "replayed", Caught: true, AfterControl: afterPasses, Shrunk: &simtest.ShrinkSummary{Test: "TestC/seed=0x3", After: shrink.Stats{Operations: 1}}},
		{ID: "bogus", Caught: true, AfterControl: afterFails + "check: X-1: 0 of 10", Shrunk: &simtest.ShrinkSummary{Test: "TestD/seed=0x4", After: shrink.Stats{Operations: 1}}},
	}
	st := Shrinks(ms)
	assert.Equal(t, 2, st.Controlled)
	assert.Equal(t, 7, st.Refused)
	assert.Equal(t, []string{"replayed"}, st.After)
	assert.Equal(t, []string{"own-build", "bogus"}, st.Uncontrolled)
	require.NoError(t, WriteFiles(dir, &Report{Mutants: ms}))
	md, err := os.ReadFile(filepath.Join(dir, "AUDIT.md"))
	require.NoError(t, err)
	text := string(md)
	assert.Contains(t, text, "2 of the 4 pass on the code without their mutant")
	assert.Contains(t, text, "7 smaller failing runs were refused")
	assert.Contains(t, text, "Of those, replayed (a build of its own")
	assert.Contains(t, text, "Not checked: own-build, bogus.")
	assert.Contains(t, text, "| `checked` | 2 ← 0 | 0 ← 0 | 0 ← 0 | 0 ← 0 | yes |")
	assert.Contains(t, text, "| `own-build` | 1 ← 0 | 0 ← 0 | 0 ← 0 | 0 ← 0 | not checked |")
	assert.Contains(t, text, "| `replayed` | 1 ← 0 | 0 ← 0 | 0 ← 0 | 0 ← 0 | yes (replayed after the shrink) |")
	assert.Contains(t, text, "| `bogus` | 1 ← 0 | 0 ← 0 | 0 ← 0 | 0 ← 0 | **no**: check: X-1: 0 of 10 |")
}

// A schema-built mutant's counterexample must have been checked without
// the mutant, and a first failing seed that fails without it too is a
// defect of the check: both are problems.
func TestUncheckedOrFailingControlsAreProblems(t *testing.T) {
	r := &Report{Mutants: []MutantResult{
		{ID: "ok", Kind: "catalogue", Caught: true, Schema: true, Shrunk: &simtest.ShrinkSummary{Test: "TestA/seed=0x1", Controlled: true}},
		{ID: "own-build", Kind: "catalogue", Caught: true, Shrunk: &simtest.ShrinkSummary{Test: "TestB/seed=0x2"}},
		{ID: "unswitched", Kind: "catalogue", Caught: true, Schema: true, Shrunk: &simtest.ShrinkSummary{Test: "TestC/seed=0x3"}},
		{ID: "check-fails-anyway", Kind: "catalogue", Caught: true, Schema: true, Shrunk: &simtest.ShrinkSummary{Test: "TestD/seed=0x4",
			ShrinkFail: "the run fails without the fault under test too (failed with check: X-1: ...)", ControlFailed: true}},
		{ID: "replay-fails", Kind: "catalogue", Caught: true, AfterControl: afterFails + "check: X-1: 0 of 10", Shrunk: &simtest.ShrinkSummary{Test: "TestE/seed=0x5"}},
		{ID: "not-replayed", Kind: "catalogue", Caught: true, Schema: true, Shrunk: &simtest.ShrinkSummary{Test: "TestF/seed=0x6",
			ShrinkFail: "a run does not replay: the shrunk run does not replay its failure: ...", NotReplayed: true}},
	}}
	Judge(r)
	require.Len(t, r.Problems, 4, "%q", r.Problems)
	assert.Contains(t, r.Problems[0], "mutant unswitched ran on a schema build, but its shrunk counterexample (TestC/seed=0x3) was not checked")
	assert.Contains(t, r.Problems[1], "mutant check-fails-anyway: its first failing seed (TestD/seed=0x4) fails without the mutant too")
	assert.Contains(t, r.Problems[2], "mutant replay-fails: its shrunk counterexample (TestE/seed=0x5) fails without the mutant too, replayed after the shrink: check: X-1: 0 of 10")
	assert.Contains(t, r.Problems[3], "mutant not-replayed: its first failing seed (TestF/seed=0x6) could not be shrunk, because a run did not replay")
}

// controlAfter runs the family's binary without the mutant on the shrunk
// replay, guided, and reads the seed's subtest line: a pass, or the
// failure line of the block. The binaries here are scripts that print what
// a test binary would and echo their arguments and mutant selection.
func TestControlAfterReplaysTheShrunkRunWithoutTheMutant(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "fam"), 0o755))
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho \"args: $*\"\necho \"mutant: ${WINDTUNNEL_MUTANT:-none}\"\n"+body), 0o755))
		return p
	}
	// As a test binary prints them with -test.v=test2json: its framing
	// lines marked with ^V.
	const run = `printf '\026=== RUN   TestA\n\026=== RUN   TestA/seed=0x1\n'` + "\n"
	const passed = `printf '\026--- PASS: TestA/seed=0x1 (0.00s)\n\026--- PASS: TestA (0.00s)\n\026PASS\n'` + "\n"
	pass := script("pass", run+passed)
	fail := script("fail", run+"echo '        failure    check: X-1: 0 of the 10 operations made'\n"+
		`printf '\026--- FAIL: TestA/seed=0x1 (0.00s)\n\026--- FAIL: TestA (0.00s)\n\026FAIL\n'`+"\nexit 1\n")
	t.Setenv("WINDTUNNEL_MUTANT", "m-1")
	r := Runner{Root: dir, Timeout: time.Minute}
	m := mutants.Mutant{ID: "m-1", Pkg: "./fam"}
	sum := &simtest.ShrinkSummary{Test: "TestA/seed=0x1", Replay: "/x/shrunk/replay.txt"}
	assert.Equal(t, afterPasses, r.controlAfter(context.Background(), m, sum, pass))
	got := r.controlAfter(context.Background(), m, sum, fail)
	assert.Equal(t, afterFails+"check: X-1: 0 of the 10 operations made", got)
	out, err := exec.Command(pass, "-test.run=x").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "mutant: m-1", "the script does show an inherited selection")
	logged := filepath.Join(dir, "log")
	echo := script("echo", "echo \"$*\" > "+logged+"\necho \"${WINDTUNNEL_MUTANT:-none}\" >> "+logged+"\n"+run+passed)
	require.Equal(t, afterPasses, r.controlAfter(context.Background(), m, sum, echo))
	b, err := os.ReadFile(logged)
	require.NoError(t, err)
	assert.Equal(t, "-test.v=test2json -test.run ^TestA$/^seed=0x1$ -sim.replay=/x/shrunk/replay.txt -sim.replay.guided -sim.record=false -sim.artifacts=false -test.count=1\nnone\n", string(b),
		"the seed's subtest alone, guided, with no mutant selected")
}
