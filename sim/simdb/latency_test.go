package simdb_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/sim/simdb"
)

// TestLatencyDrawStaysInItsRanges: for any valid latency model, every draw
// lies in the base range or, flagged slow, in the tail's range.
func TestLatencyDrawStaysInItsRanges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bmin := time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(t, "bmin"))
		bmax := bmin + time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(t, "bspan"))
		smin := time.Duration(rapid.Int64Range(0, int64(3*time.Second)).Draw(t, "smin"))
		smax := smin + time.Duration(rapid.Int64Range(1, int64(3*time.Second)).Draw(t, "sspan"))
		l := simdb.Latency{BaseMin: bmin, BaseMax: bmax, SlowProb: rapid.Float64Range(0, 1).Draw(t, "p"), SlowMin: smin, SlowMax: smax}
		require.NoError(t, l.Validate())
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		for range 50 {
			d, slow := l.Draw(r)
			if slow {
				require.True(t, d >= smin && d <= smax, "slow %v outside [%v, %v]", d, smin, smax)
			} else {
				require.True(t, d >= bmin && d <= bmax, "base %v outside [%v, %v]", d, bmin, bmax)
			}
		}
	})
}

// TestSlowTailFrequency: the slow tail is drawn at its configured rate, and
// never when it is off.
func TestSlowTailFrequency(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	l := simdb.Latency{BaseMin: time.Millisecond, BaseMax: 5 * time.Millisecond, SlowProb: 0.05, SlowMin: 200 * time.Millisecond, SlowMax: 3 * time.Second}
	slow := 0
	const n = 20000
	for range n {
		if _, s := l.Draw(r); s {
			slow++
		}
	}
	assert.InDelta(t, 0.05*n, slow, 4*30.8) // sd = sqrt(n p (1-p))
	l.SlowProb = 0
	for range 1000 {
		_, s := l.Draw(r)
		require.False(t, s)
	}
	assert.Equal(t, "1ms–5ms", l.String())
	assert.Equal(t, "0s", simdb.Latency{}.String())
}

// TestSwarmSwitchesKindsPerSeed: each fault kind is on for about half of the
// seeds, every plan is valid, the same source gives the same plan, and the
// plan's String names what is on.
func TestSwarmSwitchesKindsPerSeed(t *testing.T) {
	base := simdb.Config{Latency: simdb.DefaultLatency, ReadErrorProb: 0.9, Statements: []string{"q"}}
	var slow, readE, writeE, pool int
	const n = 2000
	for seed := range uint64(n) {
		c := simdb.Swarm(rand.New(rand.NewPCG(seed, 0)), base)
		require.NoError(t, c.Validate())
		again := simdb.Swarm(rand.New(rand.NewPCG(seed, 0)), base)
		require.Equal(t, c.String(), again.String())
		require.Equal(t, base.Latency.BaseMin, c.Latency.BaseMin)
		require.Equal(t, base.Statements, c.Statements)
		if c.Latency.SlowProb > 0 {
			slow++
			require.Contains(t, c.String(), "slow")
			require.True(t, c.Latency.SlowMin >= 200*time.Millisecond && c.Latency.SlowMax <= 3*time.Second)
		}
		if c.ReadErrorProb > 0 {
			readE++
			require.LessOrEqual(t, c.ReadErrorProb, 0.05)
		} else {
			require.Contains(t, c.String(), "read_errors=off")
		}
		if c.WriteErrorProb > 0 {
			writeE++
		}
		if c.PoolSize > 0 {
			pool++
			require.LessOrEqual(t, c.PoolSize, 4)
		}
		require.True(t, strings.HasPrefix(c.String(), "db pool="))
	}
	for name, k := range map[string]int{"slow": slow, "read errors": readE, "write errors": writeE, "pool": pool} { //windtunnel:unordered independent checks
		assert.InDelta(t, n/2, k, 4*22.4, "%s on for %d of %d seeds", name, k, n)
	}
}
