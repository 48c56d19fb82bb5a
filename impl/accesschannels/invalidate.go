package accesschannels

import (
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// Invalidate applies an invalidation message locally; it implements
// authz.Invalidator. A malformed message changes nothing (use Apply to see
// why).
func (c *Cache) Invalidate(m authz.Message) { _ = c.Apply(m) }

// Apply is Invalidate that reports a malformed message instead of ignoring
// it. The scopes (OC-5):
//
//   - membership: drops only that (community, user) member half. The open
//     half is the same for every reader and does not depend on membership.
//   - accessible_all, visibility, channel_deleted: community-wide. Drops the
//     community's open half AND every member half of the community: a
//     deleted channel leaves member sets too, and the seed's community-scoped
//     drop (which channel_deleted reuses) drops both halves. Dropping every
//     member half walks the member entries once (wcache.RemoveIf, in
//     deterministic order); these messages are rare next to lookups.
//
// A community-wide drop also detaches an open-set read in flight, so lookups
// after the drop start a new read instead of waiting for one that began
// before it. The detached read still inserts its result when it finishes
// (no fence, OC-4): that result is bounded by MaxAgeOpen from its own start.
func (c *Cache) Apply(m authz.Message) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("accesschannels: invalidation ignored: %w", err)
	}
	community := m.CommunityID
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Kind {
	case authz.KindMembership:
		c.members.Remove(key{community: community, reader: m.UserID}) // OC-5: only this reader's member half
	default: // accessible_all, visibility, channel_deleted (Validate admits no other kind)
		c.opens.Remove(key{community: community}) // OC-5: the community's open half
		delete(c.flights, key{community: community})
		c.members.RemoveIf(func(k key, _ []authz.ID) bool { return k.community == community }) // OC-5: and every member half of the community
	}
	return nil
}
