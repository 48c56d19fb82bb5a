package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/audit"
	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/scenarios/mutants/mechanical"
)

func mech(key, op string, families ...string) mechanical.Mutant {
	m := mechanical.Mutant{Key: key, Op: op, Target: mechanical.Target{Dir: "impl/x", Families: families}}
	for _, f := range families {
		m.Variants = append(m.Variants, mutants.Mutant{ID: key + "-" + f, What: key})
	}
	return m
}

// A mutant is caught when any of its families catches it; a survivor is a
// gap unless the reviewed list argues it equivalent; efficacy leaves the
// equivalent ones out.
func TestJudgeMutationFoldsFamiliesAndEquivalents(t *testing.T) {
	all := []mechanical.Mutant{
		mech("aaaaaaaaaaaa", mechanical.OpCompare, "oc", "ms"),
		mech("bbbbbbbbbbbb", mechanical.OpCompare, "oc"),
		mech("cccccccccccc", mechanical.OpDelete, "oc"),
		mech("dddddddddddd", mechanical.OpDelete, "oc"),
	}
	results := []audit.MutantResult{
		{ID: "aaaaaaaaaaaa-oc"}, {ID: "aaaaaaaaaaaa-ms", Caught: true, SeedsToCatch: 3},
		{ID: "bbbbbbbbbbbb-oc", Caught: true, SeedsToCatch: 1},
		{ID: "cccccccccccc-oc"},
		{ID: "dddddddddddd-oc"},
	}
	rep := judgeMutation(all, results, map[string]string{"dddddddddddd": "only a test reads it"}, nil)
	assert.Equal(t, cell{Caught: 2}, rep.Cells["impl/x"][mechanical.OpCompare])
	assert.Equal(t, cell{Survived: 1, Equivalent: 1}, rep.Cells["impl/x"][mechanical.OpDelete])
	assert.Equal(t, cell{Caught: 2, Survived: 1, Equivalent: 1}, rep.Total)
	assert.Equal(t, "66.7%", rep.Total.efficacy())
	assert.Equal(t, 3, rep.Median)
}

// A survivor argued as impl's own choice (a figure or order no claim or
// source text names) is left out of the efficacy like an equivalent one,
// but counted apart, so the report never passes one off as the other.
func TestJudgeMutationCountsOwnChoicesApart(t *testing.T) {
	all := []mechanical.Mutant{
		mech("aaaaaaaaaaaa", mechanical.OpConst, "tw"),
		mech("bbbbbbbbbbbb", mechanical.OpConst, "tw"),
		mech("cccccccccccc", mechanical.OpConst, "tw"),
	}
	results := []audit.MutantResult{{ID: "aaaaaaaaaaaa-tw"}, {ID: "bbbbbbbbbbbb-tw"}, {ID: "cccccccccccc-tw", Caught: true, SeedsToCatch: 1}}
	rep := judgeMutation(all, results, map[string]string{
		"aaaaaaaaaaaa": "own choice: the ring's upper bound is impl's; no claim names one",
		"bbbbbbbbbbbb": "the guard is unreachable",
	}, nil)
	assert.Equal(t, cell{Caught: 1, Equivalent: 1, OwnChoice: 1}, rep.Total)
	assert.Equal(t, "100.0%", rep.Total.efficacy())
	var out strings.Builder
	printMutation(&out, rep)
	assert.Contains(t, out.String(), "1 argued equivalent, 1 argued impl's own choice (no claim names it)")
}

func TestSpreadKeepsAnEvenSample(t *testing.T) {
	var ms []mechanical.Mutant
	for i := range 10 {
		ms = append(ms, mechanical.Mutant{Line: i})
	}
	var lines []int
	for _, m := range spread(ms, 4) {
		lines = append(lines, m.Line)
	}
	assert.Equal(t, []int{0, 2, 5, 7}, lines)
	assert.Len(t, spread(ms, 0), 10)
	assert.Len(t, spread(ms, 20), 10)
}

func TestMutationRefusesBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"mutation -targets impl/nope": `-targets: "impl/nope" is not a claimed package`,
		"mutation -ops flip":          `-ops: unknown operator "flip"`,
		"mutation -sample -1":         "must be positive and -sample not negative",
		"mutation -hang 0s":           "-hang must be positive",
		"mutation stray":              `unexpected arguments ["stray"]`,
	} {
		out, rc := runAudit(t, strings.Fields(args)...)
		assert.Equal(t, 2, rc, "%s: %s", args, out)
		assert.Contains(t, out, want, args)
	}
}

// -rerun takes the gaps and the unrun mutants of an earlier report, never
// its caught or argued ones, and refuses to write over that report.
func TestRerunTakesTheEarlierGapsOnly(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "mutation.json")
	rep := mutationReport{Results: []mutationResult{
		{Key: "aaaaaaaaaaaa", Package: "impl/x", Caught: true},
		{Key: "bbbbbbbbbbbb", Package: "impl/x"},
		{Key: "cccccccccccc", Package: "impl/y", Equivalent: "the guard is unreachable"},
		{Key: "dddddddddddd", Package: "impl/z", Error: "build failed"},
	}}
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(report, data, 0o644))

	set, err := readRerun(report)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"bbbbbbbbbbbb": true, "dddddddddddd": true}, set.keys)
	assert.Equal(t, "impl/x,impl/z", rerunTargets(set))

	missing := maps.Clone(set.keys)
	kept := keepRerun([]mechanical.Mutant{mech("aaaaaaaaaaaa", mechanical.OpDelete, "oc"), mech("bbbbbbbbbbbb", mechanical.OpDelete, "oc")}, set, missing)
	require.Len(t, kept, 1)
	assert.Equal(t, "bbbbbbbbbbbb", kept[0].Key)
	assert.Equal(t, map[string]bool{"dddddddddddd": true}, missing, "a key no longer generated is reported, not dropped silently")

	assert.ErrorContains(t, guardRerunOut(report, dir), "overwrite")
	assert.NoError(t, guardRerunOut(report, filepath.Join(dir, "again")))

	require.NoError(t, os.WriteFile(report, []byte(`{"results": []}`), 0o644))
	_, err = readRerun(report)
	assert.ErrorContains(t, err, "no result")
	require.NoError(t, os.WriteFile(report, []byte("not json"), 0o644))
	_, err = readRerun(report)
	assert.ErrorContains(t, err, "not a mutation.json")
}
