package simdb_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// TestSnapshotFollowsTheLag: a read's snapshot is taken its lag after it
// is issued, so a write that commits during the lag is seen and one that
// commits after the snapshot is not; the statement returns its latency
// after the snapshot.
func TestSnapshotFollowsTheLag(t *testing.T) {
	lat := simdb.Latency{BaseMin: ms(1), BaseMax: ms(1), LagMin: ms(3), LagMax: ms(5)}
	var issued, snap, end time.Time
	var got int
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Latency: lat, Statements: []string{"read"}, Hook: func(st simdb.Statement) simdb.Fault {
			if st.Write {
				return simdb.Fault{Fixed: true}
			}
			return simdb.Fault{}
		}})
		s.Go("writer", func() {
			_ = s.Sleep(bg, ms(2)) // inside the lag: seen
			_, _ = db.Write(bg, "w1", inc)
			_ = s.Sleep(bg, ms(4)) // +6 ms, past the snapshot: not seen
			_, _ = db.Write(bg, "w2", inc)
		})
		c, err := db.Acquire(bg)
		if err != nil {
			s.Failf("acquire: %v", err)
		}
		defer c.Release()
		issued = s.Now()
		got, err = simdb.Query(bg, c, "read", nil, func(st *counter) int { snap = s.Now(); return st.n })
		if err != nil {
			s.Failf("read: %v", err)
		}
		end = s.Now()
	})
	lag := snap.Sub(issued)
	assert.True(t, lag >= ms(3) && lag <= ms(5), "lag %v outside [3ms, 5ms]", lag)
	assert.Equal(t, ms(1), end.Sub(snap), "the latency follows the snapshot")
	assert.Equal(t, 1, got, "the commit in the lag is seen, the one after the snapshot is not")
}

// TestFixedLatencyHasNoLag: a statement whose latency the Hook fixes is
// the scenario's to time: its snapshot is at its issue instant, whatever
// lag the model draws, and AfterSnapshot runs there.
func TestFixedLatencyHasNoLag(t *testing.T) {
	lat := simdb.Latency{LagMin: ms(3), LagMax: ms(5)}
	var issued, snap, after, end time.Time
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Latency: lat, Statements: []string{"read"}, Hook: func(st simdb.Statement) simdb.Fault {
			return simdb.Fault{Fixed: true, Latency: ms(7), AfterSnapshot: func() { after = s.Now() }}
		}})
		c, err := db.Acquire(bg)
		if err != nil {
			s.Failf("acquire: %v", err)
		}
		defer c.Release()
		issued = s.Now()
		_, err = simdb.Query(bg, c, "read", nil, func(st *counter) int { snap = s.Now(); return st.n })
		if err != nil {
			s.Failf("read: %v", err)
		}
		end = s.Now()
	})
	assert.Equal(t, issued, snap)
	assert.Equal(t, issued, after)
	assert.Equal(t, ms(7), end.Sub(issued))
}

// TestLagAndTailDraws: lags stay in their range, or in the tail's with
// the latency, and a tail of probability p is drawn at about that rate.
func TestLagAndTailDraws(t *testing.T) {
	l := simdb.Latency{BaseMin: ms(1), BaseMax: ms(2), TailProb: 0.1, TailMax: ms(50), LagMin: ms(0), LagMax: ms(1), LagTailProb: 0.05, LagTailMax: ms(9)}
	require.NoError(t, l.Validate())
	r := newRand(7)
	tails, lagTails := 0, 0
	const n = 20000
	for range n {
		lag, d, slow := l.Sample(r)
		require.False(t, slow)
		require.True(t, d >= ms(1) && d <= ms(50) && lag >= 0 && lag <= ms(9), "lag %v, latency %v", lag, d)
		if d > ms(2) {
			tails++
		}
		if lag > ms(1) {
			lagTails++
			require.Greater(t, d, ms(2), "the lag's tail comes with the latency's")
		}
	}
	assert.InDelta(t, 0.1*n, tails, 4*42.5)     // sd = sqrt(n p (1-p))
	assert.InDelta(t, 0.05*n, lagTails, 4*30.8) // sd = sqrt(n p (1-p))
	assert.Equal(t, "1ms–2ms, tail 10% to 50ms, snapshot lag 0s–1ms (tail 5% to 9ms)", l.String())
	for _, bad := range []simdb.Latency{
		{TailProb: 2},
		{BaseMax: ms(2), TailProb: 0.1, TailMax: ms(1)},
		{LagMin: ms(2), LagMax: ms(1)},
		{LagMax: ms(2), LagTailProb: 0.1, LagTailMax: ms(1)},
		{LagTailProb: -1},
		{LagMax: 2 * time.Hour},
	} {
		assert.Error(t, bad.Validate(), "%+v", bad)
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
