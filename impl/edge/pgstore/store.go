package pgstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// Store is the authorization database on PostgreSQL: an authz.Pool whose
// connections run the seeds' queries. It is safe for concurrent use. Create
// it with Open and Close it when done.
type Store struct {
	pool *pgxpool.Pool
	cfg  Config
	m    *metrics
	host string // for connect errors
	port uint16

	// closing is cancelled by Close; it wakes waiting Acquires.
	closing   context.Context
	stop      context.CancelFunc
	closeOnce sync.Once
}

var _ authz.Pool = (*Store)(nil)

// Open validates the connection string and cfg and returns a Store on a
// pgxpool.Pool. It connects lazily, but checks the server once. Open fails,
// within ctx and ConnectTimeout, when PostgreSQL is unreachable or refuses
// the credentials. So a misconfigured service stops at startup rather than on
// its first request.
//
// connString is a PostgreSQL URL
// (postgres://user:pass@host:port/db?sslmode=disable) or keyword/value string
// ("host=... port=..."), as libpq and pgx accept. An empty string takes
// everything from the PG* environment variables. The pool_* parameters
// pgxpool.ParseConfig reads are accepted, except that cfg decides the pool
// size and idle time. MaxConns and MaxIdle (their defaults included) override
// pool_max_conns and pool_max_conn_idle_time.
func Open(ctx context.Context, connString string, cfg Config) (*Store, error) {
	s, err := newStore(ctx, connString, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// newStore is Open without the check of the server: it connects nothing.
func newStore(ctx context.Context, connString string, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := newMetrics()
	pc, err := poolConfig(connString, cfg, m)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	closing, stop := context.WithCancel(context.Background())
	return &Store{pool: pool, cfg: cfg, m: m, host: pc.ConnConfig.Host, port: pc.ConnConfig.Port, closing: closing, stop: stop}, nil
}

// Acquire implements authz.Pool with pgxpool.Pool.Acquire. It waits while
// MaxConns connections are checked out, and returns ctx's error when ctx
// ends first (or ErrClosed after Close). The returned connection's
// CheckedOutAt is the wall-clock instant it was handed over, taken after
// any dial or health ping and before any statement (MS-2). Release it
// exactly once.
func (s *Store) Acquire(ctx context.Context) (authz.Conn, error) {
	c, at, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{s: s, c: c, at: at}, nil
}

// Ping checks out a connection and pings the server with it.
func (s *Store) Ping(ctx context.Context) error {
	c, _, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	err = c.Ping(ctx)
	c.Release()
	if err != nil {
		return fmt.Errorf("pgstore: ping: %w", err)
	}
	return nil
}

// Config returns the configuration in effect, defaults filled in.
func (s *Store) Config() Config { return s.cfg }

// Metrics returns the store's counters (see the Metric constants) for
// exposition or tests.
func (s *Store) Metrics() *stats.Registry { return &s.m.reg }

// IdleConns returns how many connections sit idle in the pool.
func (s *Store) IdleConns() int { return int(s.pool.Stat().IdleConns()) }

// Close makes every waiting and future Acquire fail with ErrClosed and closes
// the pool without waiting for it. Idle connections are closed in the
// background at once. Each connection checked out now is closed when it is
// released; until then it keeps working. Close is idempotent.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		s.stop()
		// pgxpool.Pool.Close blocks until every checked-out connection is
		// back; a caller shutting down must not hang on a connection some
		// request still holds.
		go s.pool.Close()
	})
}
