package simdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

// Conn is one checkout of a pooled connection. It is used by one task at a
// time and released exactly once; the run fails on a second Release, on a
// statement after Release, and on two statements at once.
type Conn[S any] struct {
	db           *DB[S]
	id           int // connection number, 1..PoolSize×Pools
	pool         int
	handle       uint64
	checkedOutAt time.Time
	released     bool
	busy         bool // a statement is running on it
	broken       bool // a statement's error broke it (Fault.Breaks): closed at Release
}

// waiter is an Acquire call queued for a connection. Release hands its
// connection straight to the first waiter (grant), so the queue is FIFO and
// the waiter's checkout instant is the release instant.
type waiter struct {
	since time.Time
	ev    rt.Event
	conn  int // granted connection number, 0 while waiting
	at    time.Time
}

// pool is one pool's idle connections and queue.
type pool struct {
	free    []int // idle connection numbers, lowest first
	waiters []*waiter
}

// Acquire checks out a connection of the first pool, waiting in FIFO
// order while all PoolSize are busy. It is a scheduling point. It gives up
// when ctx ends (returning an error that wraps ctx.Err(), at exactly the
// deadline) and fails with ErrPoolQueueFull when MaxWaiters callers
// already wait.
func (db *DB[S]) Acquire(ctx context.Context) (*Conn[S], error) {
	return db.AcquireFrom(ctx, 0)
}

// AcquireFrom is Acquire on pool p (0..Pools-1): it waits for p's own
// connections only, as a relay waits on its own store's pool.
func (db *DB[S]) AcquireFrom(ctx context.Context, p int) (*Conn[S], error) {
	s := db.s
	if p < 0 || p >= len(db.pools) {
		return nil, fmt.Errorf("simdb: acquire from pool %d of %d", p, len(db.pools))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("simdb: acquire: %w", err)
	}
	s.Yield() // the request travels to the pool: others may get there first
	since := s.Now()
	c, err := db.acquire(ctx, p)
	if err != nil {
		now := s.Now()
		db.observe(Timing{Name: AcquireStatement, Pool: p, Issued: since, Snapshot: now, Done: now, Err: true})
	}
	return c, err
}

// acquire is AcquireFrom once the request has reached the pool.
func (db *DB[S]) acquire(ctx context.Context, p int) (*Conn[S], error) {
	s := db.s
	if err := db.acquireFault(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		db.m.acquireCanceled.Inc()
		return nil, fmt.Errorf("simdb: acquire: %w", err)
	}
	pl := &db.pools[p]
	if len(pl.free) > 0 && len(pl.waiters) == 0 {
		id := pl.free[0]
		pl.free = pl.free[1:]
		since := s.Now()
		if _, err := db.ready(ctx, id); err != nil {
			return nil, db.unready(p, id, err)
		}
		return db.checkout(p, id, since, s.Now()), nil
	}
	if len(pl.waiters) >= db.cfg.MaxWaiters {
		db.m.queueFull.Inc()
		return nil, fmt.Errorf("%w (%d waiting, pool of %d)", ErrPoolQueueFull, len(pl.waiters), db.cfg.PoolSize)
	}
	w := &waiter{since: s.Now(), ev: s.NewEvent("simdb checkout")}
	pl.waiters = append(pl.waiters, w)
	err := w.ev.Wait(ctx)
	if err == nil {
		at := w.at
		if tripped, err := db.ready(ctx, w.conn); err != nil {
			return nil, db.unready(p, w.conn, err)
		} else if tripped {
			at = s.Now()
		}
		return db.checkout(p, w.conn, w.since, at), nil
	}
	// The context ended. The connection may have been granted just before
	// (Release's Set yields before it wakes us): pass it on, as the caller
	// has given up.
	db.m.acquireCanceled.Inc()
	if w.conn != 0 {
		db.putBack(p, w.conn)
	} else {
		pl.waiters = slices.DeleteFunc(pl.waiters, func(x *waiter) bool { return x == w })
	}
	s.Tracef("simdb acquire gave up after %v queued: %v", s.Now().Sub(w.since), err)
	return nil, fmt.Errorf("simdb: acquire: %w", err)
}

