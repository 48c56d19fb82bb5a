package bugbench

import (
	"context"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// tapPool is the workloads' stand-in for a database with latency: it counts
// each statement per (statement, community, user) and holds its answer back
// for slow(...) after the rows were read, so the rows are as old as the
// statement's start, as a slow network makes them. It runs on both runtimes:
// the count is under a lock of the runtime and the delay is the runtime's
// Sleep (virtual in a simulation and in a synctest bubble, real in stress).
type tapPool struct {
	authz.Pool
	r     rt.Runtime
	mu    rt.Mutex
	calls map[stmtKey]int
	// slow is the delay of the n-th (from 0) such statement; nil: none.
	slow func(k stmtKey, n int) time.Duration
}

type stmtKey struct {
	stmt            string // "open" (ListedOpenChannels), "member" (MemberChannels), "load" (ActiveMemberships), "point" (IsActiveMember)
	community, user authz.ID
}

func newTapPool(r rt.Runtime, p authz.Pool, slow func(k stmtKey, n int) time.Duration) *tapPool {
	return &tapPool{Pool: p, r: r, mu: r.NewMutex("bugbench.tap"), calls: map[stmtKey]int{}, slow: slow}
}

// count is how many statements of k ran.
func (p *tapPool) count(k stmtKey) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[k]
}

func (p *tapPool) Acquire(ctx context.Context) (authz.Conn, error) {
	c, err := p.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return tapConn{Conn: c, p: p}, nil
}

type tapConn struct {
	authz.Conn
	p *tapPool
}

// after counts the statement and sleeps its delay; the rows are read.
func (c tapConn) after(ctx context.Context, k stmtKey, ids []authz.ID, err error) ([]authz.ID, error) {
	c.p.mu.Lock()
	n := c.p.calls[k]
	c.p.calls[k]++
	c.p.mu.Unlock()
	if c.p.slow != nil {
		if d := c.p.slow(k, n); d > 0 {
			if serr := c.p.r.Sleep(ctx, d); serr != nil {
				return nil, serr
			}
		}
	}
	return ids, err
}

func (c tapConn) ListedOpenChannels(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	ids, err := c.Conn.ListedOpenChannels(ctx, community)
	return c.after(ctx, stmtKey{stmt: "open", community: community}, ids, err)
}

func (c tapConn) MemberChannels(ctx context.Context, community, user authz.ID) ([]authz.ID, error) {
	ids, err := c.Conn.MemberChannels(ctx, community, user)
	return c.after(ctx, stmtKey{stmt: "member", community: community, user: user}, ids, err)
}

func (c tapConn) ActiveMemberships(ctx context.Context, community, user authz.ID, limit int) ([]authz.ID, error) {
	ids, err := c.Conn.ActiveMemberships(ctx, community, user, limit)
	return c.after(ctx, stmtKey{stmt: "load", community: community, user: user}, ids, err)
}

func (c tapConn) IsActiveMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	ok, err := c.Conn.IsActiveMember(ctx, community, user, channel)
	_, err = c.after(ctx, stmtKey{stmt: "point", community: community, user: user}, nil, err)
	return ok && err == nil, err
}
