package pgstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore/pgtest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// The same fixture as authztest's rule test, on PostgreSQL.
func TestQueriesFollowTheSeedRules(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	k, other, u := authz.NewID('k', 1), authz.NewID('k', 2), authz.NewID('u', 1)
	f.AddChannels(
		authztest.Channel{ID: ch(1), Community: k, Open: true, Listed: true},
		authztest.Channel{ID: ch(2), Community: k, Open: true, Listed: false},
		authztest.Channel{ID: ch(3), Community: k, Open: false, Listed: true},
		authztest.Channel{ID: ch(4), Community: k, Open: true, Listed: true, Deleted: true},
		authztest.Channel{ID: ch(5), Community: other, Open: true, Listed: true},
	)
	f.SetMember(u, ch(3), true)
	f.SetMember(u, ch(4), true) // deleted channel: not a member channel
	f.SetMember(u, ch(5), true) // another community (OC-10)
	f.SetMember(u, ch(2), false)
	s := f.Open(pgstore.Config{})

	c := acquire(t, ctx, s)
	defer c.Release()
	open, err := c.ListedOpenChannels(ctx, k)
	require.NoError(t, err)
	assert.Equal(t, []authz.ID{ch(1)}, open)
	mem, err := c.MemberChannels(ctx, k, u)
	require.NoError(t, err)
	assert.Equal(t, []authz.ID{ch(3)}, mem)
	act, err := c.ActiveMemberships(ctx, k, u, 16385)
	require.NoError(t, err)
	assert.Equal(t, []authz.ID{ch(3)}, act)
	for _, tc := range []struct {
		community, channel authz.ID
		want               bool
	}{{k, ch(3), true}, {k, ch(4), false}, {k, ch(2), false}, {k, ch(1), false}, {other, ch(3), false}, {k, ch(5), false}, {other, ch(5), true}} {
		ok, err := c.IsActiveMember(ctx, tc.community, u, tc.channel)
		require.NoError(t, err)
		assert.Equal(t, tc.want, ok, "IsActiveMember(%v, %v)", tc.community, tc.channel)
	}

	// Removal, re-add and revocations take effect on the next statement.
	f.SetMember(u, ch(3), false)
	mem, err = c.MemberChannels(ctx, k, u)
	require.NoError(t, err)
	assert.Empty(t, mem)
	f.SetMember(u, ch(3), true)
	f.SetOpen(ch(1), false)
	open, err = c.ListedOpenChannels(ctx, k)
	require.NoError(t, err)
	assert.Empty(t, open)
	f.SetOpen(ch(1), true)
	f.SetListed(ch(1), false)
	open, err = c.ListedOpenChannels(ctx, k)
	require.NoError(t, err)
	assert.Empty(t, open)
	f.SetListed(ch(1), true)
	f.Delete(ch(1))
	open, err = c.ListedOpenChannels(ctx, k)
	require.NoError(t, err)
	assert.Empty(t, open)
	f.Delete(ch(3))
	ok, err := c.IsActiveMember(ctx, k, u, ch(3))
	require.NoError(t, err)
	assert.False(t, ok, "membership in a deleted channel")
}

