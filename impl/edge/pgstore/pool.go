package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrClosed is returned by Acquire after Close.
var ErrClosed = errors.New("pgstore: store is closed")

// pool is a bounded pool of pgx connections: at most cfg.MaxConns exist at
// once, Acquire waits for a free one, idle connections are reused last-in
// first-out (the warmest one, whose prepared statements are cached), and a
// connection that is not cleanly idle when released is closed instead of
// reused.
//
// It stands in for pgxpool, which needs github.com/jackc/puddle/v2, a module
// this repository's go.sum does not list. It keeps the part of pgxpool the
// caches depend on: Acquire waits while every connection is busy and gives
// up when the context ends.
type pool struct {
	connCfg *pgx.ConnConfig
	cfg     Config
	m       *metrics

	// slots holds one token per connection checked out or being dialled;
	// its capacity is MaxConns. Taking a token is the wait of Acquire.
	slots chan struct{}
	done  chan struct{} // closed by close

	mu     sync.Mutex
	idle   []idleConn // LIFO: the last released is handed out first
	closed bool

	closers sync.WaitGroup // background closes of discarded connections
}

type idleConn struct {
	c     *pgx.Conn
	since time.Time
}

func newPool(connCfg *pgx.ConnConfig, cfg Config, m *metrics) *pool {
	return &pool{connCfg: connCfg, cfg: cfg, m: m,
		slots: make(chan struct{}, cfg.MaxConns), done: make(chan struct{})}
}

// acquire returns a connection and the instant it was handed over. It waits
// while MaxConns connections are checked out, and returns ctx's error when
// ctx ends first, or ErrClosed.
func (p *pool) acquire(ctx context.Context) (*pgx.Conn, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	waitStart := time.Now()
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	case <-p.done:
		return nil, time.Time{}, ErrClosed
	}
	p.m.acquireWaitMicros.Add(time.Since(waitStart).Microseconds())
	c, err := p.take(ctx)
	if err != nil {
		<-p.slots
		return nil, time.Time{}, err
	}
	// The checkout instant is taken after the connection is ready and
	// before any statement is sent on it, so every statement's snapshot is
	// taken after it. The membership cache counts its freshness from here
	// (MS-2): a conservative start, never later than the data's.
	at := time.Now()
	p.m.checkouts.Inc()
	return c, at, nil
}

// take reuses an idle connection or dials a new one. The caller holds a
// slot. The loop is bounded: each iteration removes one idle connection, and
// there are at most MaxConns.
func (p *pool) take(ctx context.Context) (*pgx.Conn, error) {
	for range p.cfg.MaxConns + 1 {
		ic, ok, err := p.popIdle()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		idleFor := time.Since(ic.since)
		if idleFor > p.cfg.MaxIdle {
			p.discard(ic.c)
			continue
		}
		if p.cfg.IdlePing >= 0 && idleFor > p.cfg.IdlePing {
			if err := ic.c.Ping(ctx); err != nil {
				p.discard(ic.c)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue // the server closed it; try the next or dial
			}
		}
		return ic.c, nil
	}
	return p.dial(ctx)
}

func (p *pool) popIdle() (idleConn, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return idleConn{}, false, ErrClosed
	}
	n := len(p.idle)
	if n == 0 {
		return idleConn{}, false, nil
	}
	ic := p.idle[n-1]
	p.idle[n-1] = idleConn{}
	p.idle = p.idle[:n-1]
	return ic, true, nil
}

func (p *pool) dial(ctx context.Context) (*pgx.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, p.cfg.ConnectTimeout)
	defer cancel()
	c, err := pgx.ConnectConfig(dctx, p.connCfg)
	if err != nil {
		p.m.connectErrors.Inc()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("pgstore: connect to %s:%d: %w", p.connCfg.Host, p.connCfg.Port, err)
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		p.closeNow(c)
		return nil, ErrClosed
	}
	p.m.connects.Inc()
	p.m.open.Add(1)
	return c, nil
}

// release returns c to the pool. A connection that is closed, still busy
// (a statement was abandoned mid-way, for instance by a cancelled context)
// or inside a transaction is closed instead of reused: the next user must
// get a connection in a known state.
func (p *pool) release(c *pgx.Conn) {
	defer func() { <-p.slots }()
	reusable := !c.IsClosed() && !c.PgConn().IsBusy() && c.PgConn().TxStatus() == 'I'
	if reusable {
		p.mu.Lock()
		if !p.closed {
			p.idle = append(p.idle, idleConn{c: c, since: time.Now()})
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	p.discard(c)
}

// discard closes a connection in the background: closing a broken
// connection can wait on the network (at most a second), and the caller
// should not. close waits for these; after close, discard closes in the
// caller, so no close is ever left running.
func (p *pool) discard(c *pgx.Conn) {
	p.m.open.Add(-1)
	p.m.discards.Inc()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.closeNow(c)
		return
	}
	// Add under the lock that close takes before it Waits: every Add
	// happens before the Wait or not at all.
	p.closers.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.closers.Done()
		p.closeNow(c)
	}()
}

func (p *pool) closeNow(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Close(ctx) // best effort: the server ends the session either way
}

// idleCount is the number of idle connections (for tests and metrics).
func (p *pool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// close closes the idle connections, makes waiting and future acquires fail
// with ErrClosed, and waits for background closes. Connections checked out
// now are closed when released.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.done)
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, ic := range idle {
		p.discard(ic.c) // closed now, in this goroutine
	}
	p.closers.Wait()
}
