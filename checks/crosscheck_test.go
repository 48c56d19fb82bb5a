package checks

import (
	"math"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestCrossCheckBoundariesArePinned fixes the boundary convention: each case
// sits exactly on an edge. An off-by-one in either checker flips one side and
// breaks agreement or the expected verdict. Examples: a commit not in effect
// at its own instant, an open interval, S < Δ instead of S ≤ Δ.
func TestCrossCheckBoundariesArePinned(t *testing.T) {
	const delta = 1000
	revoked := Truth{"k": {Initial: true, Commits: []Commit{{At: 5000, Value: false}}}}
	granted := Truth{"k": {Initial: false, Commits: []Commit{{At: 5000, Value: true}}}}
	cases := []struct {
		name  string
		truth Truth
		read  Read
		holds bool // the expected verdict at delta
	}{
		{"S == delta: the revoke at exactly invoke-delta", revoked, Read{Key: "k", Invoke: 5000 + delta, Return: 9000, Granted: true}, true},
		{"S == delta+1", revoked, Read{Key: "k", Invoke: 5000 + delta + 1, Return: 9000, Granted: true}, false},
		{"revoke at exactly return: old answer is fresh", revoked, Read{Key: "k", Invoke: 4000, Return: 5000, Granted: true}, true},
		{"revoke at exactly return: new answer is fresh", revoked, Read{Key: "k", Invoke: 4000, Return: 5000, Granted: false}, true},
		{"grant at exactly return is in effect", granted, Read{Key: "k", Invoke: 5000, Return: 5000, Granted: true}, true},
		{"grant one ns after return is a phantom", granted, Read{Key: "k", Invoke: 4999, Return: 4999, Granted: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Staleness([]Read{c.read}, c.truth)
			require.NoError(t, err)
			assert.Equal(t, c.holds, rep.Holds(delta), "exact checker\n%s", rep)
			for _, d := range []time.Duration{delta - 1, delta, delta + 1} {
				agree, detail := CrossCheck([]Read{c.read}, c.truth, d)
				assert.True(t, agree, detail)
			}
		})
	}
}

func TestCrossCheckSeveralCommitsAtOneInstant(t *testing.T) {
	// false → (true, false) at 5: true was never the value at any instant.
	tr := Truth{"k": {Initial: false, Commits: []Commit{{At: 5, Value: true}, {At: 5, Value: false}, {At: 9, Value: true}}}}
	phantom := []Read{{Key: "k", Invoke: 0, Return: 8, Granted: true}}
	agree, detail := CrossCheck(phantom, tr, 100)
	assert.True(t, agree, detail)
	assert.Contains(t, detail, "porcupine says Illegal")

	// Why the commits must collapse: as separate writes, porcupine would place
	// the read between them and accept the phantom.
	separate := []LinOp{
		{Key: "k", Write: true, Value: true, Call: 5, Return: 5},
		{Key: "k", Write: true, Value: false, Call: 5, Return: 5},
		{Key: "k", Value: true, Call: -100, Return: 8},
	}
	assert.Equal(t, porcupine.Ok, Linearizable(separate, map[string]bool{"k": false}, 0).Verdict)

	ops, init := shiftedHistory(phantom, tr, 100)
	assert.Equal(t, []LinOp{
		{Key: "k", Write: true, Value: false, Call: 5, Return: 5, Pod: -1},
		{Key: "k", Write: true, Value: true, Call: 9, Return: 9, Pod: -1},
		{Key: "k", Value: true, Call: -100, Return: 8},
	}, ops)
	assert.Equal(t, map[string]bool{"k": false}, init)
}

func TestCrossCheckRejectsBadInput(t *testing.T) {
	agree, detail := CrossCheck(nil, nil, -1)
	assert.False(t, agree)
	assert.Contains(t, detail, "negative delta")
	agree, detail = CrossCheck([]Read{{Key: "nope"}}, Truth{}, 0)
	assert.False(t, agree)
	assert.Contains(t, detail, "unknown key")
}

func TestCrossCheckSaturatesTheShift(t *testing.T) {
	tr := Truth{"k": {Initial: true, Commits: []Commit{{At: math.MinInt64 + 10, Value: false}}}}
	reads := []Read{{Key: "k", Invoke: math.MinInt64 + 20, Return: math.MinInt64 + 30, Granted: true}}
	agree, detail := CrossCheck(reads, tr, time.Duration(math.MaxInt64))
	assert.True(t, agree, detail)
	assert.Contains(t, detail, "porcupine says Ok")
}

// TestCrossCheckAgreesOnRandomHistories is the property the scenarios rely
// on. For random truths (ties included) and reads, porcupine on the Δ-shifted
// history says Ok exactly when the exact checker says max S ≤ Δ. That holds
// for every Δ from 0 past the largest possible staleness.
func TestCrossCheckAgreesOnRandomHistories(t *testing.T) {
	var holds, fails int
	rapid.Check(t, func(t *rapid.T) {
		tr, reads := genHistory(t)
		for d := time.Duration(0); d <= 27; d++ {
			agree, detail := CrossCheck(reads, tr, d)
			if !agree {
				t.Fatalf("%s", detail)
			}
			rep, _ := Staleness(reads, tr)
			if rep.Holds(d) {
				holds++
			} else {
				fails++
			}
		}
	})
	// Both verdicts must actually occur, or the property proves little.
	assert.Positive(t, holds)
	assert.Positive(t, fails)
}

// A bounded cross-check that runs out of time says so: it never reports an
// undecided comparison as agreement.
func TestCrossCheckWithinReportsUndecided(t *testing.T) {
	truth := Truth{}
	require.NoError(t, truth.Declare("k", false))
	var reads []Read
	for i := range 3000 {
		at := int64(i) * 1000
		require.NoError(t, truth.Commit("k", at, i%2 == 0))
		reads = append(reads, Read{ID: i, Key: "k", Invoke: at + 10, Return: at + 20, Granted: i%2 == 1})
	}
	r := CrossCheckWithin(reads, truth, time.Millisecond, time.Nanosecond)
	assert.True(t, r.Undecided, r.Detail)
	assert.False(t, r.Agree)
	full := CrossCheckWithin(reads, truth, 0, 0)
	assert.False(t, full.Undecided)
	assert.True(t, full.Agree, full.Detail)
}
