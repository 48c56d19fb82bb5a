package protocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The index finds every key where a plain map would, dense or sparse, and
// refuses what a map of keys would find twice or could not hold.
func TestKeyIndexFindsWhatAMapWould(t *testing.T) {
	keys := []KeepKey{{"a", 0}, {"b", 0}, {"a", 1}, {"a\x00op3", 0}, {"b", 2}, {"", 0}, {"huge", 1 << 40}, {"a", 5000}}
	ix, err := NewKeyIndex(keys, "choice")
	require.NoError(t, err)
	require.NotNil(t, ix.Sparse, "an ordinal past the dense budget goes to the map")
	for j, k := range keys {
		assert.Equal(t, j, ix.Find(ix.Slice(k.Task), k), "key %v", k)
	}
	for _, k := range []KeepKey{{"a", 2}, {"b", 1}, {"b", 3}, {"c", 0}, {"huge", 1}, {"a\x00op4", 0}} {
		assert.Equal(t, NoPos, ix.Find(ix.Slice(k.Task), k), "key %v is not listed", k)
	}

	for _, bad := range [][]KeepKey{
		{{"a", 0}, {"a", 0}},
		{{"huge", 1 << 40}, {"huge", 1 << 40}},
	} {
		_, err := NewKeyIndex(bad, "fault")
		assert.ErrorContains(t, err, "two faults for call")
	}
	_, err = NewKeyIndex([]KeepKey{{"a", -1}}, "operation")
	assert.ErrorContains(t, err, "negative ordinal")
}

// A replay file that names a call far past any task's count (1<<40) is
// answered by the map, not by a slice that large.
func TestKeyIndexStaysSmallForAFarOrdinal(t *testing.T) {
	keys := make([]KeepKey, 0, 100)
	for i := range 100 {
		keys = append(keys, KeepKey{"t", i * 1000})
	}
	ix, err := NewKeyIndex(keys, "choice")
	require.NoError(t, err)
	dense := 0
	for _, sl := range ix.byTask { //windtunnel:unordered a sum
		dense += len(sl)
	}
	assert.LessOrEqual(t, dense, denseSlack*len(keys)+denseSlots0)
	for j, k := range keys {
		assert.Equal(t, j, ix.Find(ix.Slice(k.Task), k))
	}
}
