package checks

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

const sec = int64(time.Second)

// revokedAt1s is a truth with key "k" revoked (true → false) at 1 s.
func revokedAt1s() Truth {
	return Truth{"k": {Initial: true, Commits: []Commit{{At: 1 * sec, Value: false}}}}
}

func TestStalenessFreshReadIsZero(t *testing.T) {
	rep, err := Staleness([]Read{
		{ID: 1, Key: "k", Invoke: 2 * sec, Return: 2*sec + 100, Granted: false}, // after the revoke, denied
		{ID: 2, Key: "k", Invoke: 0, Return: 500, Granted: true},                // before it, granted
	}, revokedAt1s())
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), rep.Grant.MaxStaleness)
	assert.Equal(t, time.Duration(0), rep.Deny.MaxStaleness)
	assert.True(t, rep.Holds(0))
	require.NotNil(t, rep.Deny.Witness)
	assert.Equal(t, 2*sec+100, rep.Deny.Witness.L, "still true at return: L = return")
	assert.False(t, rep.Deny.Witness.Ended)
}

func TestStalenessAnswerEndedOneSecondBeforeInvokeIsExactlyOneSecond(t *testing.T) {
	rep, err := Staleness([]Read{{ID: 7, Key: "k", Invoke: 2 * sec, Return: 3 * sec, Granted: true}}, revokedAt1s())
	require.NoError(t, err)
	assert.Equal(t, time.Second, rep.Grant.MaxStaleness)
	assert.True(t, rep.Grant.Holds(time.Second))
	assert.False(t, rep.Grant.Holds(time.Second-1))
	w := rep.Grant.Witness
	require.NotNil(t, w)
	assert.Equal(t, Witness{
		Read:      Read{ID: 7, Key: "k", Invoke: 2 * sec, Return: 3 * sec, Granted: true},
		Staleness: time.Second, L: 1 * sec, Ended: true, EndCommit: Commit{At: 1 * sec, Value: false}, EndIndex: 0,
	}, *w)
	assert.Equal(t, 1, rep.Grant.Buckets[8], "1s falls in <10s")
}

func TestStalenessReadOverlappingTheRevokeIsZero(t *testing.T) {
	// The answer stopped being true during the read: L = 1 s ≥ invoke.
	rep, err := Staleness([]Read{{ID: 1, Key: "k", Invoke: sec / 2, Return: 2 * sec, Granted: true}}, revokedAt1s())
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), rep.Grant.MaxStaleness)
	assert.Equal(t, 1*sec, rep.Grant.Witness.L)
}

func TestStalenessCommitAtReturnIsInEffect(t *testing.T) {
	// Granted at exactly the instant the grant commits: fresh, not a phantom
	// (a commit takes effect at its instant, inclusive).
	tr := Truth{"k": {Initial: false, Commits: []Commit{{At: 5 * sec, Value: true}}}}
	rep, err := Staleness([]Read{{ID: 1, Key: "k", Invoke: 4 * sec, Return: 5 * sec, Granted: true}}, tr)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Grant.Phantoms)
	assert.Equal(t, time.Duration(0), rep.Grant.MaxStaleness)
	// One ns earlier it is a phantom.
	rep, err = Staleness([]Read{{ID: 1, Key: "k", Invoke: 4 * sec, Return: 5*sec - 1, Granted: true}}, tr)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Grant.Phantoms)
	assert.False(t, rep.Holds(time.Hour))
}

func TestStalenessPhantoms(t *testing.T) {
	tr := Truth{
		"never":  {Initial: false},
		"later":  {Initial: false, Commits: []Commit{{At: 5 * sec, Value: true}}},
		"sameAt": {Initial: false, Commits: []Commit{{At: 5 * sec, Value: true}, {At: 5 * sec, Value: false}}},
	}
	reads := []Read{
		{ID: 1, Key: "never", Invoke: 0, Return: 10 * sec, Granted: true},
		{ID: 2, Key: "later", Invoke: 1 * sec, Return: 2 * sec, Granted: true},
		// true and false commit at the same instant: true was never the value at any instant.
		{ID: 3, Key: "sameAt", Invoke: 0, Return: 10 * sec, Granted: true},
		{ID: 4, Key: "sameAt", Invoke: 6 * sec, Return: 7 * sec, Granted: false},
	}
	rep, err := Staleness(reads, tr)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Grant.Reads)
	assert.Equal(t, 3, rep.Grant.Phantoms)
	assert.Equal(t, reads[:3], rep.Grant.PhantomExamples)
	assert.Nil(t, rep.Grant.Witness, "no finite grant read")
	assert.False(t, rep.Grant.Holds(time.Duration(math.MaxInt64)))
	assert.True(t, rep.Deny.Holds(0))
	assert.Contains(t, rep.String(), "phantom: read ID 1 of \"never\" answered true")
}

