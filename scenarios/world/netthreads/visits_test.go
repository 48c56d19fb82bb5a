package netthreads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
)

// randomOps draws up to six operations on one connection, off the grid.
func randomOps(rnd interface {
	IntN(int) int
	Int64N(int64) int64
}, ring int, horizon time.Duration) []checks.CopOp {
	var ops []checks.CopOp
	at := time.Duration(0)
	for range 1 + rnd.IntN(6) {
		at += time.Duration(1 + rnd.Int64N(int64(horizon/8)))
		if at%time.Second == 0 {
			at += time.Millisecond
		}
		if at >= horizon {
			break
		}
		op := checks.CopOp{At: at}
		switch rnd.IntN(5) {
		case 0, 1:
			op.Kind, op.D = checks.OpSetInactivity, time.Duration(rnd.Int64N(int64(3*ring)*int64(time.Second)))
		case 2:
			op.Kind, op.D = checks.OpSetActive, time.Duration(rnd.Int64N(int64(3*ring)*int64(time.Second)))
		case 3:
			op.Kind = checks.OpActivity
		default:
			if rnd.IntN(4) == 0 {
				op.Kind = checks.OpClose
			} else {
				op.Kind = checks.OpActivity
			}
		}
		ops = append(ops, op)
		if op.Kind == checks.OpClose {
			break
		}
	}
	return ops
}

// checks.PredictCop is the oracle of the exact-count tests, so it is checked against
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
		want, err := checks.PredictCop(int64(ring), time.Second, ops, until)
		require.NoError(t, err)

		cfg := inactivitycop.DefaultConfig()
		cfg.Buckets = ring
		cop, err := inactivitycop.NewCop(cfg, epoch)
		require.NoError(t, err)
		c, _ := cop.Open(epoch)
		var got checks.CopPrediction
		k := 0
		pass := func(upTo time.Duration) {
			for ; time.Duration(k)*time.Second <= upTo; k++ {
				r := cop.Pass(epoch.Add(time.Duration(k) * time.Second))
				got.Visits += r.Visited
				for _, to := range r.Timeouts {
					got.Fired = append(got.Fired, event(0, to.Kind, to.Deadline, to.At))
				}
			}
		}
		for _, op := range ops {
			pass(op.At)
			now := epoch.Add(op.At)
			switch op.Kind {
			case checks.OpSetInactivity:
				require.NoError(t, cop.SetInactivityTimeout(c, now, op.D))
			case checks.OpSetActive:
				require.NoError(t, cop.SetActiveTimeout(c, now, op.D))
			case checks.OpActivity:
				cop.NetActivity(c, now)
			case checks.OpClose:
				cop.Close(c)
			}
		}
		pass(until)
		require.Equal(t, want, got, "trial %d, ring %d, ops %v", trial, ring, ops)
	}
}
