package relay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/impl/rt"
)

var (
	community = authz.NewID('k', 1)
	user      = authz.NewID('u', 1)
	private   = authz.NewID('p', 1)
	open      = authz.NewID('o', 1)
)

func newDB(t *testing.T) *authztest.DB {
	db := authztest.New(rt.Real())
	require.NoError(t, db.AddChannel(authztest.Channel{ID: private, Community: community}))
	require.NoError(t, db.AddChannel(authztest.Channel{ID: open, Community: community, Open: true, Listed: true}))
	return db
}

// loopback delivers every published message to the other relays at once,
// in wire form, as a connected bus would.
type loopback struct {
	to     []*relay.Relay
	sent   []authz.Message
	fail   error
	before func(m authz.Message)
}

func (l *loopback) Publish(_ context.Context, m authz.Message) error {
	if l.before != nil {
		l.before(m)
	}
	if l.fail != nil {
		return l.fail
	}
	l.sent = append(l.sent, m)
	b, err := m.Encode()
	if err != nil {
		return err
	}
	for _, r := range l.to {
		if err := r.Receive(b); err != nil {
			return err
		}
	}
	return nil
}

func isMember(t *testing.T, r *relay.Relay) bool {
	ok, err := r.MS.IsMember(context.Background(), community, user, private)
	require.NoError(t, err)
	return ok
}

func TestAChangeReachesTheOtherRelay(t *testing.T) {
	db := newDB(t)
	bus := &loopback{}
	a, err := relay.New(rt.Real(), db, bus, relay.Config{})
	require.NoError(t, err)
	b, err := relay.New(rt.Real(), db, nil, relay.Config{})
	require.NoError(t, err)
	bus.to = []*relay.Relay{b}
	assert.False(t, isMember(t, a))
	assert.False(t, isMember(t, b), "both relays now cache the denial")

	require.NoError(t, db.SetMember(user, private, true))
	require.NoError(t, a.Changed(context.Background(), relay.MembershipChanged(community, user, private)))
	assert.True(t, isMember(t, a))
	assert.True(t, isMember(t, b), "the invalidation dropped b's cached snapshot")
	ok, err := b.OC.Granted(context.Background(), community, user, private)
	require.NoError(t, err)
	assert.True(t, ok, "and b's member half")
	assert.Equal(t, int64(1), a.Metrics().Snapshot()[relay.MetricChanged])
	assert.Equal(t, int64(1), b.Metrics().Snapshot()[relay.MetricReceived])
	require.Len(t, bus.sent, 1)
	assert.Equal(t, private, bus.sent[0].ChannelID, "membership messages keep channel_id (MS-9)")
}

// The local drop comes before the publish: when the message leaves, this
// relay already answers from the database.
func TestChangedInvalidatesLocallyBeforePublishing(t *testing.T) {
	db := newDB(t)
	bus := &loopback{}
	a, err := relay.New(rt.Real(), db, bus, relay.Config{})
	require.NoError(t, err)
	assert.False(t, isMember(t, a))
	require.NoError(t, db.SetMember(user, private, true))
	var atPublish *bool
	bus.before = func(authz.Message) { v := isMember(t, a); atPublish = &v }
	require.NoError(t, a.Changed(context.Background(), relay.MembershipChanged(community, user, private)))
	require.NotNil(t, atPublish)
	assert.True(t, *atPublish)
}

func TestAFailedPublishStillDropsLocallyAndIsCounted(t *testing.T) {
	db := newDB(t)
	bus := &loopback{fail: errors.New("connection refused")}
	a, err := relay.New(rt.Real(), db, bus, relay.Config{})
	require.NoError(t, err)
	assert.False(t, isMember(t, a))
	require.NoError(t, db.SetMember(user, private, true))
	err = a.Changed(context.Background(), relay.MembershipChanged(community, user, private))
	assert.ErrorContains(t, err, "connection refused")
	assert.True(t, isMember(t, a))
	assert.Equal(t, int64(1), a.Metrics().Snapshot()[relay.MetricPublishErrors])
}

func TestMalformedAndInvalidMessagesChangeNothing(t *testing.T) {
	db := newDB(t)
	bus := &loopback{}
	a, err := relay.New(rt.Real(), db, bus, relay.Config{})
	require.NoError(t, err)
	assert.False(t, isMember(t, a))
	require.NoError(t, db.SetMember(user, private, true))
	assert.Error(t, a.Receive([]byte(`{"kind":"membership"}`)))
	assert.Error(t, a.Receive([]byte(`not json`)))
	assert.False(t, isMember(t, a), "nothing was dropped")
	assert.Equal(t, int64(2), a.Metrics().Snapshot()[relay.MetricMalformed])

	err = a.Changed(context.Background(), authz.Message{Kind: authz.KindMembership, CommunityID: community})
	assert.ErrorContains(t, err, "needs user_id and channel_id")
	assert.Empty(t, bus.sent, "an invalid message is not published")
	_, err = relay.New(rt.Real(), nil, nil, relay.Config{})
	assert.Error(t, err)
}

func TestEveryChangeKindHasItsMessage(t *testing.T) {
	for _, m := range []authz.Message{
		relay.MembershipChanged(community, user, private),
		relay.VisibilityChanged(community, open),
		relay.ChannelDeleted(community, open),
		relay.AccessibleChanged(community),
	} {
		assert.NoError(t, m.Validate(), m.Kind)
	}
}
