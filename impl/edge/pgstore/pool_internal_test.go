package pgstore

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/edge/testenv"
)

func mustPoolConfig(t *testing.T, connString string, cfg Config) *pgxpool.Config {
	t.Helper()
	cfg, err := cfg.withDefaults()
	require.NoError(t, err)
	pc, err := poolConfig(connString, cfg, newMetrics())
	require.NoError(t, err)
	return pc
}

// Config reaches pgxpool; the connection string's other pool settings
// survive. No server needed.
func TestPoolConfigFollowsConfig(t *testing.T) {
	pc := mustPoolConfig(t,
		"postgres://u:p@h:5433/db?sslmode=disable&connect_timeout=2&pool_max_conns=50&pool_max_conn_lifetime=7m",
		Config{MaxConns: 3, Schema: "wt_x", IdlePing: 10 * time.Millisecond, MaxIdle: time.Minute})
	assert.Equal(t, int32(3), pc.MaxConns, "Config.MaxConns overrides pool_max_conns")
	assert.Equal(t, 7*time.Minute, pc.MaxConnLifetime, "pool_max_conn_lifetime is honoured")
	assert.Equal(t, time.Minute, pc.MaxConnIdleTime)
	assert.Equal(t, 2*time.Second, pc.ConnConfig.ConnectTimeout, "the shorter connect_timeout wins")
	assert.Equal(t, "wt_x", pc.ConnConfig.RuntimeParams["search_path"])
	assert.Equal(t, ApplicationName, pc.ConnConfig.RuntimeParams["application_name"])
	assert.NotContains(t, pc.ConnConfig.RuntimeParams, "pool_max_conns", "pool settings are not sent to the server")
	ping := func(pc *pgxpool.Config, idle time.Duration) bool {
		return pc.ShouldPing(context.Background(), pgxpool.ShouldPingParams{IdleDuration: idle})
	}
	assert.False(t, ping(pc, 5*time.Millisecond))
	assert.True(t, ping(pc, 20*time.Millisecond))

	pc = mustPoolConfig(t, "postgres://u@h/db?connect_timeout=60&application_name=mine", Config{IdlePing: -1})
	assert.Equal(t, DefaultConnectTimeout, pc.ConnConfig.ConnectTimeout, "Config.ConnectTimeout bounds a longer connect_timeout")
	assert.Equal(t, "mine", pc.ConnConfig.RuntimeParams["application_name"])
	assert.NotContains(t, pc.ConnConfig.RuntimeParams, "search_path")
	assert.Equal(t, DefaultMaxIdle, pc.MaxConnIdleTime)
	assert.False(t, ping(pc, time.Hour), "negative IdlePing never pings")

	pc = mustPoolConfig(t, "postgres://u@h/db", Config{})
	assert.Equal(t, DefaultConnectTimeout, pc.ConnConfig.ConnectTimeout)
	assert.False(t, ping(pc, DefaultIdlePing))
	assert.True(t, ping(pc, DefaultIdlePing+time.Millisecond))

	cfg, err := Config{}.withDefaults()
	require.NoError(t, err)
	_, err = poolConfig("postgres://u:secret@h/db?pool_max_conns=0", cfg, newMetrics())
	assert.ErrorContains(t, err, "pgstore: bad connection string")
	assert.NotContains(t, err.Error(), "secret")
}

// A refused connection is a clear error and counted; after Close, Acquire
// fails with ErrClosed. No server needed.
func TestUnreachableServerCountsConnectErrors(t *testing.T) {
	s, err := newStore(context.Background(), "postgres://nobody@127.0.0.1:1/x?sslmode=disable", Config{})
	require.NoError(t, err)
	_, err = s.Acquire(context.Background())
	require.Error(t, err)
	assert.ErrorContains(t, err, "pgstore: connect to 127.0.0.1:1: ")
	var ce *pgconn.ConnectError
	assert.ErrorAs(t, err, &ce)
	snap := s.Metrics().Snapshot()
	assert.Equal(t, int64(1), snap[MetricConnectErrors])
	assert.Zero(t, snap[MetricConnects])
	assert.Zero(t, snap[MetricOpenConnections])
	assert.Zero(t, snap[MetricCheckouts])
	s.Close()
	_, err = s.Acquire(context.Background())
	assert.ErrorIs(t, err, ErrClosed)
}

// pgxpool keeps connecting after the Acquire that started the connect
// gives up; ConnectTimeout bounds that connect and its failure is still
// counted. The "server" accepts TCP connections and never answers.
func TestAbandonedConnectIsBoundedAndCounted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-accepted
		for _, c := range held {
			_ = c.Close()
		}
	})

	s, err := newStore(context.Background(), "postgres://nobody@"+l.Addr().String()+"/x?sslmode=disable",
		Config{ConnectTimeout: 1500 * time.Millisecond})
	require.NoError(t, err)
	defer s.Close()
	// The context ends 30x sooner than the connect: Acquire must return
	// with the context, and the margin (1 s of slack) is wide enough for a
	// loaded CI machine under the race detector.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Acquire(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second, "Acquire gives up with its context, not at ConnectTimeout")
	assert.Eventually(t, func() bool { return s.Metrics().Snapshot()[MetricConnectErrors] == 1 },
		5*time.Second, 10*time.Millisecond, "the abandoned connect ends at ConnectTimeout (default %v) and is counted", DefaultConnectTimeout)
	assert.Zero(t, s.Metrics().Snapshot()[MetricOpenConnections])
}

// A connection released inside a transaction is closed, not handed to the
// next caller; a clean one is reused (the warm one, with its prepared
// statements).
func TestReleaseReusesOnlyIdleConnections(t *testing.T) {
	u := testenv.PostgresURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, u, Config{MaxConns: 1})
	require.NoError(t, err)
	defer s.Close()
	pid := func() (uint32, *conn) {
		ac, err := s.Acquire(ctx)
		require.NoError(t, err)
		c := ac.(*conn)
		return c.c.Conn().PgConn().PID(), c
	}

	first, c := pid()
	c.Release()
	again, c := pid()
	assert.Equal(t, first, again, "a clean connection is reused")
	_, err = c.c.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	c.Release()
	fresh, c := pid()
	assert.NotEqual(t, first, fresh, "a connection left in a transaction must not be reused")
	c.Release()
	snap := s.Metrics().Snapshot()
	assert.Equal(t, int64(1), snap[MetricDiscards])
	assert.Equal(t, int64(2), snap[MetricConnects])
	assert.Equal(t, int64(1), snap[MetricOpenConnections])
}
