package membership

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// load reads the user's membership list while holding the Loading entry's
// lock, publishes the result if the entry is still current, releases the
// lock, and answers the request that started it from what it read.
func (c *Cache) load(ctx context.Context, k key, e *entry, channel authz.ID) (bool, error) {
	c.m.misses.Inc() // misses_total counts bounded full-set load attempts
	ids, checkedOutAt, err := c.fetch(ctx, k)
	if err != nil {
		e.lock.Unlock() // MS-7: a failed or cancelled load frees the user lock and leaves no decision
		return false, err
	}
	v := c.complete(ids, checkedOutAt)
	c.publish(k, e, v)
	e.lock.Unlock() // the waiters recheck and find the published entry (MS-5)
	if v.kind == PointChecks {
		return c.oversizeCheck(ctx, k, channel)
	}
	// MS-3: an old load still answers its own request, even when the fence
	// kept it out of the cache: its statement started after the request.
	return v.contains(channel), nil
}

// fetch reads at most MaxSnapshotIDs+1 memberships on one connection and
// returns them with the instant that connection was checked out.
func (c *Cache) fetch(ctx context.Context, k key) ([]authz.ID, time.Time, error) {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("membership: load checkout: %w", err)
	}
	defer conn.Release()
	checkedOutAt := conn.CheckedOutAt()
	ids, err := conn.ActiveMemberships(ctx, k.community, k.user, c.cfg.MaxSnapshotIDs+1) // MS-4: one more than a snapshot holds, so a full list is known complete
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("membership: load: %w", err) // MS-7: a failed read decides nothing
	}
	return ids, checkedOutAt, nil
}

// complete turns a fetched list into the entry to publish: a sorted
// snapshot, or a PointChecks marker when the list is longer than a snapshot
// may be (it is then possibly truncated, so it decides nothing).
func (c *Cache) complete(ids []authz.ID, checkedOutAt time.Time) *entry {
	expiresAt := checkedOutAt.Add(c.cfg.Freshness) // MS-2: freshness counts from connection checkout
	if len(ids) > c.cfg.MaxSnapshotIDs {           // MS-4: above the cap keep a marker, never a partial list
		return &entry{kind: PointChecks, checkedOutAt: checkedOutAt, expiresAt: expiresAt}
	}
	// A compact copy: the driver's slice may have spare capacity that the
	// weigher would not count.
	sorted := make([]authz.ID, len(ids))
	copy(sorted, ids)
	slices.SortFunc(sorted, compareIDs)
	return &entry{kind: Snapshot, ids: sorted, checkedOutAt: checkedOutAt, expiresAt: expiresAt}
}

// publish stores v under k only while e, the loader's Loading entry, is
// still the current entry for k (MS-3). An invalidation that arrived during
// the load removed e, so a list read before the change cannot come back;
// the same holds when e expired or was evicted meanwhile.
func (c *Cache) publish(k key, e, v *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, _ := c.entries.Peek(k, c.r.Now()); cur == e { // MS-3 fence: publish only over our own loading entry
		c.entries.Put(k, v, v.expiresAt)
	}
}
