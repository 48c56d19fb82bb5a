package checks

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Read is one recorded authorization read: the answer it returned for Key
// (Granted) and its virtual invoke and return instants in ns. ID identifies
// the read in reports (History.Reads uses the op's index in the history).
type Read struct {
	ID      int
	Key     string
	Invoke  int64
	Return  int64
	Granted bool
}

// maxPhantomExamples bounds the phantom reads a report keeps verbatim; the
// count is always exact.
const maxPhantomExamples = 16

// Witness is the read with the largest staleness in its class, with the
// evidence. L is the last instant ≤ its return at which its answer was true.
// When the answer was no longer true at its return, Ended, EndCommit and its
// index EndIndex in the key's commit log name the commit that ended it.
type Witness struct {
	Read      Read
	Staleness time.Duration
	L         int64
	Ended     bool
	EndCommit Commit
	EndIndex  int
}

// ClassReport is the staleness of one class of reads (grants or denials).
// MaxStaleness, the witness, the buckets and the percentiles cover the
// non-phantom reads; phantoms are counted apart because their staleness is
// infinite, and any phantom makes Holds false.
type ClassReport struct {
	Reads           int
	MaxStaleness    time.Duration
	Witness         *Witness // nil when the class has no non-phantom read
	Phantoms        int
	PhantomExamples []Read // the first few phantom reads, in input order
	Buckets         [NumBuckets]int
	P50, P99        time.Duration
	// Values is the staleness of every non-phantom read, ascending: the
	// class's distribution.
	Values []time.Duration
}

// Holds reports whether every read of the class was at most bound stale:
// no phantom and MaxStaleness ≤ bound.
func (c ClassReport) Holds(bound time.Duration) bool {
	return c.Phantoms == 0 && c.MaxStaleness <= bound
}

// Report is the exact staleness of a set of reads, split into reads that
// granted access and reads that denied it (grant-staleness bounds how long a
// revoked permission survives; deny-staleness how long a new one is missing).
type Report struct {
	Grant ClassReport
	Deny  ClassReport
}

// Holds reports whether both classes hold the bound. Use Grant.Holds or
// Deny.Holds for a claim about one class.
func (r Report) Holds(bound time.Duration) bool {
	return r.Grant.Holds(bound) && r.Deny.Holds(bound)
}

// Staleness computes the exact staleness of every read against truth (see the
// package documentation for the definition) and summarizes it per class. It
// decides the staleness claims: grant-staleness for OC-2, OC-4 and OC-7,
// grant- and deny-staleness for MS-2, deny-staleness for MS-10. It
// validates its input and returns an error, naming the read or key, for a
// read with invoke after return, a read of an undeclared key, or a key whose
// commits are out of order.
//
// Cost: O(m) to index the m commits plus O(log m) per read, and a sort of
// each class's staleness values for the percentiles: O((n+m) log(n+m)).
func Staleness(reads []Read, truth Truth) (Report, error) {
	if err := truth.Validate(); err != nil {
		return Report{}, err
	}
	index := make(map[string]*keyIndex, len(truth))
	var grant, deny classBuilder
	for i := range reads {
		r := &reads[i]
		if r.Invoke > r.Return {
			return Report{}, fmt.Errorf("checks: read #%d (ID %d, key %q): invoke %d ns is after return %d ns", i, r.ID, r.Key, r.Invoke, r.Return)
		}
		ix, ok := index[r.Key]
		if !ok {
			kt, declared := truth[r.Key]
			if !declared {
				return Report{}, fmt.Errorf("checks: read #%d (ID %d) of unknown key %q", i, r.ID, r.Key)
			}
			ix = newKeyIndex(kt)
			index[r.Key] = ix
		}
		b := &deny
		if r.Granted {
			b = &grant
		}
		l, step, ok := ix.lastTrue(r.Granted, r.Return)
		if !ok {
			b.phantom(*r)
			continue
		}
		s := subSat(r.Invoke, l)
		if s < 0 {
			s = 0
		}
		b.add(r, s, l, ix, step)
	}
	return Report{Grant: grant.finish(), Deny: deny.finish()}, nil
}

// classBuilder accumulates one class; the witness is the first read, in input
// order, with the maximal staleness, so that reports are reproducible.
type classBuilder struct {
	rep    ClassReport
	values []int64
}

func (b *classBuilder) phantom(r Read) {
	b.rep.Reads++
	b.rep.Phantoms++
	if len(b.rep.PhantomExamples) < maxPhantomExamples {
		b.rep.PhantomExamples = append(b.rep.PhantomExamples, r)
	}
}

func (b *classBuilder) add(r *Read, s, l int64, ix *keyIndex, step int) {
	b.rep.Reads++
	b.values = append(b.values, s)
	b.rep.Buckets[bucketOf(time.Duration(s))]++
	if b.rep.Witness != nil && s <= int64(b.rep.MaxStaleness) {
		return
	}
	b.rep.MaxStaleness = time.Duration(s)
	w := &Witness{Read: *r, Staleness: time.Duration(s), L: l}
	if step >= 0 {
		w.Ended = true
		w.EndIndex = ix.last[step]
		w.EndCommit = ix.commits[w.EndIndex]
	}
	b.rep.Witness = w
}

func (b *classBuilder) finish() ClassReport {
	if len(b.values) > 0 {
		slices.Sort(b.values)
		b.rep.P50 = time.Duration(nearestRank(b.values, 50))
		b.rep.P99 = time.Duration(nearestRank(b.values, 99))
		b.rep.Values = make([]time.Duration, len(b.values))
		for i, v := range b.values {
			b.rep.Values[i] = time.Duration(v)
		}
	}
	return b.rep
}

// nearestRank is the p-th percentile of sorted (nearest-rank method: the
// smallest value with at least p% of the values at or below it).
func nearestRank(sorted []int64, p int) int64 {
	rank := (len(sorted)*p + 99) / 100 // ceil(n·p/100)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// subSat returns a-b, saturated to the int64 range, so that reads and commits
// at extreme instants cannot wrap a staleness negative.
func subSat(a, b int64) int64 {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}
