package mutants

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every mutant must apply to today's code: a snippet that stopped matching
// exactly once fails here, in make test, not silently in the audit.
func TestEveryMutantAppliesExactlyOnce(t *testing.T) {
	cs, err := claims.Claims()
	require.NoError(t, err)
	ms := All()
	require.NoError(t, Validate(ms, cs))
	root := filepath.Join("..", "..")
	for _, m := range ms {
		t.Run(m.ID, func(t *testing.T) {
			dir := t.TempDir()
			overlay, err := m.Apply(root, dir)
			require.NoError(t, err)
			data, err := os.ReadFile(filepath.Join(dir, "_src", filepath.Base(m.File)))
			require.NoError(t, err)
			assert.Contains(t, string(data), m.New)
			raw, err := os.ReadFile(overlay)
			require.NoError(t, err)
			assert.Contains(t, string(raw), `"Replace"`)
		})
	}
}

// Every claim has at least one mutant in the catalogue, also the rows of
// CLAIMS.md that name none ("—"): a check that no mutant can fail proves
// nothing.
func TestEveryClaimHasAMutant(t *testing.T) {
	cs, err := claims.Claims()
	require.NoError(t, err)
	have := map[string]int{}
	for _, m := range All() {
		for _, c := range m.Claims {
			have[c]++
		}
	}
	for _, c := range cs {
		assert.Positive(t, have[c.ID], "%s has no mutant in the catalogue (CLAIMS.md names: %s)", c.ID, c.Mutants)
	}
}

func TestApplyRejectsBrokenSnippets(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.go"), []byte("a := 1\na := 1\n"), 0o644))
	_, err := Mutant{ID: "twice", File: "f.go", Old: "a := 1", New: "a := 2"}.Apply(dir, t.TempDir())
	assert.ErrorContains(t, err, "occurs 2 times")
	_, err = Mutant{ID: "never", File: "f.go", Old: "b := 1", New: "b := 2"}.Apply(dir, t.TempDir())
	assert.ErrorContains(t, err, "occurs 0 times")
	_, err = Mutant{ID: "missing", File: "nope.go", Old: "x", New: "y"}.Apply(dir, t.TempDir())
	assert.Error(t, err)
	assert.Error(t, Validate([]Mutant{{ID: "a", Claims: []string{"XX-1"}, Tests: "x", Pkg: "./scenarios/oc", Old: "a", New: "b"}}, nil))
	// A Race mutant must name RaceFree checks: make race runs those on the
	// production code, the control its catch is worth nothing without.
	cs, err := claims.Claims()
	require.NoError(t, err)
	race := Mutant{ID: "r", Claims: []string{"DR-7"}, Tests: "^TestDR7_Linearizable", Pkg: "./scenarios/dr", Old: "a", New: "b", Race: true}
	assert.ErrorContains(t, Validate([]Mutant{race}, cs), "RaceFree")
	race.Tests = "^TestDR7_RealGoroutinesRaceFree$"
	assert.NoError(t, Validate([]Mutant{race}, cs))
}

func TestToleranceMutantsApplyAndWidenTheTablesBound(t *testing.T) {
	tol, err := Tolerance()
	require.NoError(t, err)
	require.NotEmpty(t, tol)
	root := filepath.Join("..", "..")
	cs, err := claims.Claims()
	require.NoError(t, err)
	require.NoError(t, Validate(tol, cs))
	for _, m := range tol {
		_, err := m.Apply(root, t.TempDir())
		assert.NoError(t, err, m.ID)
		assert.Equal(t, KindTolerance, m.Kind)
	}
	w, err := Widen(claims.Get("OC-2", "open set max age"), "1 * time.Second")
	require.NoError(t, err)
	assert.Equal(t, "1010000000 * time.Nanosecond", w)
	w, err = Widen(claims.Get("MS-4", "snapshot ids"), "16384")
	require.NoError(t, err)
	assert.Equal(t, "16385", w)
	w, err = Widen(claims.Get("MS-8", "budget"), "64 << 20")
	require.NoError(t, err)
	assert.Equal(t, "67779953", w)
	_, err = Widen(claims.Get("OC-2", "open set max age"), "1000")
	assert.Error(t, err, "a duration bound needs a duration literal")
}

// TestImplDefaultsMatchTheTable says when impl's defaults differ from the
// source texts' numbers. No verdict depends on it: the checks take their
// bounds from the table, so a default that drifted fails its claim's
// check; this test only names the drift.
func TestImplDefaultsMatchTheTable(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, s := range Sites() {
		if s.Literal == "" {
			continue
		}
		v, ok := evalLiteral(s.Literal)
		if !ok {
			continue // derived in code (MaxSnapshotIDs+1): covered by its own site
		}
		b := claims.Get(s.Claim, s.Bound)
		data, err := os.ReadFile(filepath.Join(root, s.File))
		require.NoError(t, err)
		require.Contains(t, string(data), s.Old, s.File)
		assert.InDelta(t, b.Value, v, 1e-12, "%s: %s encodes %s %s as %s = %v, the source text says %s", s.File, s.Old, s.Claim, s.Bound, s.Literal, v, b.Format(b.Value))
	}
}

// evalLiteral evaluates the literal forms the sites use, in the bound's
// unit (seconds for durations).
func evalLiteral(lit string) (float64, bool) {
	units := map[string]float64{"time.Nanosecond": 1e-9, "time.Microsecond": 1e-6, "time.Millisecond": 1e-3, "time.Second": 1, "time.Minute": 60}
	var n, m float64
	var unit string
	switch {
	case strings.Contains(lit, "<<"):
		if _, err := fmt.Sscanf(lit, "%g << %g", &n, &m); err != nil {
			return 0, false
		}
		return n * math.Pow(2, m), true
	case strings.Contains(lit, "*"):
		if _, err := fmt.Sscanf(lit, "%g * %s", &n, &unit); err != nil || units[unit] == 0 {
			return 0, false
		}
		return n * units[unit], true
	}
	if _, err := fmt.Sscanf(lit, "%g", &n); err != nil || strings.ContainsAny(lit, "+.") {
		return 0, false
	}
	return n, true
}
