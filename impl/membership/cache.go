package membership

import (
	"context"
	"errors"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/wcache"
)

// maxWaitRounds bounds how often one check waits for a user's lock and then
// finds that the entry changed under it (invalidated, expired or evicted
// while it waited). Each round needs such a change, so real checks take one
// or two; after this many the check stops waiting and asks the database,
// counted as a wait_timeout fallback.
const maxWaitRounds = 8

// ErrZeroID is returned for a check with a zero community, user or channel
// ID: such an ID names nothing, and caching an answer for it would only
// waste budget.
var ErrZeroID = errors.New("membership: zero community, user or channel ID")

// Cache answers "is this user an active member of this channel?" from
// per-(community, user) membership snapshots. It is safe for concurrent use.
type Cache struct {
	r    rt.Runtime
	pool authz.Pool
	cfg  Config

	// mu is the short lock that guards entries. Publication and
	// invalidation both happen under it, which is what makes the fence
	// work (MS-3). Nothing blocks while it is held.
	mu      rt.Mutex
	entries *wcache.Cache[key, *entry]

	m metrics
}

// New returns an empty cache that reads memberships through pool and keeps
// time and locks on r. Zero Config fields take the defaults.
func New(r rt.Runtime, pool authz.Pool, cfg Config) (*Cache, error) {
	if r == nil || pool == nil {
		return nil, errors.New("membership: New needs a runtime and a pool")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	entries, err := wcache.New(cfg.BudgetBytes, weigh)
	if err != nil {
		return nil, fmt.Errorf("membership: %w", err)
	}
	return &Cache{r: r, pool: pool, cfg: cfg, mu: r.NewMutex("membership.cache"), entries: entries, m: newMetrics()}, nil
}

// Config returns the configuration in effect, defaults filled in.
func (c *Cache) Config() Config { return c.cfg }

// IsMember reports whether user is an active member of channel in community:
// the channel check. A fresh snapshot answers by binary search without
// allocating. Otherwise the check shares (or starts) one load of the user's
// whole membership list. It asks the database directly when the user has too
// many memberships (oversize) or another request's load takes longer than
// LockWait (wait_timeout). Database errors and the context's error are
// returned, never cached.
func (c *Cache) IsMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	if community.IsZero() || user.IsZero() || channel.IsZero() {
		return false, ErrZeroID
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	k := key{community, user}
	// One deadline for all waiting this check does, created on the first
	// wait so that a hit allocates nothing (MS-6).
	var waitCtx context.Context
	var stopWait context.CancelFunc
	for round := 0; round < maxWaitRounds; round++ {
		c.mu.Lock()
		e, loader := c.lookupOrStartLoading(k)
		c.mu.Unlock()
		if loader {
			stop(stopWait)
			return c.load(ctx, k, e, channel)
		}
		switch e.kind {
		case Snapshot:
			stop(stopWait)
			c.m.hits.Inc()
			return e.contains(channel), nil // MS-1: a fresh snapshot answers every channel of the user
		case PointChecks:
			stop(stopWait)
			return c.oversizeCheck(ctx, k, channel)
		}
		// Another request is loading this user: wait for its lock (MS-5).
		if waitCtx == nil {
			waitCtx, stopWait = c.r.WithTimeout(ctx, c.cfg.LockWait)
		}
		if err := e.lock.LockContext(waitCtx); err != nil {
			stop(stopWait)
			if cerr := ctx.Err(); cerr != nil {
				return false, cerr // the request itself ended
			}
			return c.waitTimeoutCheck(ctx, k, channel)
		}
		c.mu.Lock()
		stillLoading := c.current(k) == e // MS-5: recheck after acquiring the lock
		c.mu.Unlock()
		if stillLoading {
			// The previous holder failed or was cancelled and left the
			// entry without a decision: this request loads under the lock
			// it now holds (MS-7).
			stop(stopWait)
			return c.load(ctx, k, e, channel)
		}
		// The holder published (next round hits) or the entry was
		// invalidated, expired or evicted (next round loads or waits
		// again). Hand the lock on to the next waiter.
		e.lock.Unlock()
	}
	stop(stopWait)
	return c.waitTimeoutCheck(ctx, k, channel) // MS-6: the rounds ran out: a point check, as after a timeout
}

func stop(f context.CancelFunc) {
	if f != nil {
		f()
	}
}

// current returns the fresh entry for k, or nil. An expired entry is
// removed. Caller holds mu.
func (c *Cache) current(k key) *entry {
	e, st := c.entries.Get(k, c.r.Now())
	if st != wcache.Hit {
		return nil
	}
	return e
}

// lookupOrStartLoading returns the fresh entry for k, or installs a new
// Loading entry whose lock the caller then holds (loader is true). Caller
// holds mu, so exactly one request becomes the loader of a cold user.
func (c *Cache) lookupOrStartLoading(k key) (e *entry, loader bool) {
	if e := c.current(k); e != nil {
		return e, false
	}
	now := c.r.Now()
	e = &entry{kind: Loading, checkedOutAt: now, expiresAt: now.Add(c.cfg.Freshness), lock: c.r.NewMutex("membership.user")}
	if !e.lock.TryLock() {
		panic("membership: a new user lock was not free")
	}
	// A loading entry expires like any other, so a load that hangs past
	// Freshness cannot block the user for longer: the next request
	// replaces the entry and the hung load can no longer publish (MS-3).
	c.entries.Put(k, e, e.expiresAt)
	return e, true
}

// oversizeCheck answers for a user above MaxSnapshotIDs (MS-4).
func (c *Cache) oversizeCheck(ctx context.Context, k key, channel authz.ID) (bool, error) {
	c.m.oversize.Inc()
	return c.pointCheck(ctx, k, channel)
}

// waitTimeoutCheck answers when waiting for the user's lock gave up (MS-6).
func (c *Cache) waitTimeoutCheck(ctx context.Context, k key, channel authz.ID) (bool, error) {
	c.m.waitTimeout.Inc()
	return c.pointCheck(ctx, k, channel) // MS-6: authoritative point check, never a guess
}

// pointCheck asks the database about one channel on its own connection.
func (c *Cache) pointCheck(ctx context.Context, k key, channel authz.ID) (bool, error) {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("membership: point check: %w", err)
	}
	defer conn.Release()
	ok, err := conn.IsActiveMember(ctx, k.community, k.user, channel)
	if err != nil {
		return false, fmt.Errorf("membership: point check: %w", err)
	}
	return ok, nil
}