// unready returns connection id, which could not be made ready, to pool p
// and fails the Acquire with err.
func (db *DB[S]) unready(p, id int, err error) error {
	db.putBack(p, id)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		db.m.acquireCanceled.Inc()
	}
	return fmt.Errorf("simdb: acquire: %w", err)
}

// AcquireStatement is the name an AcquireHook sees for a checkout.
const AcquireStatement = "acquire"

// acquireFault applies the AcquireHook's fault to one checkout: its
// AfterSnapshot at once, its Fixed latency (ctx-aware), then its Err. Like a
// statement's faults, an injected one is optional to a shrinker
// (sim.Keep(sim.KeepFault)) unless Required.
func (db *DB[S]) acquireFault(ctx context.Context) error {
	if db.cfg.AcquireHook == nil {
		return nil
	}
	s := db.s
	f := db.cfg.AcquireHook(Statement{Name: AcquireStatement, At: s.Now()})
	if f.AfterSnapshot != nil {
		f.AfterSnapshot()
	}
	if f.Fixed && f.Latency > 0 && (f.Required || s.Keep(sim.KeepFault)) {
		if s.Recording() {
			s.Injected("acquire: the hook makes it wait %v", f.Latency)
		}
		if err := s.Sleep(ctx, f.Latency); err != nil {
			db.m.acquireCanceled.Inc()
			return fmt.Errorf("simdb: acquire: %w", err)
		}
	}
	if f.Err != nil && (f.Required || s.Keep(sim.KeepFault)) {
		db.m.injected.With(SourceHook).Inc()
		if s.Recording() {
			s.Injected("acquire: fails (hook): %v", f.Err)
		}
		return f.Err
	}
	return nil
}

func (db *DB[S]) checkout(p, id int, since, at time.Time) *Conn[S] {
	db.nextID++
	wait := at.Sub(since)
	db.m.checkouts.Inc()
	if wait > 0 {
		db.m.checkoutWaits.Inc()
		db.m.waitNs.Add(int64(wait))
		db.m.waitMaxNs.SetMax(int64(wait))
	}
	db.m.inUse.Add(1)
	db.m.inUseMax.SetMax(db.m.inUse.Value())
	db.observe(Timing{Name: AcquireStatement, Pool: p, Issued: since, Snapshot: at, Done: at})
	return &Conn[S]{db: db, id: id, pool: p, handle: db.nextID, checkedOutAt: at}
}

// putBack returns connection id to pool p: straight to the first waiter
// if any (granting it at this instant), else to the idle list.
func (db *DB[S]) putBack(p, id int) {
	pl := &db.pools[p]
	if len(pl.waiters) == 0 {
		i, _ := slices.BinarySearch(pl.free, id)
		pl.free = slices.Insert(pl.free, i, id)
		return
	}
	w := pl.waiters[0]
	pl.waiters = pl.waiters[1:]
	w.conn, w.at = id, db.s.Now()
	w.ev.Set()
}

// InUse returns how many connections are checked out now.
func (db *DB[S]) InUse() int { return int(db.m.inUse.Value()) }

// Waiting returns how many Acquire calls are queued now, in every pool.
func (db *DB[S]) Waiting() int {
	n := 0
	for _, pl := range db.pools {
		n += len(pl.waiters)
	}
	return n
}

// ID returns the connection's number, 1..PoolSize×Pools.
func (c *Conn[S]) ID() int { return c.id }

// CheckedOutAt is the instant Acquire handed the connection over: for a
// caller that queued, the instant another caller released it. Every
// statement on the connection starts, and reads its snapshot, at or after
// this instant (MS-2 measures freshness from it).
func (c *Conn[S]) CheckedOutAt() time.Time { return c.checkedOutAt }

// Release returns the connection to the pool. A second Release, or a
// Release while a statement runs on it, fails the run.
func (c *Conn[S]) Release() {
	db := c.db
	if c.released {
		db.s.Failf("simdb: connection %d (checkout #%d) released twice", c.id, c.handle)
	}
	if c.busy {
		db.s.Failf("simdb: connection %d (checkout #%d) released while a statement runs on it", c.id, c.handle)
	}
	c.released = true
	db.m.inUse.Add(-1)
	db.conns[c.id-1].idleSince = db.s.Now()
	if c.broken {
		db.conns[c.id-1].open = false
	}
	db.putBack(c.pool, c.id)
}
