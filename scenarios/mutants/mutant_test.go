package audit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClaimsParse(t *testing.T) {
	cs, err := Claims()
	require.NoError(t, err)
	ids := map[string]bool{}
	for _, c := range cs {
		ids[c.ID] = true
		assert.NotEmpty(t, c.Text, c.ID)
	}
	for _, id := range []string{"OC-1", "OC-10", "MS-11", "DR-9", "TW-9"} {
		assert.True(t, ids[id], id)
	}
	assert.Len(t, cs, 10+11+9+9)
	_, err = parseClaims("| OC-1 | only | three |\n")
	assert.Error(t, err)
	_, err = parseClaims("no rows")
	assert.Error(t, err)
}

// Every mutant must apply to today's code: a snippet that stopped matching
// exactly once fails here, in make test, not silently in the audit.
func TestEveryMutantAppliesExactlyOnce(t *testing.T) {
	cs, err := Claims()
	require.NoError(t, err)
	ms := Mutants()
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
	cs, err := Claims()
	require.NoError(t, err)
	have := map[string]int{}
	for _, m := range Mutants() {
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
	assert.Error(t, Validate([]Mutant{{ID: "a", Claims: []string{"XX-1"}, Tests: "x", Old: "a", New: "b"}}, nil))
}
