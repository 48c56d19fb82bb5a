package membership_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// warm returns a real-runtime cache holding a snapshot of n memberships of
// user (channels 1..n), and the database under it.
func warm(tb testing.TB, n int) (*membership.Cache, *authztest.DB) {
	db := authztest.New(rt.Real())
	for i := 1; i <= n; i++ {
		require.NoError(tb, db.AddChannel(authztest.Channel{ID: ch(i), Community: community}))
		require.NoError(tb, db.SetMember(user, ch(i), true))
	}
	c, err := membership.New(rt.Real(), db, membership.Config{})
	require.NoError(tb, err)
	ok, err := c.IsMember(context.Background(), community, user, ch(1))
	require.NoError(tb, err)
	require.True(tb, ok)
	return c, db
}

// A snapshot hit allocates nothing: the exact, machine-independent count
// behind BenchmarkSnapshotHit16384.
func TestSnapshotHitAllocatesNothing(t *testing.T) {
	c, db := warm(t, 16384)
	ctx := context.Background()
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i = i%16384 + 1
		if ok, err := c.IsMember(ctx, community, user, ch(i)); !ok || err != nil {
			t.Fatalf("channel %d: %v %v", i, ok, err)
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, int64(1), db.Stats().Statements, "every check after the load was a hit")
}

// BenchmarkSnapshotHit16384: a channel check answered from a fresh snapshot
// of 16,384 IDs (binary search under the cache's short lock), with rt.Real.
func BenchmarkSnapshotHit16384(b *testing.B) {
	c, _ := warm(b, 16384)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = i%16384 + 1
		if ok, _ := c.IsMember(ctx, community, user, ch(i)); !ok {
			b.Fatal("denied")
		}
	}
}

// BenchmarkPointCheckBaseline16384: the same check as the design this
// replaces makes it, a point check on its own checkout, against the same
// in-memory database (which costs no network round trip or query, so the
// real gap is far larger).
func BenchmarkPointCheckBaseline16384(b *testing.B) {
	_, db := warm(b, 16384)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = i%16384 + 1
		conn, err := db.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		ok, _ := conn.IsActiveMember(ctx, community, user, ch(i))
		conn.Release()
		if !ok {
			b.Fatal("denied")
		}
	}
}

// BenchmarkColdLoad16384: one full load of a maximum-size snapshot (fetch,
// copy, sort, publish) and its first answer.
func BenchmarkColdLoad16384(b *testing.B) {
	c, _ := warm(b, 16384)
	ctx := context.Background()
	msg := authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user, ChannelID: ch(1)}
	b.ReportAllocs()
	for b.Loop() {
		c.Invalidate(msg)
		if ok, _ := c.IsMember(ctx, community, user, ch(1)); !ok {
			b.Fatal("denied")
		}
	}
}
