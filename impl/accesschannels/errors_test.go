package accesschannels_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
)

var errBoom = errors.New("connection reset by peer")

// failFirst makes the named statement fail the first n times.
func failFirst(stmt string, n int) func(string) error {
	return func(s string) error {
		if s == stmt && n > 0 {
			n--
			return errBoom
		}
		return nil
	}
}

// A failed read of either half caches nothing: the error reaches the caller
// and the next lookup reads the database again and succeeds.
func TestFailedReadsAreNotCached(t *testing.T) {
	for _, stmt := range []string{authztest.StmtMemberChannels, authztest.StmtListedOpenChannels} {
		t.Run(stmt, func(t *testing.T) {
			var firstErr error
			var second []authz.ID
			var rd reads
			runSim(t, 1, func(s *sim.Sim) {
				db := authztest.New(s)
				db.Err = failFirst(stmt, 1)
				mustAdd(s, db, openCh(ch(1), k1), privateCh(ch(2), k1))
				mustMember(s, db, user(1), ch(2))
				c := mustCache(s, db, accesschannels.Config{})
				_, firstErr = c.Accessible(bg, k1, user(1))
				second = accessible(s, c, k1, user(1))
				rd = dbReads(db)
			})
			assert.ErrorIs(t, firstErr, errBoom)
			assert.Equal(t, []authz.ID{ch(1), ch(2)}, second)
			if stmt == authztest.StmtMemberChannels {
				assert.Equal(t, reads{member: 2, open: 1}, rd)
			} else {
				assert.Equal(t, reads{member: 1, open: 2}, rd, "member half was cached, open half re-read")
			}
		})
	}
}

// lateErrPool wraps a pool so that open-set statements take d before they
// run (authztest fails a statement at its start, before its latency), so a
// failing read stays in flight long enough for others to join it.
type lateErrPool struct {
	authz.Pool
	s *sim.Sim
	d time.Duration
}

type lateErrConn struct {
	authz.Conn
	p *lateErrPool
}

func (p *lateErrPool) Acquire(ctx context.Context) (authz.Conn, error) {
	c, err := p.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return lateErrConn{c, p}, nil
}

func (c lateErrConn) ListedOpenChannels(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	if err := c.p.s.Sleep(ctx, c.p.d); err != nil {
		return nil, err
	}
	return c.Conn.ListedOpenChannels(ctx, community)
}

// K concurrent cold lookups share one failing open-set read: all get the
// error, and the read is not cached.
func TestWaitersOfAFailedReadGetItsError(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		var errs []error
		var rd reads
		runSim(t, seed, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Err = failFirst(authztest.StmtListedOpenChannels, 1)
			mustAdd(s, db, openCh(ch(1), k1))
			c := mustCache(s, &lateErrPool{db, s, 100 * time.Millisecond}, accesschannels.Config{})
			var fs []func()
			for i := range 5 {
				fs = append(fs, func() {
					_, err := c.Accessible(bg, k1, user(uint64(i+1)))
					errs = append(errs, err)
				})
			}
			spawnAll(s, "reader", fs...)
			rd = dbReads(db)
		})
		assert.Len(t, errs, 5)
		for _, err := range errs {
			assert.ErrorIs(t, err, errBoom, "seed %d", seed)
		}
		assert.Equal(t, int64(1), rd.open, "seed %d: one shared (failed) read", seed)
	}
}

// Cancellation: a lookup whose context ends while it reads returns the
// context's error and caches nothing. A lookup waiting on a read abandoned
// that way starts its own read instead of inheriting the error. A waiter
// whose own context ends stops waiting while the read completes for others.
func TestCancellation(t *testing.T) {
	t.Run("leader abandons, waiter reads again", func(t *testing.T) {
		for seed := uint64(1); seed <= 10; seed++ {
			var leaderErr, waiterErr error
			var waiterGot []authz.ID
			var rd reads
			var st accesschannels.Stats
			runSim(t, seed, func(s *sim.Sim) {
				db := authztest.New(s)
				db.Latency = latency(authztest.StmtListedOpenChannels, 800*time.Millisecond)
				mustAdd(s, db, openCh(ch(1), k1))
				c := mustCache(s, db, accesschannels.Config{})
				spawnAll(s, "reader",
					func() {
						ctx, cancel := s.WithTimeout(bg, 300*time.Millisecond)
						defer cancel()
						_, leaderErr = c.Accessible(ctx, k1, user(1))
					},
					func() {
						sleepUntil(s, 100*time.Millisecond) // joins the leader's read
						waiterGot, waiterErr = c.Accessible(bg, k1, user(2))
					})
				rd, st = dbReads(db), c.Stats()
			})
			assert.ErrorIs(t, leaderErr, context.DeadlineExceeded, "seed %d", seed)
			assert.NoError(t, waiterErr, "seed %d", seed)
			assert.Equal(t, []authz.ID{ch(1)}, waiterGot, "seed %d", seed)
			assert.Equal(t, int64(2), rd.open, "seed %d: abandoned read + the waiter's own", seed)
			assert.Equal(t, int64(2), st.OpenMissesAbsent, "seed %d: one miss per lookup, not per attempt", seed)
		}
	})
	t.Run("waiter gives up, read completes and is cached", func(t *testing.T) {
		var waiterErr, leaderErr error
		var laterGot []authz.ID
		var rd reads
		runSim(t, 1, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Latency = latency(authztest.StmtListedOpenChannels, 800*time.Millisecond)
			mustAdd(s, db, openCh(ch(1), k1))
			c := mustCache(s, db, accesschannels.Config{})
			spawnAll(s, "reader",
				func() { _, leaderErr = c.Accessible(bg, k1, user(1)) },
				func() {
					sleepUntil(s, 100*time.Millisecond)
					ctx, cancel := s.WithTimeout(bg, 100*time.Millisecond)
					defer cancel()
					_, waiterErr = c.Accessible(ctx, k1, user(2))
				})
			laterGot = accessible(s, c, k1, user(3)) // at 800 ms: a hit
			rd = dbReads(db)
		})
		assert.NoError(t, leaderErr)
		assert.ErrorIs(t, waiterErr, context.DeadlineExceeded)
		assert.Equal(t, []authz.ID{ch(1)}, laterGot)
		assert.Equal(t, int64(1), rd.open)
	})
	t.Run("ended context before the lookup", func(t *testing.T) {
		var err error
		runSim(t, 1, func(s *sim.Sim) {
			c := mustCache(s, authztest.New(s), accesschannels.Config{})
			ctx, cancel := s.WithCancel(bg)
			cancel()
			_, err = c.Accessible(ctx, k1, user(1))
		})
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// Bad input is an error, never a panic or a DB call.
func TestZeroIDsAreErrors(t *testing.T) {
	var errs []error
	var rd reads
	runSim(t, 1, func(s *sim.Sim) {
		db := authztest.New(s)
		c := mustCache(s, db, accesschannels.Config{})
		_, e1 := c.Accessible(bg, authz.ID{}, user(1))
		_, e2 := c.Accessible(bg, k1, authz.ID{})
		_, e3 := c.Granted(bg, k1, user(1), authz.ID{})
		_, e4 := c.AccessibleUncached(bg, k1, authz.ID{})
		errs = []error{e1, e2, e3, e4}
		rd = dbReads(db)
	})
	for _, err := range errs {
		assert.ErrorIs(t, err, accesschannels.ErrZeroID)
	}
	assert.Equal(t, reads{}, rd)
}
