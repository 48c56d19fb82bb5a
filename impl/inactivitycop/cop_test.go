package inactivitycop_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/stats"
)

var origin = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func sec(s float64) time.Time { return origin.Add(time.Duration(s * float64(time.Second))) }

func newCop(t testing.TB, mod func(*inactivitycop.Config)) *inactivitycop.Cop {
	t.Helper()
	cfg := inactivitycop.DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	cop, err := inactivitycop.NewCop(cfg, origin)
	require.NoError(t, err)
	return cop
}

// openConn opens a connection on a cop whose queue has room.
func openConn(t testing.TB, cop *inactivitycop.Cop) *inactivitycop.Conn {
	t.Helper()
	c, evicted := cop.Open(origin)
	require.Nil(t, evicted, "the queue had room")
	return c
}

func TestConfigValidation(t *testing.T) {
	require.NoError(t, inactivitycop.DefaultConfig().Validate())
	for _, tc := range []struct {
		mod func(*inactivitycop.Config)
		msg string
	}{
		{func(c *inactivitycop.Config) { c.Tick = 0 }, "Tick must be positive"},
		{func(c *inactivitycop.Config) { c.Buckets = 1000 }, "Buckets must be a power of two"},
		{func(c *inactivitycop.Config) { c.Buckets = 0 }, "Buckets must be a power of two"},
		{func(c *inactivitycop.Config) { c.Budget = 0 }, "Budget must be positive"},
		{func(c *inactivitycop.Config) { c.Budget = -5 }, "Budget must be positive"},
		{func(c *inactivitycop.Config) { c.Continuation = 0 }, "Continuation must be in"},
		{func(c *inactivitycop.Config) { c.Continuation = 2 * time.Second }, "Continuation must be in"},
		{func(c *inactivitycop.Config) { c.MaxConns = 0 }, "MaxConns must be positive"},
	} {
		cfg := inactivitycop.DefaultConfig()
		tc.mod(&cfg)
		_, err := inactivitycop.NewCop(cfg, origin)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.msg)
		_, err = inactivitycop.NewHandler(nil, "x", cfg, nil)
		assert.Error(t, err, "NewHandler validates too")
	}
}

func TestDefaultsFromSeed(t *testing.T) {
	cfg := inactivitycop.DefaultConfig()
	assert.Equal(t, time.Second, cfg.Tick)
	assert.Equal(t, 4096, cfg.Buckets)
	assert.Equal(t, 4096, cfg.Budget)
	assert.Equal(t, time.Millisecond, cfg.Continuation)
	assert.False(t, cfg.Audit, "the audit is opt-in")
}

func TestBadInputIsAnError(t *testing.T) {
	cop, other := newCop(t, nil), newCop(t, nil)
	c := openConn(t, cop)
	assert.ErrorContains(t, cop.SetInactivityTimeout(c, origin, -time.Second), "negative")
	assert.ErrorContains(t, cop.SetActiveTimeout(c, origin, -time.Second), "negative")
	assert.ErrorIs(t, other.SetInactivityTimeout(c, origin, time.Second), inactivitycop.ErrConn)
	assert.ErrorIs(t, cop.SetInactivityTimeout(nil, origin, time.Second), inactivitycop.ErrConn)
	cop.Close(c)
	cop.Close(c)
	assert.True(t, c.Closed())
	assert.ErrorIs(t, cop.SetActiveTimeout(c, origin, time.Second), inactivitycop.ErrConn)
	cop.NetActivity(c, origin) // ignored
	other.Close(c)             // ignored
	assert.Equal(t, 0, cop.Len())
}

// TW-1: activity moves the real deadline later and leaves the wheel alone;
// setters re-arm, so shortening moves the wheel deadline earlier.
func TestActivityLeavesWheelAloneSettersRearm(t *testing.T) {
	cop := newCop(t, nil)
	c := openConn(t, cop)
	_, held := c.WheelDeadline()
	assert.False(t, held, "no timeout, not in the wheel")
	require.NoError(t, cop.SetInactivityTimeout(c, sec(0), 10*time.Second))
	at, held := c.WheelDeadline()
	require.True(t, held)
	assert.Equal(t, sec(10), at)

	cop.NetActivity(c, sec(3))
	assert.Equal(t, sec(13), c.Deadline())
	at, _ = c.WheelDeadline()
	assert.Equal(t, sec(10), at, "activity does not touch the wheel")
	cop.NetActivity(c, sec(2)) // an older instant never shortens
	assert.Equal(t, sec(13), c.Deadline())

	require.NoError(t, cop.SetActiveTimeout(c, sec(3), 2*time.Second))
	at, _ = c.WheelDeadline()
	assert.Equal(t, sec(5), at, "shortening re-arms earlier")
	assert.Equal(t, sec(5), c.Deadline())

	require.NoError(t, cop.SetActiveTimeout(c, sec(3), 0))
	require.NoError(t, cop.SetInactivityTimeout(c, sec(3), 0))
	_, held = c.WheelDeadline()
	assert.False(t, held, "no deadline left: cancelled")
	assert.True(t, cop.Audit().Lost == nil && cop.Audit().Late == nil)
}

