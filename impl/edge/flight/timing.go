package flight

import (
	"context"
	"sync"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// MaxSamples bounds each series a relay keeps for OpStats.
const MaxSamples = 1 << 16

// samples is a bounded series of durations: past MaxSamples the oldest are
// overwritten, so a long flight keeps its latest window.
type samples struct {
	mu   sync.Mutex
	v    []int64
	next int
}

func (s *samples) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.v) < MaxSamples {
		s.v = append(s.v, int64(d))
		return
	}
	s.v[s.next] = int64(d)
	s.next = (s.next + 1) % MaxSamples
}

func (s *samples) snapshot() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.v...)
}

// timedPool measures what the simulated database models: how long an
// Acquire waits and how long each statement takes. It passes every call
// through unchanged, CheckedOutAt included, so the wiring above it behaves
// as on a bare pgstore.Store.
type timedPool struct {
	authz.Pool
	waits, stmts samples
	// memberReads is each member-half read from the start of its Acquire
	// to its statement's return: what OC-7's TTL adds (it counts from the
	// entry's insertion, after the read).
	memberReads samples
	stmtErrs    errCount
	// acquireErrs is each failed Acquire, from its call to its error.
	acquireErrs samples
}

type errCount struct {
	mu sync.Mutex
	n  int64
}

func (e *errCount) inc() { e.mu.Lock(); e.n++; e.mu.Unlock() }
func (e *errCount) get() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (p *timedPool) Acquire(ctx context.Context) (authz.Conn, error) {
	start := time.Now()
	c, err := p.Pool.Acquire(ctx)
	if err != nil {
		// Counted apart: a wait cut short by its caller's context is not
		// a checkout, and the simulated pool observes checkouts only.
		p.acquireErrs.add(time.Since(start))
		return nil, err
	}
	p.waits.add(time.Since(start))
	return &timedConn{Conn: c, p: p, acquired: start}, nil
}

type timedConn struct {
	authz.Conn
	p        *timedPool
	acquired time.Time // when its Acquire began
}

func (c *timedConn) done(start time.Time, err error) {
	c.p.stmts.add(time.Since(start))
	if err != nil {
		c.p.stmtErrs.inc()
	}
}

func (c *timedConn) MemberChannels(ctx context.Context, community, user authz.ID) ([]authz.ID, error) {
	start := time.Now()
	ids, err := c.Conn.MemberChannels(ctx, community, user)
	c.done(start, err)
	c.p.memberReads.add(time.Since(c.acquired))
	return ids, err
}

func (c *timedConn) ListedOpenChannels(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	start := time.Now()
	ids, err := c.Conn.ListedOpenChannels(ctx, community)
	c.done(start, err)
	return ids, err
}

func (c *timedConn) ActiveMemberships(ctx context.Context, community, user authz.ID, limit int) ([]authz.ID, error) {
	start := time.Now()
	ids, err := c.Conn.ActiveMemberships(ctx, community, user, limit)
	c.done(start, err)
	return ids, err
}

func (c *timedConn) IsActiveMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	start := time.Now()
	ok, err := c.Conn.IsActiveMember(ctx, community, user, channel)
	c.done(start, err)
	return ok, err
}
