package accesschannels

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/authz"
)

func genIDs(t *rapid.T, label string) []authz.ID {
	ns := rapid.SliceOfN(rapid.Uint64Range(1, 40), 0, 30).Draw(t, label)
	ids := make([]authz.ID, len(ns))
	for i, n := range ns {
		ids[i] = authz.NewID('c', n)
	}
	return ids
}

// setOf is the naive model: a set, then sorted.
func setOf(halves ...[]authz.ID) []authz.ID {
	seen := map[authz.ID]bool{}
	var out []authz.ID
	for _, h := range halves {
		for _, id := range h {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	slices.SortFunc(out, authz.Compare)
	return out
}

// OC-1 at the level of the merge: union of two normalized halves is the set
// union, sorted, and contains agrees with it.
func TestUnionIsTheSortedSetUnion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rawM, rawO := genIDs(t, "member"), genIDs(t, "open")
		keepM := slices.Clone(rawM)
		m, o := normalize(rawM), normalize(rawO)
		assert.Equal(t, keepM, rawM, "normalize must not reorder the pool's slice")
		want := setOf(rawM, rawO)
		got := union(m, o)
		if len(want) == 0 {
			assert.Empty(t, got)
		} else {
			assert.Equal(t, want, got)
		}
		for n := uint64(0); n <= 41; n++ {
			id := authz.NewID('c', n)
			assert.Equal(t, slices.Contains(want, id), contains(m, id) || contains(o, id), "channel %d", n)
		}
	})
}

func TestUnionDoesNotAliasItsInputs(t *testing.T) {
	m := []authz.ID{authz.NewID('c', 1)}
	o := []authz.ID{authz.NewID('c', 2)}
	u := union(m, o)
	u[0] = authz.NewID('c', 9)
	assert.Equal(t, authz.NewID('c', 1), m[0])
	assert.Empty(t, union(nil, nil))
	assert.Equal(t, o, union(nil, o), "no member channels: the open half alone")
}
