package membership

import (
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/wcache"
)

// Maintain removes expired entries and returns how many it removed.
// Expired entries are also dropped when a check finds them and evicted when
// the budget needs room, so calling Maintain is optional; a service may call
// it periodically to return memory sooner.
func (c *Cache) Maintain() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.RemoveExpired(c.r.Now())
}

// Usage is what the cache retains, for dashboards and tests.
type Usage struct {
	// Entries counts entries of every kind, expired ones not yet removed
	// included.
	Entries int
	// Snapshots, Markers and Loading count entries by kind.
	Snapshots, Markers, Loading int
	// IDs is the number of membership IDs retained in snapshots.
	IDs int64
	// WeightBytes is the estimated weight of all entries (EntryWeight
	// summed); it never exceeds BudgetBytes.
	WeightBytes int64
	// BudgetBytes is the configured budget.
	BudgetBytes int64
	// Evictions counts entries removed to fit the budget since New.
	Evictions int64
}

// Usage reports what the cache retains. It visits every entry, so it is
// meant for occasional inspection, not for every request.
func (c *Cache) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := Usage{Entries: c.entries.Len(), WeightBytes: c.entries.Weight(), BudgetBytes: c.entries.Budget(), Evictions: c.entries.Evictions()}
	c.entries.RemoveIf(func(_ key, e *entry) bool {
		switch e.kind {
		case Snapshot:
			u.Snapshots++
			u.IDs += int64(len(e.ids))
		case PointChecks:
			u.Markers++
		case Loading:
			u.Loading++
		}
		return false // only counting
	})
	return u
}

// EntryInfo describes the entry for one (community, user).
type EntryInfo struct {
	Kind Kind
	// IDs is the snapshot's length (0 for other kinds).
	IDs int
	// CheckedOutAt is the checkout instant of the connection that read the
	// entry (for Loading: when the load started).
	CheckedOutAt time.Time
	// ExpiresAt is when the entry stops answering: CheckedOutAt plus
	// Freshness (MS-2).
	ExpiresAt time.Time
	// Fresh reports whether the entry still answers now.
	Fresh bool
}

// Inspect describes the entry for (community, user) without touching its
// recency or removing it; ok is false when there is none.
func (c *Cache) Inspect(community, user authz.ID) (info EntryInfo, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, st := c.entries.Peek(key{community, user}, c.r.Now())
	if e == nil {
		return EntryInfo{}, false
	}
	return EntryInfo{Kind: e.kind, IDs: len(e.ids), CheckedOutAt: e.checkedOutAt, ExpiresAt: e.expiresAt, Fresh: st == wcache.Hit}, true
}
