package claims

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

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
		assert.Equal(t, c.ID[:2], c.Family)
	}
	for _, id := range []string{"OC-1", "OC-10", "MS-11", "DR-9", "TW-9"} {
		assert.True(t, ids[id], id)
	}
	_, err = parseClaims("| OC-1 | only | three |\n")
	assert.Error(t, err)
	_, err = parseClaims("no rows")
	assert.Error(t, err)
	_, err = parseClaims("| OC-1 | a | b | c |\n| OC-1 | a | b | c |\n")
	assert.ErrorContains(t, err, "twice")
}

// The embedded CLAIMS.md is the shared one: the audit judges the claims the
// project was given, not an older copy.
func TestEmbeddedClaimsMatchTheShared(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "CLAIMS.md"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("../shared/CLAIMS.md is not next to this checkout (a clean clone elsewhere): nothing to compare")
	}
	require.NoError(t, err)
	assert.Equal(t, string(shared), Markdown(), "scenarios/claims/CLAIMS.md differs from ../shared/CLAIMS.md: copy the shared one")
}

func TestEveryBoundIsForAKnownClaimAndUnique(t *testing.T) {
	cs, err := Claims()
	require.NoError(t, err)
	known := map[string]bool{}
	for _, c := range cs {
		known[c.ID] = true
	}
	seen := map[string]bool{}
	for _, b := range Table {
		key := b.Claim + "/" + b.Name
		assert.True(t, known[b.Claim], "bound %s names an unknown claim", key)
		assert.False(t, seen[key], "bound %s twice", key)
		seen[key] = true
		assert.NotEmpty(t, b.Source, key)
		assert.NotZero(t, b.Kind, key)
		assert.False(t, b.Strict && b.Kind != AtMost, "%s: only an upper bound can be strict", key)
	}
	assert.Panics(t, func() { Get("OC-2", "no such bound") })
}

func TestBoundsJudgeFigures(t *testing.T) {
	age := Get("OC-2", "open set max age")
	assert.Equal(t, time.Second, age.Duration())
	assert.True(t, age.Holds(0.999999999))
	assert.False(t, age.Holds(1), "a strict window: an answer at exactly the bound is outside it")
	assert.Equal(t, "< 1s", age.String())
	assert.InDelta(t, 0.995, age.tightness(0.995), 1e-12)
	fetch := Get("MS-4", "fetch ids")
	assert.True(t, fetch.Holds(16385))
	assert.False(t, fetch.Holds(16386))
	assert.Equal(t, 1.0, fetch.tightness(16385))
	assert.Equal(t, "= 16385", fetch.String())
	assert.Equal(t, "64 MiB", Get("MS-8", "budget").Format(64<<20))
	assert.Equal(t, "≥ 20x", Get("OC-8", "row reduction").String())
}
