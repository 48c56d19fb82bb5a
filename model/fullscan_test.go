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
		c := f.Open()
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
	c := f.Open()
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
	a, b := f.Open(), f.Open()
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
