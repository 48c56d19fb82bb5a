package authztest

import (
	"context"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// Locked is a pool over a DB for real goroutines. The DB is not safe for
// them, so every checkout, statement, release and Write runs under one lock
// of r, as each PostgreSQL statement sees one snapshot. It adds no behaviour
// but a yield after each statement (below). The race checks of impl and of
// the claim families share it.
//
// Each statement yields once it has run, as a real round trip gives up the
// processor while it waits for the server. A cache that loads behind a lock
// of its own is then caught mid-load by other goroutines: they wait on its
// loading lock, or read what it has not yet published. That holds even with
// one processor, where otherwise every load would run to its end unseen.
type Locked struct {
	r  rt.Runtime
	mu rt.Mutex
	db *DB
}

// NewLocked wraps db.
func NewLocked(r rt.Runtime, db *DB) *Locked {
	return &Locked{r: r, mu: r.NewMutex("authztest.locked"), db: db}
}

// Write runs f on the DB under the lock: a test's change of the tables.
func (p *Locked) Write(f func(db *DB)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p.db)
}

// Acquire implements authz.Pool.
func (p *Locked) Acquire(ctx context.Context) (authz.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, err := p.db.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &lockedConn{r: p.r, mu: p.mu, c: c}, nil
}

type lockedConn struct {
	r  rt.Runtime
	mu rt.Mutex
	c  authz.Conn
}

// statement runs f under the pool's lock, then yields: the round trip.
func statement[T any](c *lockedConn, f func() (T, error)) (T, error) {
	defer c.r.Yield()
	c.mu.Lock()
	defer c.mu.Unlock()
	return f()
}

func (c *lockedConn) CheckedOutAt() time.Time { return c.c.CheckedOutAt() }

func (c *lockedConn) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.c.Release()
}

func (c *lockedConn) MemberChannels(ctx context.Context, community, user authz.ID) ([]authz.ID, error) {
	return statement(c, func() ([]authz.ID, error) { return c.c.MemberChannels(ctx, community, user) })
}

func (c *lockedConn) ListedOpenChannels(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	return statement(c, func() ([]authz.ID, error) { return c.c.ListedOpenChannels(ctx, community) })
}

func (c *lockedConn) ActiveMemberships(ctx context.Context, community, user authz.ID, limit int) ([]authz.ID, error) {
	return statement(c, func() ([]authz.ID, error) { return c.c.ActiveMemberships(ctx, community, user, limit) })
}

func (c *lockedConn) IsActiveMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	return statement(c, func() (bool, error) { return c.c.IsActiveMember(ctx, community, user, channel) })
}
