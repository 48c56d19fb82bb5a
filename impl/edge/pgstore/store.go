package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// Store is the authorization database on PostgreSQL: an authz.Pool whose
// connections run the seeds' queries. It is safe for concurrent use. Create
// it with Open and Close it when done.
type Store struct {
	pool *pool
	cfg  Config
	m    *metrics
}

var _ authz.Pool = (*Store)(nil)

// Open validates the connection string and cfg and returns a Store. It
// connects lazily, but checks the server once: Open fails, within ctx and
// ConnectTimeout, when PostgreSQL is unreachable or refuses the credentials,
// so a misconfigured service stops at startup rather than on its first
// request.
//
// connString is a PostgreSQL URL (postgres://user:pass@host:port/db?sslmode=disable)
// or keyword/value string ("host=... port=..."), as libpq and pgx accept;
// an empty string takes everything from the PG* environment variables.
func Open(ctx context.Context, connString string, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	connCfg, err := pgx.ParseConfig(connString)
	if err != nil {
		// pgx's message never includes the password.
		return nil, fmt.Errorf("pgstore: bad connection string: %w", err)
	}
	if connCfg.ConnectTimeout == 0 || connCfg.ConnectTimeout > cfg.ConnectTimeout {
		connCfg.ConnectTimeout = cfg.ConnectTimeout
	}
	if _, ok := connCfg.RuntimeParams["application_name"]; !ok {
		connCfg.RuntimeParams["application_name"] = ApplicationName
	}
	if cfg.Schema != "" {
		connCfg.RuntimeParams["search_path"] = cfg.Schema
	}
	m := newMetrics()
	s := &Store{pool: newPool(connCfg, cfg, m), cfg: cfg, m: m}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Acquire implements authz.Pool. It waits while MaxConns connections are
// checked out, and returns ctx's error when ctx ends first (or ErrClosed
// after Close). The returned connection's CheckedOutAt is the wall-clock
// instant it was handed over, taken after any dial or health ping and before
// any statement (MS-2). Release it exactly once.
func (s *Store) Acquire(ctx context.Context) (authz.Conn, error) {
	c, at, err := s.pool.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{s: s, c: c, at: at}, nil
}

// Ping checks out a connection and pings the server with it.
func (s *Store) Ping(ctx context.Context) error {
	c, _, err := s.pool.acquire(ctx)
	if err != nil {
		return err
	}
	err = c.Ping(ctx)
	s.pool.release(c)
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
func (s *Store) IdleConns() int { return s.pool.idleCount() }

// Close closes the idle connections and makes every waiting and future
// Acquire fail with ErrClosed. Connections checked out now are closed when
// they are released. Close is idempotent.
func (s *Store) Close() { s.pool.close() }