func TestStalenessGrantAndDenySplit(t *testing.T) {
	tr := Truth{"k": {Initial: false, Commits: []Commit{
		{At: 1 * sec, Value: true},  // granted from 1 s
		{At: 4 * sec, Value: false}, // revoked at 4 s
	}}}
	reads := []Read{
		{ID: 10, Key: "k", Invoke: 3 * sec, Return: 3 * sec, Granted: false}, // deny: denial ended at 1 s → 2 s stale
		{ID: 11, Key: "k", Invoke: 5 * sec, Return: 6 * sec, Granted: true},  // grant: grant ended at 4 s → 1 s stale
		{ID: 12, Key: "k", Invoke: 7 * sec, Return: 8 * sec, Granted: false}, // deny: fresh
	}
	rep, err := Staleness(reads, tr)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Grant.Reads)
	assert.Equal(t, 2, rep.Deny.Reads)
	assert.Equal(t, time.Second, rep.Grant.MaxStaleness)
	assert.Equal(t, 2*time.Second, rep.Deny.MaxStaleness)
	assert.Equal(t, 11, rep.Grant.Witness.Read.ID)
	assert.Equal(t, 10, rep.Deny.Witness.Read.ID)
	assert.Equal(t, Commit{At: 1 * sec, Value: true}, rep.Deny.Witness.EndCommit)
	assert.True(t, rep.Grant.Holds(time.Second))
	assert.False(t, rep.Deny.Holds(time.Second))
	assert.False(t, rep.Holds(time.Second))
	assert.True(t, rep.Holds(2*time.Second))
}

func TestStalenessWitnessIsTheFirstMaximumAndLIsTheRunStart(t *testing.T) {
	tr := Truth{
		"a": {Initial: true, Commits: []Commit{
			{At: 1 * sec, Value: true},  // no change
			{At: 2 * sec, Value: false}, // this one ends true
			{At: 3 * sec, Value: false}, // no change: must not be taken as the end
		}},
		"b": {Initial: true, Commits: []Commit{{At: 6 * sec, Value: false}}},
	}
	reads := []Read{
		{ID: 1, Key: "a", Invoke: 5 * sec, Return: 5 * sec, Granted: true},   // 3 s
		{ID: 2, Key: "a", Invoke: 10 * sec, Return: 11 * sec, Granted: true}, // 8 s
		{ID: 3, Key: "b", Invoke: 14 * sec, Return: 20 * sec, Granted: true}, // 8 s, a tie: not the witness
		{ID: 4, Key: "b", Invoke: 7 * sec, Return: 8 * sec, Granted: true},   // 1 s
	}
	rep, err := Staleness(reads, tr)
	require.NoError(t, err)
	w := rep.Grant.Witness
	require.NotNil(t, w)
	assert.Equal(t, 2, w.Read.ID)
	assert.Equal(t, 8*time.Second, w.Staleness)
	assert.Equal(t, 2*sec, w.L)
	assert.Equal(t, 1, w.EndIndex, "the commit at 2 s that changed true to false")
	assert.Equal(t, 4, rep.Grant.Reads)
	assert.Equal(t, 4, rep.Grant.Buckets[8])
	assert.Equal(t, 3*time.Second, rep.Grant.P50) // sorted 1,3,8,8: rank ceil(2) = 3 s
	assert.Equal(t, 8*time.Second, rep.Grant.P99)
	out := rep.String()
	assert.Contains(t, out, "witness: read ID 2 of \"a\" answered true")
	assert.Contains(t, out, "ended by commit #1 (at 2000000000 ns (2s), value false)")
}

func TestStalenessDistributionBuckets(t *testing.T) {
	tr := Truth{"k": {Initial: true, Commits: []Commit{{At: 0, Value: false}}}}
	var reads []Read
	stalenesses := []int64{0, 0, 1, 999, 1000, 99_999, 1_000_000, 999_999_999, sec, 10 * sec, 100 * sec}
	for i, s := range stalenesses {
		reads = append(reads, Read{ID: i, Key: "k", Invoke: s, Return: s + 5, Granted: true})
	}
	rep, err := Staleness(reads, tr)
	require.NoError(t, err)
	// 0,0 | 1,999 | 1000 | 99_999 | (none <1ms) | 1ms | (none <100ms) | 999_999_999 | 1s | 10s,100s
	assert.Equal(t, [NumBuckets]int{2, 2, 1, 1, 0, 1, 0, 1, 1, 2}, rep.Grant.Buckets)
	assert.Equal(t, time.Duration(100*sec), rep.Grant.MaxStaleness)
	assert.Equal(t, time.Duration(99_999), rep.Grant.P50) // 11 values, nearest rank ceil(5.5) = 6
	assert.Equal(t, time.Duration(100*sec), rep.Grant.P99)
	assert.Equal(t, "<1µs", BucketLabel(1))
	assert.Equal(t, "?", BucketLabel(NumBuckets))
	assert.Contains(t, rep.Grant.String(), "reads: 11 reads, max staleness 1m40s")
}

