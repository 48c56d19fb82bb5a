package baseline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/impl/wcache"
)

// UnionCache is the accessible-channels design that impl/accesschannels
// replaced, kept as the baseline for OC-8's load comparison. It keeps one
// cache entry per (community, reader) holding the whole union of the reader's
// member channels and the community's listed open channels, for a TTL (10 s).
// Every miss reads both queries, so every cold reader re-reads every open
// channel of its community. With 2,000 open channels that is the seed's 1.04M
// tuples/s.
//
// It has the same lookup and invalidation API as accesschannels.Cache so a
// scenario can run both on one workload and compare the pool's counted rows.
// Like the old design its fill is an unfenced read-then-insert, and it runs
// on an rt.Runtime (deterministic under the simulator). It is safe for
// concurrent use.
type UnionCache struct {
	r    rt.Runtime
	pool authz.Pool
	ttl  time.Duration

	mu      rt.Mutex // guards entries; never held across a database call
	entries *wcache.Cache[unionKey, []authz.ID]

	reg          stats.Registry
	hits, misses stats.Counter
}

type unionKey struct{ community, reader authz.ID }

// UnionConfig tunes a UnionCache. The zero value means the defaults.
type UnionConfig struct {
	// TTL is each union's lifetime after insertion; 0 means 10 s.
	TTL time.Duration
	// Capacity is the number of readers kept (LRU beyond it); 0 means 100,000.
	Capacity int
}

// Metric names of the old design, where they counted whole lookups.
const (
	UnionMetricHits   = "accessible_channels_cache_hits_total"
	UnionMetricMisses = "accessible_channels_cache_misses_total"
)

// NewUnionCache returns an empty baseline cache reading through pool.
func NewUnionCache(r rt.Runtime, pool authz.Pool, cfg UnionConfig) (*UnionCache, error) {
	if r == nil || pool == nil {
		return nil, errors.New("model: UnionCache needs a runtime and a pool")
	}
	if cfg.TTL == 0 {
		cfg.TTL = 10 * time.Second
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 100_000
	}
	if cfg.TTL < 0 || cfg.Capacity < 0 {
		return nil, fmt.Errorf("model: UnionCache TTL and Capacity must be positive, got %v and %d", cfg.TTL, cfg.Capacity)
	}
	entries, err := wcache.New(int64(cfg.Capacity), func(unionKey, []authz.ID) int64 { return 1 })
	if err != nil {
		return nil, err
	}
	u := &UnionCache{r: r, pool: pool, ttl: cfg.TTL, mu: r.NewMutex("unioncache.mu"), entries: entries}
	u.reg.Counter(UnionMetricHits, "Whole-union lookups served from cache.", &u.hits)
	u.reg.Counter(UnionMetricMisses, "Whole-union lookups read from the database.", &u.misses)
	return u, nil
}

// Accessible returns the reader's member channels ∪ the community's listed
// open channels, sorted and without duplicates. The slice is the caller's.
func (u *UnionCache) Accessible(ctx context.Context, community, reader authz.ID) ([]authz.ID, error) {
	ids, err := u.lookup(ctx, community, reader)
	if err != nil {
		return nil, err
	}
	return slices.Clone(ids), nil
}

// Granted reports whether channel is in Accessible(ctx, community, reader).
func (u *UnionCache) Granted(ctx context.Context, community, reader, channel authz.ID) (bool, error) {
	ids, err := u.lookup(ctx, community, reader)
	if err != nil {
		return false, err
	}
	_, found := slices.BinarySearchFunc(ids, channel, authz.Compare)
	return found, nil
}

func (u *UnionCache) lookup(ctx context.Context, community, reader authz.ID) ([]authz.ID, error) {
	if community.IsZero() || reader.IsZero() {
		return nil, errors.New("model: UnionCache: zero community or reader ID")
	}
	k := unionKey{community, reader}
	if err := u.mu.LockContext(ctx); err != nil {
		return nil, err
	}
	ids, st := u.entries.Get(k, u.r.Now())
	u.mu.Unlock()
	if st == wcache.Hit {
		u.hits.Inc()
		return ids, nil
	}
	u.misses.Inc()
	ids, err := u.read(ctx, community, reader)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.entries.Put(k, ids, u.r.Now().Add(u.ttl))
	u.mu.Unlock()
	return ids, nil
}

// read is the old miss: both queries, every open channel row again.
func (u *UnionCache) read(ctx context.Context, community, reader authz.ID) ([]authz.ID, error) {
	conn, err := u.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("model: UnionCache: acquire: %w", err)
	}
	defer conn.Release()
	member, err := conn.MemberChannels(ctx, community, reader)
	if err != nil {
		return nil, fmt.Errorf("model: UnionCache: member channels: %w", err)
	}
	open, err := conn.ListedOpenChannels(ctx, community)
	if err != nil {
		return nil, fmt.Errorf("model: UnionCache: open channels: %w", err)
	}
	return sortedUnion(member, open), nil
}

// sortedUnion is the sorted union of a and b without duplicates, in a new
// slice: the answer the old miss computed by sorting both together. A
// community's open channels usually come sorted, since the tables list them
// in insertion order. Then only the reader's few memberships are sorted and
// the two merged, which keeps OC-8's check fast. It is the baseline's own and
// not accesschannels' union: the old design is kept apart from the one it is
// compared with. Its database reads, which OC-8 counts, do not depend on how
// it sorts in memory.
func sortedUnion(a, b []authz.ID) []authz.ID {
	if len(a)+len(b) == 0 {
		return slices.Clone(a) // as the sort of nothing was: nil when a is
	}
	out := make([]authz.ID, 0, len(a)+len(b))
	if !slices.IsSortedFunc(b, authz.Compare) {
		out = append(append(out, a...), b...)
		slices.SortFunc(out, authz.Compare)
		return slices.Compact(out)
	}
	a = slices.SortedFunc(slices.Values(a), authz.Compare)
	for len(a) > 0 || len(b) > 0 {
		var next authz.ID
		switch {
		case len(b) == 0 || (len(a) > 0 && authz.Compare(a[0], b[0]) <= 0):
			next, a = a[0], a[1:]
		default:
			next, b = b[0], b[1:]
		}
		if len(out) == 0 || out[len(out)-1] != next {
			out = append(out, next)
		}
	}
	return out
}

// Invalidate applies an invalidation: membership drops that reader's union;
// accessible_all, visibility and channel_deleted drop every union of the
// community. A malformed message changes nothing.
func (u *UnionCache) Invalidate(m authz.Message) {
	if m.Validate() != nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if m.Kind == authz.KindMembership {
		u.entries.Remove(unionKey{m.CommunityID, m.UserID})
		return
	}
	u.entries.RemoveIf(func(k unionKey, _ []authz.ID) bool { return k.community == m.CommunityID })
}

// Hits counts whole lookups served from cache.
func (u *UnionCache) Hits() int64 { return u.hits.Value() }

// Misses counts lookups that read both halves from the database.
func (u *UnionCache) Misses() int64 { return u.misses.Value() }

// Metrics returns the registry with the old-meaning counters.
func (u *UnionCache) Metrics() *stats.Registry { return &u.reg }
