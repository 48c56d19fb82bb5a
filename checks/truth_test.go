package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTruthValueIsInclusiveAtTheCommitInstant(t *testing.T) {
	tr := make(Truth)
	require.NoError(t, tr.Declare("k", false))
	require.NoError(t, tr.Commit("k", 10, true))
	require.NoError(t, tr.Commit("k", 20, false))
	require.NoError(t, tr.Commit("k", 20, true)) // same instant: the last one wins

	for _, c := range []struct {
		at   int64
		want bool
	}{{9, false}, {10, true}, {19, true}, {20, true}, {1 << 60, true}, {-1 << 60, false}} {
		got, err := tr.Value("k", c.at)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "truth(k, %d)", c.at)
	}
}

func TestTruthRejectsBadInput(t *testing.T) {
	var nilTruth Truth
	assert.ErrorContains(t, nilTruth.Declare("k", true), "nil Truth")

	tr := make(Truth)
	require.NoError(t, tr.Declare("k", false))
	assert.ErrorContains(t, tr.Declare("k", true), "declared twice")
	assert.ErrorContains(t, tr.Commit("nope", 1, true), "undeclared key")
	require.NoError(t, tr.Commit("k", 5, true))
	assert.ErrorContains(t, tr.Commit("k", 4, false), "before the previous commit")

	_, err := tr.Value("nope", 0)
	assert.ErrorContains(t, err, "unknown key")

	unsorted := Truth{"a": {}, "b": {Commits: []Commit{{At: 3}, {At: 2}}}}
	err = unsorted.Validate()
	assert.ErrorContains(t, err, `key "b": commit #1 at 2 ns is before commit #0 at 3 ns`)
	_, err = unsorted.Value("b", 0)
	assert.Error(t, err)
	assert.Equal(t, []string{"a", "b"}, unsorted.Keys())
}
