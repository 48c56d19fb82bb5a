package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore/pgtest"
)

// openNamed opens a store whose connections carry a unique
// application_name, so the test can find (and kill) exactly its own
// backends in pg_stat_activity.
func openNamed(t *testing.T, f *pgtest.Fixture, cfg pgstore.Config) (*pgstore.Store, string) {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	app := "wt_pool_" + hex.EncodeToString(b[:])
	cfg.Schema = f.Schema
	s, err := pgstore.Open(ctxT(t), f.URL+"&application_name="+app, cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, app
}

// backends counts the server sessions of app.
func backends(t *testing.T, f *pgtest.Fixture, app string) int {
	t.Helper()
	var n int
	require.NoError(t, f.Conn().QueryRow(ctxT(t), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n))
	return n
}

func eventuallyBackends(t *testing.T, f *pgtest.Fixture, app string, want int) {
	t.Helper()
	assert.Eventually(t, func() bool { return backends(t, f, app) == want }, 5*time.Second, 20*time.Millisecond,
		"sessions of %s: want %d, have %d", app, want, backends(t, f, app))
}

// MS-2 counts freshness from the checkout: CheckedOutAt must be taken
// inside Acquire, never later (at the statement or its end).
func TestCheckedOutAtIsTheCheckout(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	s := f.Open(pgstore.Config{MaxConns: 1})
	for range 3 { // dial, then reuse
		before := time.Now()
		c := acquire(t, ctx, s)
		after := time.Now()
		assert.False(t, c.CheckedOutAt().Before(before))
		assert.False(t, c.CheckedOutAt().After(after))
		_, err := c.ListedOpenChannels(ctx, authz.NewID('k', 1))
		require.NoError(t, err)
		c.Release()
	}
}

// A statement reads the database as of its own start, after the checkout:
// a write committed between checkout and statement is visible.
func TestStatementsSeeWritesAfterCheckout(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	k, u := authz.NewID('k', 1), authz.NewID('u', 1)
	f.AddChannels(authztest.Channel{ID: ch(1), Community: k})
	s := f.Open(pgstore.Config{})
	c := acquire(t, ctx, s)
	defer c.Release()
	f.SetMember(u, ch(1), true)
	ok, err := c.IsActiveMember(ctx, k, u, ch(1))
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestAcquireWaitsForAFreeConnection(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	s := f.Open(pgstore.Config{MaxConns: 2})
	a, b := acquire(t, ctx, s), acquire(t, ctx, s)

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err := s.Acquire(short)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a third checkout must wait, and give up with its context")

	got := make(chan authz.Conn)
	go func() {
		c, err := s.Acquire(ctx)
		assert.NoError(t, err)
		got <- c
	}()
	select {
	case <-got:
		t.Fatal("Acquire returned while both connections were checked out")
	case <-time.After(50 * time.Millisecond):
	}
	released := time.Now()
	a.Release()
	c := <-got
	assert.False(t, c.CheckedOutAt().Before(released), "the checkout instant is when the waiter got the connection")
	c.Release()
	b.Release()
	assert.Equal(t, 2, s.IdleConns())
	snap := s.Metrics().Snapshot()
	assert.Equal(t, int64(4), snap[pgstore.MetricCheckouts]) // a, b, the waiter, and Open's ping
	assert.Equal(t, int64(2), snap[pgstore.MetricConnects])
	assert.Positive(t, snap[pgstore.MetricConnectMicros], "opening a connection to a server takes time")
	assert.Equal(t, int64(2), snap[pgstore.MetricOpenConnections])
	assert.Positive(t, snap[pgstore.MetricAcquireWaitMicros])
}

// A statement abandoned by its context leaves the connection busy; the
// pool must close it, not hand it to the next caller (MS-7: a cancelled
// request releases everything it held).
func TestCancelledStatementDiscardsConnection(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	k, u := authz.NewID('k', 1), authz.NewID('u', 1)
	f.AddChannels(authztest.Channel{ID: ch(1), Community: k})
	s, app := openNamed(t, f, pgstore.Config{MaxConns: 1})

	// Hold a lock that blocks the membership read.
	tx, err := f.Conn().Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "LOCK TABLE channel_members IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	c := acquire(t, ctx, s)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = c.MemberChannels(short, k, u)
	cancel()
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	c.Release()
	require.NoError(t, tx.Rollback(ctx))

	// The next caller gets a fresh, working connection.
	c = acquire(t, ctx, s)
	_, err = c.MemberChannels(ctx, k, u)
	require.NoError(t, err)
	c.Release()
	snap := s.Metrics().Snapshot()
	assert.Equal(t, int64(1), snap[pgstore.MetricDiscards])
	assert.Equal(t, int64(2), snap[pgstore.MetricConnects])
	assert.Equal(t, int64(1), snap[`pgstore_statement_errors_total{statement="member_channels"}`])
	eventuallyBackends(t, f, app, 1)
}

// A connection the server killed while idle is replaced: with the health
// ping, before the caller sees it; without, after one failed statement.
func TestKilledConnectionIsReplaced(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	k := authz.NewID('k', 1)
	kill := func(app string) {
		t.Helper()
		var n int
		require.NoError(t, f.Conn().QueryRow(ctx,
			"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n))
		require.Equal(t, 1, n)
		eventuallyBackends(t, f, app, 0)
	}

	t.Run("pinged", func(t *testing.T) {
		s, app := openNamed(t, f, pgstore.Config{MaxConns: 1, IdlePing: time.Nanosecond})
		kill(app)
		c := acquire(t, ctx, s)
		_, err := c.ListedOpenChannels(ctx, k)
		assert.NoError(t, err, "the dead idle connection must be replaced at checkout")
		c.Release()
		assert.Equal(t, int64(1), s.Metrics().Snapshot()[pgstore.MetricDiscards])
		assert.Positive(t, s.Metrics().Snapshot()[pgstore.MetricIdlePings], "every checkout of an idle connection pings it")
	})
	t.Run("not pinged", func(t *testing.T) {
		s, app := openNamed(t, f, pgstore.Config{MaxConns: 1, IdlePing: -1})
		kill(app)
		c := acquire(t, ctx, s)
		_, err := c.ListedOpenChannels(ctx, k)
		assert.Error(t, err, "without a ping the first statement meets the dead connection")
		c.Release()
		c = acquire(t, ctx, s)
		_, err = c.ListedOpenChannels(ctx, k)
		assert.NoError(t, err, "and the pool replaces it after that")
		c.Release()
		assert.Zero(t, s.Metrics().Snapshot()[pgstore.MetricIdlePings])
	})
}

func TestReleaseAndClose(t *testing.T) {
	ctx := ctxT(t)
	f := pgtest.New(t)
	k := authz.NewID('k', 1)
	s, app := openNamed(t, f, pgstore.Config{MaxConns: 3})
	a, b, c := acquire(t, ctx, s), acquire(t, ctx, s), acquire(t, ctx, s)
	eventuallyBackends(t, f, app, 3)

	// A statement on a released connection is an error; a second Release
	// is a no-op that must not free a second slot.
	a.Release()
	_, err := a.ListedOpenChannels(ctx, k)
	assert.ErrorContains(t, err, "released connection")
	a.Release()
	a2 := acquire(t, ctx, s)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = s.Acquire(short)
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "double Release freed a slot it did not own")
	a2.Release()
	b.Release()

	// Close: idle connections go now, the checked-out one when released.
	waiterErr := make(chan error)
	s2, _ := openNamed(t, f, pgstore.Config{MaxConns: 1})
	held := acquire(t, ctx, s2)
	go func() { _, err := s2.Acquire(ctx); waiterErr <- err }()
	s2.Close()
	assert.ErrorIs(t, <-waiterErr, pgstore.ErrClosed, "a waiting Acquire fails when the store closes")
	held.Release()

	s.Close()
	s.Close() // idempotent
	_, err = s.Acquire(ctx)
	assert.ErrorIs(t, err, pgstore.ErrClosed)
	eventuallyBackends(t, f, app, 1) // c is still checked out
	_, err = c.ListedOpenChannels(ctx, k)
	assert.NoError(t, err, "a connection checked out before Close works until released")
	c.Release()
	eventuallyBackends(t, f, app, 0)
	assert.Equal(t, int64(0), s.Metrics().Snapshot()[pgstore.MetricOpenConnections])
}
