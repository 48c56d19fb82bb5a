package relay

import "github.com/windtunnel/windtunnel/impl/authz"

// The invalidation each kind of committed change publishes.

// MembershipChanged: user's membership in channel was granted or removed.
// The message keeps channel_id for relays of the previous version (MS-9).
func MembershipChanged(community, user, channel authz.ID) authz.Message {
	return authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user, ChannelID: channel}
}

// VisibilityChanged: channel became open or private, listed or unlisted.
func VisibilityChanged(community, channel authz.ID) authz.Message {
	return authz.Message{Kind: authz.KindVisibility, CommunityID: community, ChannelID: channel}
}

// ChannelDeleted: channel was deleted.
func ChannelDeleted(community, channel authz.ID) authz.Message {
	return authz.Message{Kind: authz.KindChannelDeleted, CommunityID: community, ChannelID: channel}
}

// AccessibleChanged: anything community-wide about accessible channels.
func AccessibleChanged(community authz.ID) authz.Message {
	return authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community}
}
