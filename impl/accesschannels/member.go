package accesschannels

import (
	"context"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/wcache"
)

// memberHalf returns the reader's member channels, sorted.
//
// OC-6, known debt kept as it was before the split: the fill is an unfenced
// read-then-insert. An invalidation for this reader may be applied while the
// read is in flight. The fill still inserts what it read before the change.
// That stale member set is served to this reader, and only this reader, until
// TTL after the insertion.
func (c *Cache) memberHalf(ctx context.Context, k key) ([]authz.ID, error) {
	if err := c.mu.LockContext(ctx); err != nil {
		return nil, err
	}
	ids, st := c.members.Get(k, c.r.Now())
	c.mu.Unlock()
	if st == wcache.Hit {
		c.m.memberHits.Inc()
		return ids, nil
	}
	c.m.memberMisses.Inc()

	ids, err := c.readMember(ctx, k)
	if err != nil {
		return nil, err // a failed read caches nothing
	}
	c.mu.Lock()
	c.members.Put(k, ids, c.r.Now().Add(c.cfg.TTL)) // OC-7: the member half expires TTL after insertion
	c.mu.Unlock()
	return ids, nil
}

// readMember runs the member-channels query on a connection of its own.
func (c *Cache) readMember(ctx context.Context, k key) ([]authz.ID, error) {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: member channels: acquire: %w", err)
	}
	defer conn.Release()
	ids, err := conn.MemberChannels(ctx, k.community, k.reader)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: member channels: %w", err)
	}
	return normalize(ids), nil
}
