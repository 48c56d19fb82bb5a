package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/mutants"
	"github.com/windtunnel/windtunnel/scenarios/mutants/mechanical"
)

const coverText = `mode: set
example.com/m/impl/x/a.go:10.20,12.3 2 1
example.com/m/impl/x/a.go:12.3,14.4 1 0
example.com/m/impl/x/a.go:20.2,20.30 1 1
golang.org/other/b.go:1.1,2.2 1 1
`

func TestParseCoverageKeepsTheModulesBlocks(t *testing.T) {
	bs, err := parseCoverage(strings.NewReader(coverText), "example.com/m")
	require.NoError(t, err)
	assert.Equal(t, []block{
		{file: "impl/x/a.go", fromLine: 10, fromCol: 20, toLine: 12, toCol: 3, executed: true},
		{file: "impl/x/a.go", fromLine: 12, fromCol: 3, toLine: 14, toCol: 4, executed: false},
		{file: "impl/x/a.go", fromLine: 20, fromCol: 2, toLine: 20, toCol: 30, executed: true},
	}, bs)
	for _, bad := range []string{"mode: set\nx.go 1 1\n", "mode: set\nexample.com/m/a.go:3.1,2.1 1 1\n", "mode: set\nexample.com/m/a.go:1.1,2.1 1 many\n"} {
		_, err := parseCoverage(strings.NewReader(bad), "example.com/m")
		assert.Error(t, err, bad)
	}
}

// A check runs for a mutant when one of its executed blocks holds the
// mutant's first byte, or when it is always run; a position no block holds
// runs every check, and one only unexecuted blocks hold runs none but the
// always-run ones.
func TestChecksForSkipsOnlyChecksThatCannotSee(t *testing.T) {
	fr := familyReach{
		tests:  []string{"TestA", "TestB", "TestReal"},
		always: map[string]bool{"TestReal": true},
		blocks: map[string][]block{
			"TestA": {{file: "impl/x/a.go", fromLine: 10, fromCol: 5, toLine: 12, toCol: 9, executed: true}, {file: "impl/x/a.go", fromLine: 13, fromCol: 1, toLine: 14, toCol: 2}},
			"TestB": {{file: "impl/x/a.go", fromLine: 10, fromCol: 5, toLine: 12, toCol: 9}, {file: "impl/x/a.go", fromLine: 13, fromCol: 1, toLine: 14, toCol: 2}},
		},
	}
	got, all := fr.checksFor("impl/x/a.go", 11, 1)
	assert.Equal(t, []string{"TestA", "TestReal"}, got)
	assert.False(t, all)
	got, _ = fr.checksFor("impl/x/a.go", 12, 9)
	assert.Equal(t, []string{"TestA", "TestReal"}, got, "a block's end is held: a branch swap starts at the brace")
	got, _ = fr.checksFor("impl/x/a.go", 14, 1)
	assert.Equal(t, []string{"TestReal"}, got, "executed by no check")
	got, all = fr.checksFor("impl/x/a.go", 3, 1)
	assert.Equal(t, fr.tests, got, "a package-level line: coverage cannot place it")
	assert.True(t, all)
	got, all = fr.checksFor("impl/x/other.go", 11, 1)
	assert.Equal(t, fr.tests, got)
	assert.True(t, all)
}

// A switch's case expression is in no block, though the case's body block
// starts on its line after the colon: a mutant of the expression runs
// whenever an earlier case is false, so it must run every check, even
// when no check executes the body (the collector's join, where a mutant
// of "case b == nil" was once reported as executed by no check).
func TestACaseExpressionRunsEveryCheck(t *testing.T) {
	fr := familyReach{
		tests: []string{"TestA", "TestB"},
		blocks: map[string][]block{
			"TestA": {{file: "impl/x/j.go", fromLine: 89, fromCol: 35, toLine: 90, toCol: 9, executed: true}, {file: "impl/x/j.go", fromLine: 93, fromCol: 33, toLine: 94, toCol: 11}},
			"TestB": {{file: "impl/x/j.go", fromLine: 89, fromCol: 35, toLine: 90, toCol: 9}, {file: "impl/x/j.go", fromLine: 93, fromCol: 33, toLine: 94, toCol: 11}},
		},
	}
	got, all := fr.checksFor("impl/x/j.go", 93, 7) // "b == nil" in "case b == nil || b.head == nil:"
	assert.True(t, all)
	assert.Equal(t, []string{"TestA", "TestB"}, got)
	got, _ = fr.checksFor("impl/x/j.go", 94, 3) // the case's body: executed by none
	assert.Empty(t, got)
}

func TestRunPatternMatchesExactlyItsChecks(t *testing.T) {
	re := regexp.MustCompile(runPattern([]string{"TestA", "TestB_C"}))
	assert.True(t, re.MatchString("TestA"))
	assert.True(t, re.MatchString("TestB_C"))
	assert.False(t, re.MatchString("TestAB"))
	assert.False(t, re.MatchString("TestB"))
}

// A variant no check reaches is not run and survives as unreached; the
// others run only their reaching checks.
func TestSelectChecksNarrowsAndMarksUnreached(t *testing.T) {
	reach := map[string]familyReach{
		"./scenarios/oc": {tests: []string{"TestA", "TestB"}, blocks: map[string][]block{
			"TestA": {{file: "impl/x/a.go", fromLine: 1, fromCol: 1, toLine: 5, toCol: 2, executed: true}},
			"TestB": {{file: "impl/x/a.go", fromLine: 1, fromCol: 1, toLine: 5, toCol: 2}},
		}},
		"./scenarios/ms": {tests: []string{"TestM"}, blocks: map[string][]block{
			"TestM": {{file: "impl/x/a.go", fromLine: 1, fromCol: 1, toLine: 5, toCol: 2}},
		}},
	}
	m := mechanical.Mutant{Key: "k", Line: 3, Col: 4, Variants: []mutants.Mutant{
		{ID: "v-oc", Pkg: "./scenarios/oc", File: "impl/x/a.go", Tests: "^Test"},
		{ID: "v-ms", Pkg: "./scenarios/ms", File: "impl/x/a.go", Tests: "^Test"},
	}}
	unreached := map[string]bool{}
	out := selectChecks([]mechanical.Mutant{m}, reach, unreached)
	assert.Equal(t, "^(TestA)$", out[0].Variants[0].Tests)
	assert.Equal(t, map[string]bool{"v-ms": true}, unreached)
	assert.Equal(t, "^Test", m.Variants[0].Tests, "the input is not changed")

	rep := judgeMutation(out, nil, nil, unreached)
	assert.False(t, rep.Results[0].Unreached, "one family reaches it")
	rep = judgeMutation(out, nil, nil, map[string]bool{"v-oc": true, "v-ms": true})
	assert.True(t, rep.Results[0].Unreached)
	assert.Equal(t, cell{Survived: 1}, rep.Total)
	var b strings.Builder
	printMutation(&b, rep)
	assert.Contains(t, b.String(), "no check executes this line")
}

// A check that executes the real runtime's seam is run for every mutant:
// real goroutines and the wall clock may execute other lines next time.
func TestRealRuntimeBlocksMarkACheck(t *testing.T) {
	assert.True(t, realRuntime(block{file: "impl/rt/real.go", executed: true}))
	assert.True(t, realRuntime(block{file: "impl/rt/realchan.go", executed: true}))
	assert.False(t, realRuntime(block{file: "impl/rt/real.go"}), "not executed")
	assert.False(t, realRuntime(block{file: "impl/rt/rt.go", executed: true}), "the seam's interface")
}
