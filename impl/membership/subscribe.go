package membership

import (
	"context"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// Subscribe is the membership check of an explicit channel subscription
// (MS-12). Cached write checks may briefly deny a just-granted member: a
// snapshot can lack a membership granted after it was read until the
// invalidation arrives or the snapshot expires. A subscription is rarer and
// its denial more visible, so it confirms a denial against the database (an
// authoritative point check) before it rejects. When the database says the
// user is a member after all, the stale snapshot is dropped, so the user's
// next write check loads the new list.
//
// A grant from the snapshot is not confirmed: the source text confirms
// missing memberships only, and a revoked one is bounded by the freshness
// window like every check.
func (c *Cache) Subscribe(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	ok, err := c.IsMember(ctx, community, user, channel)
	if err != nil || ok {
		return ok, err
	}
	c.m.confirms.Inc()
	member, err := c.pointCheck(ctx, key{community, user}, channel) // MS-12: a denial is confirmed by the database
	if err != nil {
		return false, err
	}
	if member {
		c.m.confirmedMember.Inc()
		c.mu.Lock()
		c.entries.Remove(key{community, user})
		c.mu.Unlock()
	}
	return member, nil
}
