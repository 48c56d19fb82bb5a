package authz

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIDRoundTrip(t *testing.T) {
	id := NewID('c', 0x0102030405060708)
	s := id.String()
	assert.Equal(t, "63000000-0000-0000-0102-030405060708", s)
	back, err := ParseID(s)
	require.NoError(t, err)
	assert.Equal(t, id, back)
	assert.Equal(t, -1, Compare(NewID('c', 1), NewID('c', 2)))
	for _, bad := range []string{"", "63000000-0000-0000-0102-03040506070", "63000000x0000-0000-0102-030405060708", "g3000000-0000-0000-0102-030405060708"} {
		_, err := ParseID(bad)
		assert.Error(t, err, bad)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	msgs := []Message{
		{Kind: KindMembership, CommunityID: NewID('k', 1), UserID: NewID('u', 2), ChannelID: NewID('c', 3)},
		{Kind: KindAccessibleAll, CommunityID: NewID('k', 1)},
		{Kind: KindVisibility, CommunityID: NewID('k', 1), ChannelID: NewID('c', 3)},
		{Kind: KindChannelDeleted, CommunityID: NewID('k', 1), ChannelID: NewID('c', 3)},
	}
	for _, m := range msgs {
		b, err := m.Encode()
		require.NoError(t, err)
		got, err := DecodeMessage(b)
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	// MS-9: membership messages keep channel_id on the wire.
	b, err := msgs[0].Encode()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"channel_id":"63000000-0000-0000-0000-000000000003"`)
}

func TestMalformedMessagesAreErrors(t *testing.T) {
	for name, raw := range map[string]string{
		"not json":         `{`,
		"unknown kind":     `{"kind":"everything","community_id":"6b000000-0000-0000-0000-000000000001"}`,
		"no community":     `{"kind":"accessible_all"}`,
		"membership no ch": `{"kind":"membership","community_id":"6b000000-0000-0000-0000-000000000001","user_id":"75000000-0000-0000-0000-000000000002"}`,
		"bad uuid":         `{"kind":"accessible_all","community_id":"nope"}`,
		"unknown field":    `{"kind":"accessible_all","community_id":"6b000000-0000-0000-0000-000000000001","x":1}`,
		"trailing":         `{"kind":"accessible_all","community_id":"6b000000-0000-0000-0000-000000000001"} {}`,
		"deleted no ch":    `{"kind":"channel_deleted","community_id":"6b000000-0000-0000-0000-000000000001"}`,
	} {
		_, err := DecodeMessage([]byte(raw))
		assert.Error(t, err, name)
	}
	_, err := Message{Kind: "x", CommunityID: NewID('k', 1)}.Encode()
	assert.Error(t, err)
}
