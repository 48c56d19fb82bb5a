package accesschannels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/wcache"
)

// maxOpenAttempts bounds how often one lookup starts over after the read it
// was waiting for was abandoned by its leader's own cancellation.
const maxOpenAttempts = 3

// openEntry is a cached open half.
type openEntry struct {
	ids []authz.ID
	// readStart is the instant the read that produced ids began, taken
	// before the connection was acquired. Every row in ids was still true at
	// or after it, so serving the entry only before readStart+MaxAgeOpen
	// bounds staleness by MaxAgeOpen with no fence (OC-2, OC-4).
	readStart time.Time
}

// flight is an open-set read in progress that concurrent misses of the same
// community share, as Moka's get_with shared its initializer (OC-8: a cold
// burst reads the open set once, not once per reader). Its fields other than
// readStart and done are written by the leader before done is set.
type flight struct {
	readStart time.Time
	done      rt.Event
	ids       []authz.ID
	err       error
	// abandoned: the read failed because the leader's own context ended, so
	// the error says nothing about the database and waiters try again.
	abandoned bool
}

// openHalf returns the community's listed open channels, sorted.
func (c *Cache) openHalf(ctx context.Context, k key) ([]authz.ID, error) {
	var lastErr error
	for attempt := 0; attempt < maxOpenAttempts; attempt++ {
		if err := c.mu.LockContext(ctx); err != nil {
			return nil, err
		}
		now := c.r.Now()
		reason := c.m.openAbsent
		if e, st := c.opens.Get(k, now); st == wcache.Hit {
			fresh := now.Before(e.readStart.Add(c.cfg.MaxAgeOpen)) // OC-2: serve only until MaxAgeOpen after the read began
			if fresh {
				c.mu.Unlock()
				if attempt == 0 { // a retry already counted this lookup's miss
					c.m.openHits.Inc()
				}
				return e.ids, nil
			}
			reason = c.m.openExpired
		}
		f, leader := c.flights[k], false
		// Join a read in flight only while it is young enough to be served
		// from the cache. A waiter's answer is then at most MaxAgeOpen stale
		// too (OC-2). And a read slower than MaxAgeOpen cannot hold every
		// later reader on stale data; it costs one more read per MaxAgeOpen.
		if f == nil || !now.Before(f.readStart.Add(c.cfg.MaxAgeOpen)) {
			f = &flight{readStart: now, done: c.r.NewEvent("accesschannels.open-read")} // OC-2, OC-4: the clock is read before the connection is acquired
			c.flights[k] = f
			leader = true
		}
		c.mu.Unlock()
		if attempt == 0 {
			reason.Inc() // one miss per lookup, however often it starts over
		}

		if leader {
			return c.fill(ctx, k, f)
		}
		if err := f.done.Wait(ctx); err != nil {
			return nil, err
		}
		if f.err == nil {
			return f.ids, nil
		}
		if !f.abandoned || ctx.Err() != nil {
			return nil, f.err
		}
		lastErr = f.err
	}
	return nil, fmt.Errorf("accesschannels: open channels: %d shared reads in a row were abandoned by their callers: %w", maxOpenAttempts, lastErr)
}

// fill reads the open set for flight f, caches it, and hands the outcome to
// every waiter of f.
//
// No fence (OC-4): the result is inserted even if an invalidation dropped
// the community while the read was in flight. The entry carries the read's
// start instant, so it is served for at most MaxAgeOpen after that whatever
// happened meanwhile. The only comparison is with an entry from a later read,
// which is kept because it is fresher.
func (c *Cache) fill(ctx context.Context, k key, f *flight) ([]authz.ID, error) {
	ids, err := c.readOpen(ctx, k.community)

	c.mu.Lock()
	if c.flights[k] == f {
		delete(c.flights, k)
	}
	if err == nil {
		now := c.r.Now()
		entry := openEntry{ids: ids, readStart: f.readStart} // OC-2, OC-4: age counts from the start of the read
		if cur, st := c.opens.Peek(k, now); st == wcache.Absent || !entry.readStart.Before(cur.readStart) {
			c.opens.Put(k, entry, now.Add(c.cfg.TTL)) // OC-3, OC-8: the open set is cached and shared
		}
	}
	f.ids, f.err = ids, err
	f.abandoned = err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())
	c.mu.Unlock()
	f.done.Set()
	return ids, err
}

// readOpen runs the listed-open-channels query on a connection of its own.
func (c *Cache) readOpen(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: open channels: acquire: %w", err)
	}
	defer conn.Release()
	ids, err := conn.ListedOpenChannels(ctx, community)
	if err != nil {
		return nil, fmt.Errorf("accesschannels: open channels: %w", err)
	}
	return normalize(ids), nil
}