// TW-2: kinds, order and disarming. A pass fires every passed timeout of a
// connection, inactivity first; one not yet passed stays armed.
func TestKindsAndDisarm(t *testing.T) {
	cop := newCop(t, nil)
	c := openConn(t, cop)
	require.NoError(t, cop.SetInactivityTimeout(c, sec(0), 2*time.Second))
	require.NoError(t, cop.SetActiveTimeout(c, sec(0), 10*time.Second))
	r := cop.Pass(sec(2))
	assert.Equal(t, 0, r.Fired, "at exactly the deadline nothing has passed")
	r = cop.Pass(sec(5))
	require.Len(t, r.Timeouts, 1)
	assert.Equal(t, inactivitycop.Timeout{Conn: c, Kind: inactivitycop.Inactivity, Deadline: sec(2), At: sec(5)}, r.Timeouts[0])
	assert.Equal(t, time.Duration(0), c.InactivityTimeout(), "firing disarms the inactivity timeout")
	cop.NetActivity(c, sec(5))
	assert.True(t, c.InactivityDeadline().IsZero(), "activity does not revive a fired inactivity timeout")
	at, held := c.WheelDeadline()
	require.True(t, held, "the active timeout stays armed")
	assert.Equal(t, sec(10), at)
	r = cop.Pass(sec(11))
	require.Len(t, r.Timeouts, 1)
	assert.Equal(t, inactivitycop.Active, r.Timeouts[0].Kind)
	assert.True(t, c.Deadline().IsZero())

	both := openConn(t, cop)
	require.NoError(t, cop.SetActiveTimeout(both, sec(11), 3*time.Second))
	require.NoError(t, cop.SetInactivityTimeout(both, sec(11), 2*time.Second))
	r = cop.Pass(sec(15))
	require.Len(t, r.Timeouts, 2, "both passed: both fire in the same pass")
	assert.Equal(t, inactivitycop.Inactivity, r.Timeouts[0].Kind)
	assert.Equal(t, inactivitycop.Active, r.Timeouts[1].Kind)
	assert.Equal(t, 2, r.Fired)
	assert.Equal(t, 1, r.Visited)
	_, held = both.WheelDeadline()
	assert.False(t, held)

	assert.Equal(t, "inactivity", inactivitycop.Inactivity.String())
	assert.Equal(t, "active", inactivitycop.Active.String())
	assert.Equal(t, "Kind(9)", inactivitycop.Kind(9).String())
}

// TW-3: 100,000 idle connections, none due: a pass visits none of them and
// does no lookups (exact counts; the full scan does 100,000 of each).
func TestIdleConnectionsCostNothing(t *testing.T) {
	const n = 100_000
	cop := newCop(t, nil)
	for i := range n {
		c := openConn(t, cop)
		require.NoError(t, cop.SetInactivityTimeout(c, sec(0), time.Duration(60+i%240)*time.Second))
	}
	for s := 0; s <= 60; s++ { // the cop's grid: one pass per tick from the origin
		r := cop.Pass(sec(float64(s)))
		require.Equal(t, 0, r.Visited, "pass at %ds", s)
		require.Equal(t, 0, r.Lookups)
		require.Equal(t, 1, r.Buckets)
	}
	m := cop.Metrics()
	assert.Equal(t, int64(61), m.Passes.Value())
	assert.Equal(t, int64(0), m.Visited.Value())
	assert.Equal(t, int64(0), m.Lookups.Value())
	// The first connections come due at 60 s: the pass after it visits
	// exactly those of the bucket, 100000/240 rounded up.
	r := cop.Pass(sec(61))
	assert.Equal(t, 417, r.Visited)
	assert.Equal(t, 417, r.Fired)
}

// TW-4 and TW-8: a burst larger than the budget is spread over passes; the
// counters equal what the passes reported.
func TestBudgetAndMetrics(t *testing.T) {
	m := new(inactivitycop.Metrics)
	cop := newCop(t, func(c *inactivitycop.Config) { c.Budget = 4; c.Metrics = m })
	var reg stats.Registry
	m.Register(&reg)
	for range 10 {
		c := openConn(t, cop)
		require.NoError(t, cop.SetActiveTimeout(c, sec(0), 1500*time.Millisecond))
	}
	var visited, fired, exhausted int
	passes := 0
	for _, at := range []time.Time{sec(1), sec(2), sec(2.001), sec(2.002), sec(3)} {
		r := cop.Pass(at)
		passes++
		visited += r.Visited
		fired += r.Fired
		if r.Exhausted {
			exhausted++
		}
	}
	assert.Equal(t, 10, fired)
	assert.Equal(t, 2, exhausted)
	snap := reg.Snapshot()
	assert.Equal(t, int64(passes), snap["inactivity_cop_passes"])
	assert.Equal(t, int64(visited), snap["inactivity_cop_visited"])
	assert.Equal(t, int64(fired), snap["inactivity_cop_fired"])
	assert.Equal(t, int64(visited), snap["inactivity_cop_lookups"])
	assert.Equal(t, int64(2), snap["inactivity_cop_budget_exhausted"])
	var b strings.Builder
	require.NoError(t, reg.WriteText(&b))
	for _, name := range []string{"passes", "visited", "fired", "pass_time_us", "pass_max_us", "budget_exhausted"} {
		assert.Contains(t, b.String(), "# TYPE inactivity_cop_"+name+" ", "seed metric %s", name)
	}
}

