package netsim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
)

// randomOps draws up to six operations on one connection, off the grid.
func randomOps(rnd interface {
	IntN(int) int
	Int64N(int64) int64
}, ring int, horizon time.Duration) []ConnOp {
	var ops []ConnOp
	at := time.Duration(0)
	for range 1 + rnd.IntN(6) {
		at += time.Duration(1 + rnd.Int64N(int64(horizon/8)))
		if at%time.Second == 0 {
			at += time.Millisecond
		}
		if at >= horizon {
			break
		}
		op := ConnOp{At: at}
		switch rnd.IntN(5) {
		case 0, 1:
			op.Kind, op.D = SetInactivity, time.Duration(rnd.Int64N(int64(3*ring)*int64(time.Second)))
		case 2:
			op.Kind, op.D = SetActive, time.Duration(rnd.Int64N(int64(3*ring)*int64(time.Second)))
		case 3:
			op.Kind = Activity
		default:
			if rnd.IntN(4) == 0 {
				op.Kind = Close
			} else {
				op.Kind = Activity
			}
		}
		ops = append(ops, op)
		if op.Kind == Close {
			break
		}
	}
	return ops
}

// Predict is the oracle of the exact-count tests, so it is checked against
// the real wheel cop, driven directly: one connection per trial, passes at
// every tick, rings from 4 to 4,096 (wraps included). Visits and timeouts
// (kind, deadline, pass) must agree exactly.
func TestPredictMatchesTheWheelCop(t *testing.T) {
	rnd := newRand(42)
	for trial := range 3000 {
		ring := []int{4, 8, 16, 4096}[rnd.IntN(4)]
		horizon := time.Duration(4*ring+5) * time.Second
		if ring == 4096 {
			horizon = 200 * time.Second
		}
		ops := randomOps(rnd, min(ring, 60), horizon)
		until := horizon + time.Duration(3*min(ring, 60)+2)*time.Second
		want, err := Predict(int64(ring), time.Second, ops, until)
		require.NoError(t, err)

		cfg := inactivitycop.DefaultConfig()
		cfg.Buckets = ring
		cop, err := inactivitycop.NewCop(cfg, epoch)
		require.NoError(t, err)
		c := cop.Open()
		var got Prediction
		k := 0
		pass := func(upTo time.Duration) {
			for ; time.Duration(k)*time.Second <= upTo; k++ {
				r := cop.Pass(epoch.Add(time.Duration(k) * time.Second))
				got.Visits += r.Visited
				for _, to := range r.Timeouts {
					got.Fired = append(got.Fired, Timeout{Kind: to.Kind, Deadline: since(to.Deadline), At: since(to.At)})
				}
			}
		}
		for _, op := range ops {
			pass(op.At)
			now := epoch.Add(op.At)
			switch op.Kind {
			case SetInactivity:
				require.NoError(t, cop.SetInactivityTimeout(c, now, op.D))
			case SetActive:
				require.NoError(t, cop.SetActiveTimeout(c, now, op.D))
			case Activity:
				cop.NetActivity(c, now)
			case Close:
				cop.Close(c)
			}
		}
		pass(until)
		require.Equal(t, want, got, "trial %d, ring %d, ops %v", trial, ring, ops)
	}
}

func TestPredictRejects(t *testing.T) {
	_, err := Predict(16, time.Second, []ConnOp{{At: time.Second, Kind: Activity}}, time.Minute)
	assert.Error(t, err, "on the grid")
	_, err = Predict(16, time.Second, []ConnOp{{At: 2500 * time.Millisecond, Kind: Activity}, {At: 1500 * time.Millisecond, Kind: Activity}}, time.Minute)
	assert.Error(t, err, "out of order")
	_, err = Predict(16, time.Second, []ConnOp{{At: 2500 * time.Millisecond, Kind: Activity}}, time.Second)
	assert.Error(t, err, "after until")
}
