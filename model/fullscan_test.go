package model_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/model"
)

var origin = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func sec(s float64) time.Time { return origin.Add(time.Duration(s * float64(time.Second))) }

// The full scan visits and looks up every open connection on every pass.
func TestFullScanVisitsEveryConnection(t *testing.T) {
	f := model.NewFullScan()
	for range 10 {
		c, _ := f.Open(origin)
		require.NoError(t, f.SetInactivityTimeout(c, sec(0), time.Hour))
	}
	p := f.Pass(sec(1))
	assert.Equal(t, model.FullScanPass{Visited: 10, Lookups: 10, Timeouts: p.Timeouts}, p)
	assert.Empty(t, p.Timeouts)
}

// TW-2, the reference's comparison: a deadline has passed only once now is
// strictly after it; a pass at exactly the deadline does not fire it.
func TestFullScanFiresStrictlyAfterDeadline(t *testing.T) {
	f := model.NewFullScan()
	c, _ := f.Open(origin)
	require.NoError(t, f.SetInactivityTimeout(c, sec(0), 10*time.Second))
	f.NetActivity(c, sec(1)) // deadline 11 s, on the grid
	assert.Empty(t, f.Pass(sec(11)).Timeouts)
	p := f.Pass(sec(12))
	require.Len(t, p.Timeouts, 1)
	assert.Equal(t, model.FullScanTimeout{ID: 1, Kind: model.InactivityTimeout, Deadline: sec(11), At: sec(12)}, p.Timeouts[0])
	assert.True(t, c.Deadline().IsZero(), "fired, disarmed")
}

func TestFullScanKindsActivityAndClose(t *testing.T) {
	f := model.NewFullScan()
	a, _ := f.Open(origin)
	b, _ := f.Open(origin)
	assert.Equal(t, uint64(1), a.ID())
	assert.Equal(t, uint64(2), b.ID())
	require.NoError(t, f.SetInactivityTimeout(a, sec(0), 2*time.Second))
	require.NoError(t, f.SetActiveTimeout(a, sec(0), 3*time.Second))
	require.NoError(t, f.SetActiveTimeout(b, sec(0), 10*time.Second))
	f.NetActivity(a, sec(1))
	f.NetActivity(a, sec(0.5)) // never earlier
	assert.Equal(t, sec(3), a.InactivityDeadline())
	assert.Equal(t, sec(3), a.ActiveDeadline())
	f.NetActivity(b, sec(1)) // no inactivity timeout: nothing to push
	assert.True(t, b.InactivityDeadline().IsZero())
	p := f.Pass(sec(4))
	require.Len(t, p.Timeouts, 2)
	assert.Equal(t, model.InactivityTimeout, p.Timeouts[0].Kind, "inactivity first")
	assert.Equal(t, model.ActiveTimeout, p.Timeouts[1].Kind)
	assert.Equal(t, "inactivity", model.InactivityTimeout.String())
	assert.Equal(t, "active", model.ActiveTimeout.String())
	assert.Equal(t, "TimeoutKind(7)", model.TimeoutKind(7).String())

	f.Close(a)
	f.Close(a)
	assert.True(t, a.Closed())
	assert.Equal(t, 1, f.Len())
	assert.ErrorIs(t, f.SetActiveTimeout(a, sec(4), time.Second), model.ErrFullScanConn)
	assert.ErrorIs(t, model.NewFullScan().SetInactivityTimeout(b, sec(4), time.Second), model.ErrFullScanConn)
	assert.ErrorContains(t, f.SetInactivityTimeout(b, sec(4), -1), "negative")
	assert.ErrorContains(t, f.SetActiveTimeout(b, sec(4), -1), "negative")
	assert.Equal(t, 1, f.Pass(sec(5)).Visited)
}

// TW-10's reference: a queue of 3 evicts the least recently active
// connection (opening and activity count, setting a timeout does not),
// reports it once at the opening instant and closes it.
func TestFullScanQueueEvictsLeastRecentlyActive(t *testing.T) {
	f := model.NewFullScanQueue(3)
	var cs []*model.FullScanConn
	for i := range 3 {
		c, ev := f.Open(sec(float64(i)))
		require.Nil(t, ev)
		require.NoError(t, f.SetInactivityTimeout(c, sec(float64(i)), 5*time.Second))
		cs = append(cs, c)
	}
	f.NetActivity(cs[0], sec(3))
	require.NoError(t, f.SetActiveTimeout(cs[1], sec(3), time.Hour))
	_, ev := f.Open(sec(3.5))
	require.NotNil(t, ev)
	assert.Equal(t, model.FullScanTimeout{ID: 2, Kind: model.EvictionTimeout, At: sec(3.5)}, *ev)
	assert.True(t, cs[1].Closed())
	assert.True(t, cs[1].Deadline().IsZero())
	_, ev = f.Open(sec(4))
	require.NotNil(t, ev)
	assert.Equal(t, uint64(3), ev.ID)
	var fired []uint64
	for s := 1; s <= 20; s++ {
		for _, to := range f.Pass(sec(float64(s))).Timeouts {
			fired = append(fired, to.ID)
		}
	}
	assert.Equal(t, []uint64{1}, fired)
	assert.Equal(t, "evicted", model.EvictionTimeout.String())
	_, ev = model.NewFullScan().Open(origin)
	assert.Nil(t, ev, "no limit: no eviction")
}