// TW-5: a timeout longer than the ring (here 16 s with 8 buckets) is visited
// once per ring until due and fires on time. A pause longer than the ring is
// caught up in one pass, and the passes after it visit nothing.
func TestRingWrapAndLongPause(t *testing.T) {
	cop := newCop(t, func(c *inactivitycop.Config) { c.Buckets = 8 })
	long := openConn(t, cop)
	require.NoError(t, cop.SetInactivityTimeout(long, sec(0), 20*time.Second))
	visits := 0
	for s := 1; s <= 21; s++ {
		r := cop.Pass(sec(float64(s)))
		visits += r.Visited
		if s < 21 {
			assert.Zero(t, r.Fired)
		} else {
			assert.Equal(t, 1, r.Fired, "deadline 20 s fires at the 21 s pass")
		}
	}
	assert.Equal(t, 3, visits, "ticks 5, 13 and 21")

	for range 50 {
		c := openConn(t, cop)
		require.NoError(t, cop.SetInactivityTimeout(c, sec(21), 1000*time.Second)) // tick 1022, slot 6
	}
	r := cop.Pass(sec(200)) // a 179 s pause: 22 rings
	assert.Equal(t, 8, r.Buckets, "fast-forward: each bucket once")
	assert.Equal(t, 50, r.Visited, "each connection once")
	assert.Equal(t, 50, r.Rearmed)
	for s := 201; s <= 214; s++ {
		r = cop.Pass(sec(float64(s)))
		assert.Equal(t, 1, r.Buckets)
		want := 0
		if s%8 == 6 {
			want = 50 // once per ring until due
		}
		assert.Equal(t, want, r.Visited, "pass at %ds", s)
	}
}

// TW-10: a full queue evicts the least recently active connection (opening
// and NetActivity count, setters do not). It reports it once as an Evicted
// timeout, counts it, and takes it out of the queue and the wheel. The
// connection never fires, even once its old deadline has long passed.
func TestEvictionFromFullQueue(t *testing.T) {
	m := new(inactivitycop.Metrics)
	cop := newCop(t, func(c *inactivitycop.Config) { c.MaxConns = 3; c.Metrics = m })
	var conns []*inactivitycop.Conn
	for i := range 3 {
		c, evicted := cop.Open(sec(float64(i)))
		require.Nil(t, evicted)
		require.NoError(t, cop.SetInactivityTimeout(c, sec(float64(i)), 5*time.Second))
		conns = append(conns, c)
	}
	a, b, c := conns[0], conns[1], conns[2]
	cop.NetActivity(a, sec(3))                                     // a is now the most recent: order b, c, a
	require.NoError(t, cop.SetActiveTimeout(b, sec(3), time.Hour)) // a setter is not activity
	assert.Equal(t, []*inactivitycop.Conn{b, c, a}, cop.Conns())

	d, evicted := cop.Open(sec(3.5))
	require.NotNil(t, evicted)
	assert.Equal(t, inactivitycop.Timeout{Conn: b, Kind: inactivitycop.Evicted, At: sec(3.5)}, *evicted)
	assert.True(t, b.Closed())
	_, held := b.WheelDeadline()
	assert.False(t, held, "an evicted connection leaves the wheel")
	assert.True(t, b.Deadline().IsZero())
	assert.Equal(t, []*inactivitycop.Conn{c, a, d}, cop.Conns())
	assert.Equal(t, 3, cop.Len())
	assert.Equal(t, int64(1), m.Evicted.Value())
	assert.Equal(t, 2, cop.Wheel().Len(), "a and c are armed; d has no timeout")
	cop.NetActivity(b, sec(4)) // ignored: closed
	assert.ErrorIs(t, cop.SetInactivityTimeout(b, sec(4), time.Second), inactivitycop.ErrConn)

	_, evicted = cop.Open(sec(4.5)) // c is the oldest now
	require.NotNil(t, evicted)
	assert.Equal(t, c, evicted.Conn)
	var fired []uint64
	for s := 1; s <= 20; s++ {
		for _, to := range cop.Pass(sec(float64(s))).Timeouts {
			fired = append(fired, to.Conn.ID())
		}
	}
	assert.Equal(t, []uint64{a.ID()}, fired, "only a times out: b and c were evicted before their deadlines")
	assert.Equal(t, int64(2), m.Evicted.Value())
	assert.Equal(t, int64(1), m.Fired.Value(), "evictions are not fired timeouts")
	assert.Equal(t, "evicted", inactivitycop.Evicted.String())
}
