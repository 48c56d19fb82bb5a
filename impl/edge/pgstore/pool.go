package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrClosed is returned by Acquire after Close.
var ErrClosed = errors.New("pgstore: store is closed")

// poolConfig turns the connection string and cfg (defaults filled in) into
// pgxpool's configuration. Config's fields override the connection string's
// pool_max_conns and pool_max_conn_idle_time; pgxpool's other pool_*
// parameters (pool_max_conn_lifetime, pool_health_check_period,
// pool_min_conns, ...) are honoured as pgxpool documents them.
func poolConfig(connString string, cfg Config, m *metrics) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// pgx's message never includes the password.
		return nil, fmt.Errorf("pgstore: bad connection string: %w", err)
	}
	cc := pc.ConnConfig
	// pgxpool dials in the background when the caller gives up, so this
	// also bounds connects nobody waits for any more.
	if cc.ConnectTimeout == 0 || cc.ConnectTimeout > cfg.ConnectTimeout {
		cc.ConnectTimeout = cfg.ConnectTimeout
	}
	if _, ok := cc.RuntimeParams["application_name"]; !ok {
		cc.RuntimeParams["application_name"] = ApplicationName
	}
	if cfg.Schema != "" {
		// Sent in the startup message: no round trip of its own, and in
		// force before the first statement.
		cc.RuntimeParams["search_path"] = cfg.Schema
	}
	cc.Tracer = connectCounter{m}

	pc.MaxConns = int32(cfg.MaxConns) // withDefaults bounds it
	pc.MaxConnIdleTime = cfg.MaxIdle
	idlePing := cfg.IdlePing
	pc.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		ping := idlePing >= 0 && p.IdleDuration > idlePing
		if ping {
			m.pings.Inc()
		}
		return ping
	}
	// Every connection pgxpool closes passes here: broken or busy at
	// release, idle or old too long, failed its ping, or the pool closed.
	pc.BeforeClose = func(*pgx.Conn) {
		m.open.Add(-1)
		m.discards.Inc()
	}
	return pc, nil
}

// connectCounter counts connection attempts' outcomes, including dials
// pgxpool finishes in the background after the Acquire that started them
// gave up. pgx reads connect tracing only from the query tracer, hence the
// two no-op query methods.
type connectCounter struct{ m *metrics }

func (connectCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (connectCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// connectStart keys the instant a connect began in its context.
type connectStart struct{}

func (connectCounter) TraceConnectStart(ctx context.Context, _ pgx.TraceConnectStartData) context.Context {
	return context.WithValue(ctx, connectStart{}, time.Now())
}

func (t connectCounter) TraceConnectEnd(ctx context.Context, d pgx.TraceConnectEndData) {
	if d.Err != nil {
		t.m.connectErrors.Inc()
		return
	}
	t.m.connects.Inc()
	t.m.open.Add(1)
	if start, ok := ctx.Value(connectStart{}).(time.Time); ok {
		t.m.connectMicros.Add(time.Since(start).Microseconds())
	}
}

// acquire checks out a pooled connection and returns it with the instant it
// was handed over. It waits while MaxConns connections are checked out, and
// returns ctx's error when ctx ends first, or ErrClosed.
func (s *Store) acquire(ctx context.Context) (*pgxpool.Conn, time.Time, error) {
	if s.closing.Err() != nil {
		return nil, time.Time{}, ErrClosed
	}
	// pgxpool's Acquire keeps waiting for a free connection when the pool
	// closes; cancelling it on Close makes a waiter fail with ErrClosed.
	actx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	start := time.Now()
	c, err := s.pool.Acquire(actx)
	s.m.acquireWaitMicros.Add(time.Since(start).Microseconds())
	stop()
	cancel()
	if err != nil {
		return nil, time.Time{}, s.acquireError(ctx, err)
	}
	// The checkout instant is taken after pgxpool is done with the
	// connection (dial or health ping) and before any statement is sent on
	// it, so every statement's snapshot is taken after it. The membership
	// cache counts its freshness from here (MS-2): a conservative start,
	// never later than the data's.
	at := time.Now()
	s.m.checkouts.Inc()
	return c, at, nil
}

func (s *Store) acquireError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if s.closing.Err() != nil {
		return ErrClosed // also covers pgxpool's own "closed pool"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("pgstore: connect to %s:%d: %w", s.host, s.port, err)
	}
	return fmt.Errorf("pgstore: acquire: %w", err)
}
