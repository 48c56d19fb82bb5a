package baseline

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// TestSortedUnionIsTheSortOfBoth: the old miss's union is the sorted,
// duplicate-free concatenation of the member and open channels, whether
// the open channels come sorted (merged) or not (sorted together), with
// duplicates inside and across the two lists; nothing for nothing.
func TestSortedUnionIsTheSortOfBoth(t *testing.T) {
	id := rapid.Custom(func(t *rapid.T) authz.ID { return authz.NewID('c', rapid.Uint64Range(0, 40).Draw(t, "n")) })
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.SliceOfN(id, 0, 12).Draw(t, "member")
		b := rapid.SliceOfN(id, 0, 30).Draw(t, "open")
		if rapid.Bool().Draw(t, "open sorted") {
			slices.SortFunc(b, authz.Compare)
		}
		aIn, bIn := slices.Clone(a), slices.Clone(b)
		want := append(slices.Clone(a), b...)
		slices.SortFunc(want, authz.Compare)
		want = slices.Compact(want)
		got := sortedUnion(a, b)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("sortedUnion(%v, %v) = %v, want %v", a, b, got, want)
		}
		if !slices.Equal(a, aIn) || !slices.Equal(b, bIn) {
			t.Fatalf("the inputs were changed")
		}
	})
}
