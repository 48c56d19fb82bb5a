package baseline_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/model/baseline"
)

// TW-9's baseline keeps FullScan's semantics: the same random operations on
// both give the same timeouts at every pass, while each locked pass looks up
// every open connection once.
func TestFullScanLockedMatchesFullScan(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rnd := rand.New(rand.NewPCG(seed, 7))
		plain := model.NewFullScan()
		locked, err := baseline.NewFullScanLocked(rt.Real())
		require.NoError(t, err)
		var ps, ls []*model.FullScanConn
		now := origin
		for step := range 400 {
			now = now.Add(time.Duration(rnd.IntN(700)) * time.Millisecond)
			switch op := rnd.IntN(7); {
			case op == 0 || len(ps) == 0:
				ps, ls = append(ps, open(plain)), append(ls, locked.Open())
			case op == 1:
				i, d := rnd.IntN(len(ps)), time.Duration(rnd.IntN(10_000))*time.Millisecond
				require.Equal(t, plain.SetInactivityTimeout(ps[i], now, d) == nil, locked.SetInactivityTimeout(ls[i], now, d) == nil)
			case op == 2:
				i, d := rnd.IntN(len(ps)), time.Duration(rnd.IntN(10_000))*time.Millisecond
				require.Equal(t, plain.SetActiveTimeout(ps[i], now, d) == nil, locked.SetActiveTimeout(ls[i], now, d) == nil)
			case op == 3:
				i := rnd.IntN(len(ps))
				plain.Close(ps[i])
				locked.Close(ls[i])
				assert.Nil(t, locked.Mutex(ls[i]), "a closed connection has no mutex")
			default:
				i := rnd.IntN(len(ps))
				plain.NetActivity(ps[i], now)
				locked.NetActivity(ls[i], now)
			}
			if step%5 == 0 {
				a, b := plain.Pass(now), locked.Pass(now)
				require.Equal(t, a.Timeouts, b.Timeouts, "seed %d step %d", seed, step)
				require.Equal(t, plain.Len(), b.Lookups)
				require.Equal(t, plain.Len(), locked.Len())
				require.Zero(t, b.Busy)
			}
		}
	}
}

// A connection whose mutex is held is skipped, as MUTEX_TRY_LOCK made the
// old cop do, and timed out by the first pass after it is released. Closing
// moves the last connection's lock along with it.
func TestFullScanLockedSkipsBusyConnection(t *testing.T) {
	_, err := baseline.NewFullScanLocked(nil)
	require.Error(t, err)
	l, err := baseline.NewFullScanLocked(rt.Real())
	require.NoError(t, err)
	a, b, c := l.Open(), l.Open(), l.Open()
	for _, x := range []*model.FullScanConn{a, b, c} {
		require.NoError(t, l.SetInactivityTimeout(x, sec(0), time.Second))
	}
	mc := l.Mutex(c)
	l.Close(a) // c moves into a's place, with its mutex
	require.Same(t, mc, l.Mutex(c))
	require.True(t, mc.TryLock())
	p := l.Pass(sec(2))
	assert.Equal(t, 2, p.Lookups)
	assert.Equal(t, 1, p.Busy)
	require.Len(t, p.Timeouts, 1)
	assert.Equal(t, b.ID(), p.Timeouts[0].ID)
	mc.Unlock()
	p = l.Pass(sec(3))
	require.Len(t, p.Timeouts, 1)
	assert.Equal(t, c.ID(), p.Timeouts[0].ID)
	assert.Zero(t, p.Busy)
	assert.Nil(t, l.Mutex(a))
}
