package authztest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
)

func TestQueriesFollowTheSeedRules(t *testing.T) {
	ctx := context.Background()
	k, other, u := authz.NewID('k', 1), authz.NewID('k', 2), authz.NewID('u', 1)
	ch := func(n uint64) authz.ID { return authz.NewID('c', n) }
	db := New(rt.Real())
	require.NoError(t, db.AddChannel(Channel{ID: ch(1), Community: k, Open: true, Listed: true}))
	require.NoError(t, db.AddChannel(Channel{ID: ch(2), Community: k, Open: true, Listed: false}))
	require.NoError(t, db.AddChannel(Channel{ID: ch(3), Community: k, Open: false, Listed: true}))
	require.NoError(t, db.AddChannel(Channel{ID: ch(4), Community: k, Open: true, Listed: true, Deleted: true}))
	require.NoError(t, db.AddChannel(Channel{ID: ch(5), Community: other, Open: true, Listed: true}))
	require.Error(t, db.AddChannel(Channel{ID: ch(5), Community: other}))
	require.NoError(t, db.SetMember(u, ch(3), true))
	require.NoError(t, db.SetMember(u, ch(4), true)) // deleted channel: not a member channel
	require.NoError(t, db.SetMember(u, ch(2), false))
	require.Error(t, db.SetMember(u, ch(9), true))

	c, err := db.Acquire(ctx)
	require.NoError(t, err)
	open, err := c.ListedOpenChannels(ctx, k)
	require.NoError(t, err)
	assert.Equal(t, []authz.ID{ch(1)}, open)
	mem, err := c.MemberChannels(ctx, k, u)
	require.NoError(t, err)
	assert.Equal(t, []authz.ID{ch(3)}, mem)
	ok, err := c.IsActiveMember(ctx, k, u, ch(3))
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = c.IsActiveMember(ctx, other, u, ch(3))
	require.NoError(t, err)
	assert.False(t, ok, "wrong community")
	_, err = c.ActiveMemberships(ctx, k, u, 0)
	assert.Error(t, err)
	c.Release()
	assert.Panics(t, c.Release)
	_, err = c.MemberChannels(ctx, k, u)
	assert.Error(t, err)

	st := db.Stats()
	assert.Equal(t, int64(1), st.Checkouts)
	assert.Equal(t, int64(4), st.Statements)
	assert.Equal(t, int64(3), st.Rows)
}

func TestLimitAndInjectedErrors(t *testing.T) {
	ctx := context.Background()
	k, u := authz.NewID('k', 1), authz.NewID('u', 1)
	db := New(rt.Real())
	for i := uint64(1); i <= 10; i++ {
		require.NoError(t, db.AddChannel(Channel{ID: authz.NewID('c', i), Community: k}))
		require.NoError(t, db.SetMember(u, authz.NewID('c', i), true))
	}
	c, _ := db.Acquire(ctx)
	defer c.Release()
	got, err := c.ActiveMemberships(ctx, k, u, 4)
	require.NoError(t, err)
	assert.Len(t, got, 4)
	boom := errors.New("connection reset")
	db.Err = func(stmt string) error {
		if stmt == StmtActiveMemberships {
			return boom
		}
		return nil
	}
	_, err = c.ActiveMemberships(ctx, k, u, 4)
	assert.ErrorIs(t, err, boom)
}
