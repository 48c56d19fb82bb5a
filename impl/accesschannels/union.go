package accesschannels

import (
	"slices"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// normalize returns a sorted, duplicate-free copy of ids. Database rows come
// in no promised order; every cached half is kept sorted so that the union is
// a linear merge and a grant check is a binary search. It copies because the
// pool's slice is not ours to keep or reorder.
func normalize(ids []authz.ID) []authz.ID {
	ids = slices.Clone(ids)
	slices.SortFunc(ids, authz.Compare)
	return slices.Compact(ids)
}

// union merges two sorted, duplicate-free halves into a new sorted,
// duplicate-free slice (a channel can be both open and a member channel).
// The result never aliases a cached half, so callers may modify it.
//
// Typically one half is much shorter: a reader's few member channels against
// a community's thousands of open ones. So instead of comparing element by
// element, it walks the shorter half. Each run of the longer half that sorts
// before the next short element is found by binary search and copied in one
// append: O(s·log l) comparisons plus one pass of copying.
func union(member, open []authz.ID) []authz.ID {
	short, long := member, open
	if len(short) > len(long) {
		short, long = long, short
	}
	out := make([]authz.ID, 0, len(member)+len(open))
	j := 0
	for i := range short {
		n, dup := slices.BinarySearchFunc(long[j:], short[i], authz.Compare)
		out = append(out, long[j:j+n]...)
		out = append(out, short[i])
		j += n
		if dup {
			j++
		}
	}
	return append(out, long[j:]...)
}

// contains reports whether the sorted slice ids holds id.
func contains(ids []authz.ID, id authz.ID) bool {
	_, found := slices.BinarySearchFunc(ids, id, authz.Compare)
	return found
}