func TestStalenessRejectsBadInput(t *testing.T) {
	_, err := Staleness([]Read{{ID: 3, Key: "k", Invoke: 5, Return: 4}}, revokedAt1s())
	assert.ErrorContains(t, err, "read #0 (ID 3, key \"k\"): invoke 5 ns is after return 4 ns")
	_, err = Staleness([]Read{{ID: 3, Key: "zz", Invoke: 5, Return: 6}}, revokedAt1s())
	assert.ErrorContains(t, err, "unknown key \"zz\"")
	_, err = Staleness(nil, Truth{"k": {Commits: []Commit{{At: 2}, {At: 1}}}})
	assert.ErrorContains(t, err, "nondecreasing")
	rep, err := Staleness(nil, nil)
	require.NoError(t, err)
	assert.True(t, rep.Holds(0))
}

func TestStalenessSaturatesAtExtremeInstants(t *testing.T) {
	tr := Truth{"k": {Initial: true, Commits: []Commit{{At: math.MinInt64, Value: false}}}}
	rep, err := Staleness([]Read{{Key: "k", Invoke: math.MaxInt64, Return: math.MaxInt64, Granted: true}}, tr)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(math.MaxInt64), rep.Grant.MaxStaleness)
}

// oracleStaleness is the definition evaluated directly, independently of
// keyIndex: L is the largest of return (if a holds there) and every commit
// instant ≤ return at which the value before it was a and after it is not.
func oracleStaleness(r Read, kt KeyTruth) (s int64, phantom bool) {
	valueAt := func(t int64, inclusive bool) bool {
		v := kt.Initial
		for _, c := range kt.Commits {
			if c.At < t || (inclusive && c.At == t) {
				v = c.Value
			}
		}
		return v
	}
	best, found := int64(0), false
	if valueAt(r.Return, true) == r.Granted {
		best, found = r.Return, true
	}
	for _, c := range kt.Commits {
		if c.At <= r.Return && valueAt(c.At, false) == r.Granted && valueAt(c.At, true) != r.Granted {
			if !found || c.At > best {
				best, found = c.At, true
			}
		}
	}
	if !found {
		return 0, true
	}
	return max(0, r.Invoke-best), false
}

// genHistory draws a small truth over keys k0..k2 with commits in [0, 20]
// (ties likely) and reads around them.
func genHistory(t *rapid.T) (Truth, []Read) {
	tr := make(Truth)
	nKeys := rapid.IntRange(1, 3).Draw(t, "keys")
	keys := []string{"k0", "k1", "k2"}[:nKeys]
	for _, k := range keys {
		_ = tr.Declare(k, rapid.Bool().Draw(t, "initial"))
		at := int64(0)
		for range rapid.IntRange(0, 6).Draw(t, "commits") {
			at += rapid.Int64Range(0, 5).Draw(t, "gap")
			_ = tr.Commit(k, at, rapid.Bool().Draw(t, "value"))
		}
	}
	var reads []Read
	for i := range rapid.IntRange(0, 10).Draw(t, "reads") {
		inv := rapid.Int64Range(0, 25).Draw(t, "invoke")
		reads = append(reads, Read{
			ID:      i,
			Key:     rapid.SampledFrom(keys).Draw(t, "key"),
			Invoke:  inv,
			Return:  inv + rapid.Int64Range(0, 6).Draw(t, "duration"),
			Granted: rapid.Bool().Draw(t, "granted"),
		})
	}
	return tr, reads
}

func TestStalenessMatchesTheDefinition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr, reads := genHistory(t)
		rep, err := Staleness(reads, tr)
		if err != nil {
			t.Fatalf("Staleness: %v", err)
		}
		var wantMax [2]int64
		var wantPhantoms [2]int
		for _, r := range reads {
			c := 0
			if r.Granted {
				c = 1
			}
			s, ph := oracleStaleness(r, tr[r.Key])
			if ph {
				wantPhantoms[c]++
			} else {
				wantMax[c] = max(wantMax[c], s)
			}
		}
		if int64(rep.Deny.MaxStaleness) != wantMax[0] || int64(rep.Grant.MaxStaleness) != wantMax[1] {
			t.Fatalf("max staleness deny/grant = %v/%v, want %d/%d\n%s", rep.Deny.MaxStaleness, rep.Grant.MaxStaleness, wantMax[0], wantMax[1], rep)
		}
		if rep.Deny.Phantoms != wantPhantoms[0] || rep.Grant.Phantoms != wantPhantoms[1] {
			t.Fatalf("phantoms deny/grant = %d/%d, want %v", rep.Deny.Phantoms, rep.Grant.Phantoms, wantPhantoms)
		}
		for _, c := range []ClassReport{rep.Grant, rep.Deny} {
			if w := c.Witness; w != nil {
				s, _ := oracleStaleness(w.Read, tr[w.Read.Key])
				if s != int64(c.MaxStaleness) {
					t.Fatalf("witness %+v has staleness %d, not the max %v", w.Read, s, c.MaxStaleness)
				}
			}
		}
	})
}
