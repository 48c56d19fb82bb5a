package accesschannels

import (
	"context"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// AccessibleUncached returns what Accessible returns, read from the
// database now: both halves on one connection, merged the same way (OC-1:
// uncached callers get the same set as before the split). It touches neither
// the cache nor its counters.
func (c *Cache) AccessibleUncached(ctx context.Context, community, reader authz.ID) ([]authz.ID, error) {
	if err := checkIDs(community, reader); err != nil {
		return nil, err
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: uncached: acquire: %w", err)
	}
	defer conn.Release()
	member, err := conn.MemberChannels(ctx, community, reader)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: uncached: member channels: %w", err)
	}
	open, err := conn.ListedOpenChannels(ctx, community)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: uncached: open channels: %w", err)
	}
	return union(normalize(member), normalize(open)), nil
}
