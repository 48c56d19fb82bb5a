package accesschannels

import (
	"context"
	"errors"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/impl/wcache"
)

// ErrZeroID is returned (wrapped) when a community, reader or channel ID is
// the zero UUID, which no row has.
var ErrZeroID = errors.New("accesschannels: zero ID")

// key names one cached half. Every key includes the community (OC-10): a
// member half is (community, reader); an open half is (community, zero
// reader), one shared entry per community (OC-8).
type key struct {
	community, reader authz.ID
}

// Cache is the accessible-channels cache of one relay (pod). It is safe for
// concurrent use. Create it with New.
type Cache struct {
	r    rt.Runtime
	pool authz.Pool
	cfg  Config

	// mu guards members, opens and flights. It is held only for map and
	// list operations: never across a database call, so a slow read never
	// blocks lookups of other readers or communities.
	mu      rt.Mutex
	members *wcache.Cache[key, []authz.ID]
	opens   *wcache.Cache[key, openEntry]
	flights map[key]*flight

	m *metrics
}

// New returns an empty cache that reads through pool and keeps time and
// locks on r (rt.Real() in a service, the simulator in tests).
func New(r rt.Runtime, pool authz.Pool, cfg Config) (*Cache, error) {
	if r == nil {
		return nil, errors.New("accesschannels: nil runtime")
	}
	if pool == nil {
		return nil, errors.New("accesschannels: nil pool")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	one := func(key, []authz.ID) int64 { return 1 }
	members, err := wcache.New(int64(cfg.MemberCapacity), one)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: member half: %w", err)
	}
	opens, err := wcache.New(int64(cfg.CommunityCapacity), func(key, openEntry) int64 { return 1 })
	if err != nil {
		return nil, fmt.Errorf("accesschannels: open half: %w", err)
	}
	return &Cache{
		r: r, pool: pool, cfg: cfg,
		mu:      r.NewMutex("accesschannels.mu"),
		members: members, opens: opens,
		flights: make(map[key]*flight),
		m:       newMetrics(),
	}, nil
}

// Config returns the configuration in effect, defaults filled in.
func (c *Cache) Config() Config { return c.cfg }

// Accessible returns the channels of community that reader may read: the
// reader's member channels ∪ the community's listed open channels (OC-1),
// sorted by authz.Compare, without duplicates. The slice is the caller's.
//
// An open channel revoked on another relay whose invalidation was lost can
// still be returned for at most MaxAgeOpen after the start of the open-set
// read that saw it (OC-2), to any reader, including one never seen before
// (OC-3). A member channel can be returned for up to TTL after its fill was
// inserted (OC-7), and longer after a fill that raced an invalidation (the
// OC-6 debt, see the package documentation).
func (c *Cache) Accessible(ctx context.Context, community, reader authz.ID) ([]authz.ID, error) {
	member, open, err := c.lookup(ctx, community, reader)
	if err != nil {
		return nil, err
	}
	return union(member, open), nil
}

// Granted reports whether channel is in Accessible(ctx, community, reader).
// It reads the same two halves (and counts the same hits and misses) without
// building the union, so a hit allocates nothing.
func (c *Cache) Granted(ctx context.Context, community, reader, channel authz.ID) (bool, error) {
	if channel.IsZero() {
		return false, fmt.Errorf("%w: channel", ErrZeroID)
	}
	member, open, err := c.lookup(ctx, community, reader)
	if err != nil {
		return false, err
	}
	return contains(member, channel) || contains(open, channel), nil
}

// lookup returns the two sorted halves, from cache or the database.
func (c *Cache) lookup(ctx context.Context, community, reader authz.ID) (member, open []authz.ID, err error) {
	if err := checkIDs(community, reader); err != nil {
		return nil, nil, err
	}
	member, err = c.memberHalf(ctx, key{community: community, reader: reader}) // OC-10: member key includes the community
	if err != nil {
		return nil, nil, err
	}
	open, err = c.openHalf(ctx, key{community: community}) // OC-1: every reader gets the open half; OC-8: one shared key per community
	if err != nil {
		return nil, nil, err
	}
	return member, open, nil
}

func checkIDs(community, reader authz.ID) error {
	if community.IsZero() {
		return fmt.Errorf("%w: community", ErrZeroID)
	}
	if reader.IsZero() {
		return fmt.Errorf("%w: reader", ErrZeroID)
	}
	return nil
}

// Stats returns the current counters.
func (c *Cache) Stats() Stats { return c.m.snapshot() }

// Metrics returns the registry holding this cache's counters under the
// seed's names (OC-9), for Prometheus exposition (WriteText) or Snapshot.
func (c *Cache) Metrics() *stats.Registry { return &c.m.reg }
