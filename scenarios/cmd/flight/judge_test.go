package main

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/flight"
)

// The judge on a hand-made history: a channel created open at 0, made
// private at 1 s; a non-member granted at 1.9 s holds OC-2 (0.9 s stale),
// one granted at 2.2 s breaks it, and U widens the bound by exactly U.
func TestOC2JudgeOnAHandMadeHistory(t *testing.T) {
	k, ch, u1, u2 := authz.NewID('k', 1), authz.NewID('c', 1), authz.NewID('u', 1), authz.NewID('u', 2)
	sec := int64(time.Second)
	log := []flight.Commit{
		{Seq: 1, At: 0, Acked: 1000, Community: k, Channel: ch, Open: true, Listed: true},
		{Seq: 2, At: sec, Acked: sec + 1000, Community: k, Channel: ch, Open: false, Listed: true},
	}
	nonMember := func(r read) bool { return r.Class == classNonMember }
	judge := func(reads []read, u uncertainty) verdict {
		truth, err := buildTruth(log, reads)
		require.NoError(t, err)
		v, err := judgeStaleness("OC-2", "open set max age", "test", true, false, reads, nonMember, truth, u, 0)
		require.NoError(t, err)
		return v
	}
	ok := read{Op: flight.OpGranted, Class: classNonMember, Community: k, User: u1, Channel: ch, Invoke: 19 * sec / 10, Return: 19*sec/10 + 1000, OK: true}
	u := uncertainty{Clock: clockReport{Resolution: time.Microsecond}, Commit: commitUncertainty(log), ByAt: commitSlack(log)}
	v := judge([]read{ok}, u)
	assert.True(t, v.Holds)
	assert.Equal(t, 900*time.Millisecond, v.Worst)
	assert.InDelta(t, 0.9, v.Tight, 1e-9)
	assert.Equal(t, time.Second+time.Microsecond, v.Limit(), "the bound plus the clock's uncertainty")
	assert.Equal(t, 900*time.Millisecond-1000, v.Adjusted, "less its ending commit's Acked − At")

	late := ok
	late.User, late.Invoke, late.Return = u2, 22*sec/10, 22*sec/10+1000
	v = judge([]read{ok, late}, u)
	assert.False(t, v.Holds)
	assert.Equal(t, 1200*time.Millisecond, v.Worst)
	assert.Equal(t, 1200*time.Millisecond-1000, v.Adjusted)

	// A grant after the channel never existed for that community is a
	// phantom: never true.
	other := ok
	other.Community = authz.NewID('k', 2)
	v = judge([]read{other}, u)
	assert.False(t, v.Holds)
}

type stringsBuilder = strings.Builder

// The fault schedule: every kind drawn, within the churn, never two
// faults at once on one relay.
func TestScheduleCoversEveryKindWithoutOverlap(t *testing.T) {
	length := 10 * time.Second
	fs := schedule(rand.New(rand.NewPCG(1, 1)), 2, length, 2*10+len(faultKinds))
	kinds := map[string]bool{}
	for i, f := range fs {
		kinds[f.Kind] = true
		assert.LessOrEqual(t, f.At+f.For, length)
		for _, g := range fs[i+1:] {
			if g.Relay == f.Relay {
				assert.False(t, f.At < g.At+g.For && g.At < f.At+f.For, "faults %v and %v overlap", f, g)
			}
		}
	}
	assert.Len(t, kinds, len(faultKinds))
}
