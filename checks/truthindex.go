package checks

import "sort"

// keyIndex is one key's truth as a step function, prepared for O(log m)
// queries: the distinct commit instants in increasing order, the value from
// each instant on, and where each maximal run of equal values starts.
//
// Several commits at one instant collapse into one step carrying the last
// commit's value: truth(k, t) is defined by the latest commit with At ≤ t, so
// the earlier values at that instant were never true at any instant.
type keyIndex struct {
	commits []Commit // the key's commit log, for witnesses
	initial bool
	at      []int64 // distinct instants, increasing
	val     []bool  // truth on [at[i], at[i+1])
	last    []int   // index in KeyTruth.Commits of the last commit at at[i]
	// runStart[i] is the first step of the maximal run of equal values that
	// contains step i, or -1 when that run extends back to the initial value
	// (the value has been val[i] since before the first commit).
	runStart []int
}

func newKeyIndex(kt KeyTruth) *keyIndex {
	ix := &keyIndex{commits: kt.Commits, initial: kt.Initial}
	for i, c := range kt.Commits {
		if n := len(ix.at); n > 0 && ix.at[n-1] == c.At {
			ix.val[n-1] = c.Value
			ix.last[n-1] = i
			continue
		}
		ix.at = append(ix.at, c.At)
		ix.val = append(ix.val, c.Value)
		ix.last = append(ix.last, i)
	}
	ix.runStart = make([]int, len(ix.at))
	for i := range ix.at {
		switch {
		case i == 0 && ix.val[0] == ix.initial:
			ix.runStart[i] = -1
		case i == 0:
			ix.runStart[i] = 0
		case ix.val[i] == ix.val[i-1]:
			ix.runStart[i] = ix.runStart[i-1]
		default:
			ix.runStart[i] = i
		}
	}
	return ix
}

// lastTrue answers, for a read that returned a at instant ret, L = the latest
// instant ≤ ret at which truth = a (a supremum). ok is false when truth was
// never a at any instant ≤ ret (a phantom answer). When truth at ret is not
// a, step is the step whose instant L is: the commit that ended a's truth.
// Otherwise step is -1 and L = ret.
func (ix *keyIndex) lastTrue(a bool, ret int64) (l int64, step int, ok bool) {
	// j = the step in effect at ret (-1: none yet, the initial value).
	j := sort.Search(len(ix.at), func(i int) bool { return ix.at[i] > ret }) - 1
	cur := ix.initial
	if j >= 0 {
		cur = ix.val[j]
	}
	if cur == a {
		return ret, -1, true
	}
	if j < 0 || ix.runStart[j] < 0 {
		// truth has been !a since before the first commit: a never held.
		return 0, -1, false
	}
	// Values are booleans, so the step before the run held a; it stopped
	// holding at the run's first instant, which is the supremum.
	s := ix.runStart[j]
	return ix.at[s], s, true
}
