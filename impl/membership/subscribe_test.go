package membership_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// A subscription confirms a cached denial against the database; a write
// check keeps answering from the snapshot (MS-12).
func TestSubscribeConfirmsACachedDenial(t *testing.T) {
	w := newWorld(t, rt.Real(), 3, func(i int) bool { return i == 1 }, membership.Config{}, nil)
	ok, err := w.c.IsMember(bg, community, user, ch(2))
	require.NoError(t, err)
	assert.False(t, ok)
	w.grant(2) // no invalidation: the snapshot is now stale

	ok, err = w.c.IsMember(bg, community, user, ch(2))
	require.NoError(t, err)
	assert.False(t, ok, "a write check answers from the stale snapshot")
	points := w.points()
	ok, err = w.c.Subscribe(bg, community, user, ch(2))
	require.NoError(t, err)
	assert.True(t, ok, "the subscription asked the database")
	assert.Equal(t, points+1, w.points())
	assert.EqualValues(t, 1, w.metric(membership.MetricConfirms))
	assert.EqualValues(t, 1, w.metric(membership.MetricConfirmedMembers))

	// The stale snapshot was dropped: the next write check loads again.
	loads := w.loads()
	ok, err = w.c.IsMember(bg, community, user, ch(2))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, loads+1, w.loads())

	// A grant from the snapshot is not confirmed; a true denial costs one
	// point check and changes nothing.
	points = w.points()
	ok, err = w.c.Subscribe(bg, community, user, ch(1))
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = w.c.Subscribe(bg, community, user, ch(3))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, points+1, w.points())
	assert.EqualValues(t, 2, w.metric(membership.MetricConfirms))
	assert.EqualValues(t, 1, w.metric(membership.MetricConfirmedMembers))
}
