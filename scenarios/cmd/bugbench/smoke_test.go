package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBugBenchSmoke is make bugbench at a size make test affords: one
// mutant, small caps, the stress binary without -race (a race build takes
// a minute). The table has a row per approach in order and the summary,
// and windtunnel's random walk catches the mutant, which needs ten-odd
// seeds there.
func TestBugBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	const mutant = "ms-publish-unconditionally"
	rep, err := Bench(context.Background(), Options{Root: root, Dir: t.TempDir(), Mutants: []string{mutant},
		Caps: Caps{Seeds: 300, Wall: 500 * time.Millisecond}})
	require.NoError(t, err)
	var got []string
	for _, a := range rep.Attempts {
		assert.Equal(t, mutant, a.Mutant)
		assert.Positive(t, a.Tried, a.Approach)
		got = append(got, a.Approach)
	}
	require.Equal(t, []string{"random", "pct", "pos", "surw", "stress", "synctest"}, got)
	assert.True(t, rep.Attempts[0].Caught, "random walk catches %s within 300 seeds: %+v", mutant, rep.Attempts[0])
	assert.Contains(t, rep.Attempts[0].Failure, "MS-3")
	assert.NotEmpty(t, rep.Skipped, "the logic mutants with no workload on real goroutines are listed")
	md := rep.Markdown()
	for _, want := range []string{"### " + mutant, "| random | yes |", "### Summary over 1 mutants", "| stress |", "| synctest |", "### Not benchmarked", "stress without -race"} {
		assert.Contains(t, md, want)
	}
	assert.Equal(t, 6, strings.Count(md, "| 1 of 1 |")+strings.Count(md, "| 0 of 1 |"), "one summary row per approach:\n%s", md)
	t.Logf("\n%s", md[:strings.Index(md, "### Not benchmarked")])
}

// An unknown mutant and bad caps are refused before anything is built.
func TestBugBenchRefusesBadInput(t *testing.T) {
	_, err := Bench(context.Background(), Options{Root: ".", Dir: t.TempDir(), Mutants: []string{"no-such"}, Caps: Caps{Seeds: 1, Wall: time.Second}})
	assert.ErrorContains(t, err, `"no-such" is not a benchmarked mutant`)
	_, err = Bench(context.Background(), Options{Root: ".", Dir: t.TempDir(), Caps: Caps{Seeds: 0, Wall: time.Second}})
	assert.ErrorContains(t, err, "caps must be positive")
}