// Differential test: PostgreSQL and the in-memory database the simulations
// use (authztest) answer every query the same for random data, so what the
// simulator proves about the caches carries over to the real queries.
func TestMatchesInMemoryDatabase(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	s := f.Open(pgstore.Config{MaxConns: 1})
	communities := []authz.ID{authz.NewID('k', 1), authz.NewID('k', 2)}
	users := []authz.ID{authz.NewID('u', 1), authz.NewID('u', 2), authz.NewID('u', 3)}
	rapid.Check(t, func(rt_ *rapid.T) {
		f.Truncate()
		mem := authztest.New(rt.Real())
		n := rapid.IntRange(0, 12).Draw(rt_, "channels")
		var chs []authztest.Channel
		for i := range n {
			c := authztest.Channel{
				ID:        ch(uint64(i + 1)),
				Community: communities[rapid.IntRange(0, 1).Draw(rt_, "community")],
				Open:      rapid.Bool().Draw(rt_, "open"),
				Listed:    rapid.Bool().Draw(rt_, "listed"),
				Deleted:   rapid.IntRange(0, 4).Draw(rt_, "deleted") == 0,
			}
			chs = append(chs, c)
			require.NoError(rt_, mem.AddChannel(c))
		}
		if n > 0 {
			f.AddChannels(chs...)
		}
		for _, u := range users {
			for _, c := range chs {
				switch rapid.IntRange(0, 2).Draw(rt_, "membership") {
				case 1:
					f.SetMember(u, c.ID, true)
					require.NoError(rt_, mem.SetMember(u, c.ID, true))
				case 2:
					f.SetMember(u, c.ID, false)
					require.NoError(rt_, mem.SetMember(u, c.ID, false))
				}
			}
		}
		limit := rapid.IntRange(1, 6).Draw(rt_, "limit")
		pc, err := s.Acquire(ctx)
		require.NoError(rt_, err)
		defer pc.Release()
		mc, err := mem.Acquire(ctx)
		require.NoError(rt_, err)
		defer mc.Release()
		for _, k := range communities {
			got, err := pc.ListedOpenChannels(ctx, k)
			require.NoError(rt_, err)
			want, _ := mc.ListedOpenChannels(ctx, k)
			assert.Equal(rt_, sorted(want), sorted(got), "listed_open_channels")
			for _, u := range users {
				got, err := pc.MemberChannels(ctx, k, u)
				require.NoError(rt_, err)
				want, _ := mc.MemberChannels(ctx, k, u)
				assert.Equal(rt_, sorted(want), sorted(got), "member_channels")

				// LIMIT returns some min(limit, total) of the member
				// channels; which ones is unspecified.
				act, err := pc.ActiveMemberships(ctx, k, u, limit)
				require.NoError(rt_, err)
				assert.Len(rt_, act, min(limit, len(want)), "active_memberships")
				assert.Subset(rt_, want, act, "active_memberships")

				for _, c := range chs {
					got, err := pc.IsActiveMember(ctx, k, u, c.ID)
					require.NoError(rt_, err)
					want, _ := mc.IsActiveMember(ctx, k, u, c.ID)
					assert.Equal(rt_, want, got, "is_active_member(%v, %v, %v)", k, u, c.ID)
				}
			}
		}
	})
}

func TestLimitAndMaxRows(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	k, u := authz.NewID('k', 1), authz.NewID('u', 1)
	var chs []authztest.Channel
	var ids []authz.ID
	for i := uint64(1); i <= 10; i++ {
		chs = append(chs, authztest.Channel{ID: ch(i), Community: k, Open: true, Listed: true})
		ids = append(ids, ch(i))
	}
	f.AddChannels(chs...)
	f.AddMembers(u, ids)
	s := f.Open(pgstore.Config{MaxRows: 5})
	c := acquire(t, ctx, s)
	defer c.Release()

	_, err := c.ActiveMemberships(ctx, k, u, 0)
	assert.ErrorContains(t, err, "limit must be positive")
	_, err = c.ActiveMemberships(ctx, k, u, 6)
	assert.ErrorContains(t, err, "exceeds MaxRows")
	got, err := c.ActiveMemberships(ctx, k, u, 4)
	require.NoError(t, err)
	assert.Len(t, got, 4)
	assert.Subset(t, ids, got)

	// More rows than MaxRows is an error, never a truncated list.
	_, err = c.MemberChannels(ctx, k, u)
	assert.ErrorContains(t, err, "more than MaxRows (5) rows")
	_, err = c.ListedOpenChannels(ctx, k)
	assert.ErrorContains(t, err, "more than MaxRows (5) rows")
	// The connection is still usable after the early stop.
	ok, err := c.IsActiveMember(ctx, k, u, ch(7))
	require.NoError(t, err)
	assert.True(t, ok)

	snap := s.Metrics().Snapshot()
	assert.Equal(t, int64(2), snap[`pgstore_statement_errors_total{statement="member_channels"}`]+snap[`pgstore_statement_errors_total{statement="listed_open_channels"}`])
	assert.Equal(t, int64(0), snap[`pgstore_statement_errors_total{statement="active_memberships"}`], "argument errors never reach the server")
}
