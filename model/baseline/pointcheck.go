package baseline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/impl/wcache"
)

// PointCheckCache is the membership design that impl/membership replaced,
// kept as the baseline for MS-1 and MS-11. Every channel check is its own
// authoritative point check (IsActiveMember) on its own connection checkout.
// Its boolean answer is cached per (community, user, channel) for a TTL (10 s
// from the checkout).
//
// Why a per-channel cache rather than bare point checks: the seed keeps "the
// existing ... 10-second freshness bound". It says a cold client "can issue
// 280 separate membership reads" (cold: warm clients hit). It notes that
// before/after hit ratios are not comparable, and that invalidation messages
// keep channel_id for older relays, which is how the old cache was keyed. Set
// Uncached for bare point checks (every check reads).
//
// It has the same IsMember and Invalidate API as membership.Cache, so a
// scenario can run both on one workload and compare the pool's counted
// statements and checkouts. Like the old design its fill is an unfenced
// read-then-insert. It runs on an rt.Runtime (deterministic under the
// simulator) and is safe for concurrent use.
type PointCheckCache struct {
	r    rt.Runtime
	pool authz.Pool
	cfg  PointCheckConfig

	mu      rt.Mutex // guards entries; never held across a database call
	entries *wcache.Cache[pointCheckKey, bool]

	reg          stats.Registry
	hits, misses stats.Counter
}

type pointCheckKey struct{ community, user, channel authz.ID }

// PointCheckConfig tunes a PointCheckCache. The zero value means the
// defaults.
type PointCheckConfig struct {
	// TTL is each cached answer's lifetime, counted from the checkout of
	// the point check's connection; 0 means 10 s.
	TTL time.Duration
	// Capacity is the number of (community, user, channel) answers kept
	// (LRU beyond it); 0 means 1,000,000.
	Capacity int
	// Uncached turns the cache off: every check is a point check.
	Uncached bool
}

// Metric names of the baseline: a hit is a check answered from a cached
// per-channel answer, a miss a point check.
const (
	PointCheckMetricHits   = "membership_point_cache_hits_total"
	PointCheckMetricMisses = "membership_point_cache_misses_total"
)

// NewPointCheckCache returns an empty baseline reading through pool.
func NewPointCheckCache(r rt.Runtime, pool authz.Pool, cfg PointCheckConfig) (*PointCheckCache, error) {
	if r == nil || pool == nil {
		return nil, errors.New("model: PointCheckCache needs a runtime and a pool")
	}
	if cfg.TTL == 0 {
		cfg.TTL = 10 * time.Second
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 1_000_000
	}
	if cfg.TTL < 0 || cfg.Capacity < 0 {
		return nil, fmt.Errorf("model: PointCheckCache TTL and Capacity must be positive, got %v and %d", cfg.TTL, cfg.Capacity)
	}
	entries, err := wcache.New(int64(cfg.Capacity), func(pointCheckKey, bool) int64 { return 1 })
	if err != nil {
		return nil, err
	}
	p := &PointCheckCache{r: r, pool: pool, cfg: cfg, mu: r.NewMutex("pointcheck.mu"), entries: entries}
	p.reg.Counter(PointCheckMetricHits, "Channel checks answered from a cached per-channel answer.", &p.hits)
	p.reg.Counter(PointCheckMetricMisses, "Channel checks answered by a database point check.", &p.misses)
	return p, nil
}

// IsMember reports whether user is an active member of channel in
// community, from a fresh cached answer or a point check. Errors are
// returned and not cached.
func (p *PointCheckCache) IsMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	if community.IsZero() || user.IsZero() || channel.IsZero() {
		return false, errors.New("model: PointCheckCache: zero community, user or channel ID")
	}
	k := pointCheckKey{community, user, channel}
	if !p.cfg.Uncached {
		if err := p.mu.LockContext(ctx); err != nil {
			return false, err
		}
		ok, st := p.entries.Get(k, p.r.Now())
		p.mu.Unlock()
		if st == wcache.Hit {
			p.hits.Inc()
			return ok, nil
		}
	}
	p.misses.Inc()
	ok, checkedOutAt, err := p.pointCheck(ctx, k)
	if err != nil {
		return false, err
	}
	if !p.cfg.Uncached {
		p.mu.Lock()
		p.entries.Put(k, ok, checkedOutAt.Add(p.cfg.TTL))
		p.mu.Unlock()
	}
	return ok, nil
}

func (p *PointCheckCache) pointCheck(ctx context.Context, k pointCheckKey) (bool, time.Time, error) {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("model: PointCheckCache: acquire: %w", err)
	}
	defer conn.Release()
	ok, err := conn.IsActiveMember(ctx, k.community, k.user, k.channel)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("model: PointCheckCache: point check: %w", err)
	}
	return ok, conn.CheckedOutAt(), nil
}

// Invalidate applies an invalidation as the old design did. membership drops
// the one (community, user, channel) answer the message names; that is why
// the messages carry channel_id. accessible_all and channel_deleted drop
// every answer of the community; visibility changes no membership. A
// malformed message changes nothing.
func (p *PointCheckCache) Invalidate(m authz.Message) {
	if m.Validate() != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch m.Kind {
	case authz.KindMembership:
		p.entries.Remove(pointCheckKey{m.CommunityID, m.UserID, m.ChannelID})
	case authz.KindVisibility:
	default:
		p.entries.RemoveIf(func(k pointCheckKey, _ bool) bool { return k.community == m.CommunityID })
	}
}

// Hits counts checks answered from a cached per-channel answer.
func (p *PointCheckCache) Hits() int64 { return p.hits.Value() }

// Misses counts point checks (each one checkout and one statement).
func (p *PointCheckCache) Misses() int64 { return p.misses.Value() }

// Metrics returns the registry with the baseline's counters.
func (p *PointCheckCache) Metrics() *stats.Registry { return &p.reg }
