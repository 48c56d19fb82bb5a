package membership

import "github.com/windtunnel/windtunnel/impl/authz"

// Invalidate applies one invalidation message locally (authz.Invalidator).
// It takes the same short lock as publication, so a load in flight for a
// dropped entry can no longer publish (MS-3).
//
//   - membership: drops that (community, user) entry, whatever the channel.
//     The message still carries channel_id for older relays in a rolling
//     deployment, but snapshots are per user, so the user is the key (MS-9).
//   - accessible_all, channel_deleted: drop every entry of the community. A
//     deleted channel must stop being granted at once; which snapshots list
//     it is not worth scanning for.
//   - visibility: drops nothing. Whether a channel is open or listed is not
//     part of the active-membership rule (membership not removed, channel
//     not deleted), so no snapshot or marker changes.
//   - A message that fails authz.Message.Validate (unknown kind, missing
//     fields) drops every entry of its community, or every entry if it has
//     none. Dropping entries never makes an answer wrong; it only costs a
//     reload. So the cache errs toward dropping.
func (c *Cache) Invalidate(m authz.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := m.Validate(); err != nil {
		if m.CommunityID.IsZero() {
			c.entries.RemoveIf(func(key, *entry) bool { return true })
			return
		}
		c.removeCommunity(m.CommunityID)
		return
	}
	switch m.Kind {
	case authz.KindMembership:
		c.entries.Remove(key{m.CommunityID, m.UserID}) // MS-9: invalidate by user
	case authz.KindVisibility:
		// Not a membership change (see above).
	default: // accessible_all, channel_deleted
		c.removeCommunity(m.CommunityID)
	}
}

// removeCommunity drops every entry of community, loading ones included, so
// that their loads cannot publish. Caller holds mu.
func (c *Cache) removeCommunity(community authz.ID) {
	c.entries.RemoveIf(func(k key, _ *entry) bool { return k.community == community })
}
