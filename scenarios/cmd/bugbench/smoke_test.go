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

// TestBugBenchSmoke is make bugbench at a size make test affords: two
// mutants, one on the open-set cache's cancellation workload and one on
// the membership cache, small caps, the stress binary without -race (a
// race build takes a minute). The table has a row per approach in order and
// the summary, and windtunnel's random walk catches both mutants, which
// needs one or two seeds and ten-odd.
func TestBugBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	// In catalogue order, the report's.
	mutants := []string{"oc-abandoned-read-fails-its-joiners", "ms-publish-unconditionally"}
	claim := map[string]string{mutants[0]: "context canceled", mutants[1]: "MS-3"}
	rep, err := Bench(context.Background(), Options{Root: root, Dir: t.TempDir(), Mutants: mutants,
		Caps: Caps{Seeds: 300, Wall: 500 * time.Millisecond}})
	require.NoError(t, err)
	require.Len(t, rep.Attempts, 12)
	for i, mutant := range mutants {
		as := rep.Attempts[6*i : 6*i+6]
		var got []string
		for _, a := range as {
			assert.Equal(t, mutant, a.Mutant)
			assert.Positive(t, a.Tried, a.Approach)
			got = append(got, a.Approach)
		}
		require.Equal(t, []string{"random", "pct", "pos", "surw", "stress", "synctest"}, got)
		assert.True(t, as[0].Caught, "random walk catches %s within 300 seeds: %+v", mutant, as[0])
		assert.Contains(t, as[0].Failure, claim[mutant])
	}
	assert.NotEmpty(t, rep.Skipped, "the logic mutants with no workload on real goroutines are listed")
	md := rep.Markdown()
	for _, want := range []string{"### " + mutants[0], "### " + mutants[1], "| random | yes |", "### Summary over 2 mutants", "| stress |", "| synctest |", "### Not benchmarked", "| tw | ", "scenarios/world/netthreads", "stress without -race"} {
		assert.Contains(t, md, want)
	}
	rows := 0
	for _, n := range []string{"0", "1", "2"} {
		rows += strings.Count(md, "| "+n+" of 2 |")
	}
	assert.Equal(t, 6, rows, "one summary row per approach:\n%s", md)
	t.Logf("\n%s", md[:strings.Index(md, "### Not benchmarked")])
}

// An unknown mutant and bad caps are refused before anything is built.
func TestBugBenchRefusesBadInput(t *testing.T) {
	_, err := Bench(context.Background(), Options{Root: ".", Dir: t.TempDir(), Mutants: []string{"no-such"}, Caps: Caps{Seeds: 1, Wall: time.Second}})
	assert.ErrorContains(t, err, `"no-such" is not a benchmarked mutant`)
	_, err = Bench(context.Background(), Options{Root: ".", Dir: t.TempDir(), Caps: Caps{Seeds: 0, Wall: time.Second}})
	assert.ErrorContains(t, err, "caps must be positive")
	_, err = Bench(context.Background(), Options{Root: ".", Dir: t.TempDir(), Caps: Caps{Seeds: 1, Wall: time.Second, PCTDepth: -1}})
	assert.ErrorContains(t, err, "PCT depth -1")
}
