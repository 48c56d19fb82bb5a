package determinism

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestScanReportsEveryRule: the scan must be able to fail, once per
// broken rule, and must honour the annotations.
func TestScanReportsEveryRule(t *testing.T) {
	vs, err := Scan(".", Rules{Impl: true, Module: "github.com/windtunnel/windtunnel"}, "./testdata/violations")
	require.NoError(t, err)
	var rules []string
	for _, v := range vs {
		rules = append(rules, v.Rule)
	}
	slices.Sort(rules)
	assert.Equal(t, []string{
		"channel", "channel", "channel", // the chan type in make, the send, the receive
		"global rand", "global rand",
		"go statement",
		"map range", "map range", // a map, and maps.Keys of it
		"select",
		"sync", "sync/atomic",
		"time", "time", // the annotated wall-clock read is not reported
	}, rules, "violations: %v", vs)
}

func TestExcludedPackagesAreSkipped(t *testing.T) {
	vs, err := Scan(".", Rules{Exclude: []string{"github.com/windtunnel/windtunnel/sim/determinism/testdata/violations"}}, "./testdata/violations")
	require.NoError(t, err)
	assert.Empty(t, vs)
}

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), Analyzer, "a")
}

// TestSeamChannelsAreAllowed: code on the seam's channels, select, Cond and
// Once breaks no rule.
func TestSeamChannelsAreAllowed(t *testing.T) {
	vs, err := Scan(".", Rules{Impl: true, Module: "github.com/windtunnel/windtunnel"}, "./testdata/seam")
	require.NoError(t, err)
	assert.Empty(t, vs)
}
