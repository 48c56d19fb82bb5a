package membership_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

var errReset = errors.New("connection reset by peer")

// failFirst makes the first n statements of kind stmt fail.
func failFirst(db *authztest.DB, stmt string, n int) {
	db.Err = func(s string) error {
		if s == stmt && n > 0 {
			n--
			return errReset
		}
		return nil
	}
}

// MS-7: a failed membership read is returned to the caller and decides
// nothing: the next check reads again and answers from the database, for a
// member channel (an "empty snapshot" would deny it) and a non-member one.
func TestLoadErrorPropagatesAndIsNotCached(t *testing.T) {
	var w *world
	var failed, member, other answer
	var info membership.EntryInfo
	simRun(t, 1, func(s *sim.Sim) {
		w = newWorld(t, s, 2, func(i int) bool { return i == 1 }, membership.Config{}, nil)
		failFirst(w.db, authztest.StmtActiveMemberships, 1)
		ok, err := w.c.IsMember(bg, community, user, ch(1))
		failed = answer{ok, err, s.Elapsed()}
		info, _ = w.c.Inspect(community, user)
		ok, err = w.c.IsMember(bg, community, user, ch(1))
		member = answer{ok, err, s.Elapsed()}
		ok, err = w.c.IsMember(bg, community, user, ch(2))
		other = answer{ok, err, s.Elapsed()}
	})
	assert.ErrorIs(t, failed.err, errReset)
	assert.False(t, failed.ok)
	assert.Equal(t, membership.Loading, info.Kind, "after a failure the entry holds no decision")
	require.NoError(t, member.err)
	assert.True(t, member.ok, "the failure was not cached as an empty list")
	require.NoError(t, other.err)
	assert.False(t, other.ok)
	assert.Equal(t, int64(2), w.loads(), "the next check read again")
	assert.Equal(t, int64(2), w.misses())
	assert.Equal(t, int64(1), w.hits())
}

// MS-7: a failed load with waiters: they are not stuck and not failed; one
// of them loads again and the rest hit.
func TestLoadErrorWithWaitersOneRetries(t *testing.T) {
	for _, seed := range seeds(20) {
		var w *world
		answers := make([]answer, 5)
		simRun(t, seed, func(s *sim.Sim) {
			w = newWorld(t, s, 5, func(i int) bool { return i != 3 }, membership.Config{}, nil)
			latency(w.db, authztest.StmtActiveMemberships, 100*time.Millisecond)
			failFirst(w.db, authztest.StmtActiveMemberships, 1)
			wg := s.NewWaitGroup("checks")
			wg.Add(len(answers))
			for i := range answers {
				s.Go("check", func() {
					defer wg.Done()
					ok, err := w.c.IsMember(bg, community, user, ch(i+1))
					answers[i] = answer{ok, err, s.Elapsed()}
				})
			}
			_ = wg.Wait(bg)
		})
		failures := 0
		for i, a := range answers {
			if a.err != nil {
				assert.ErrorIs(t, a.err, errReset)
				failures++
				continue
			}
			assert.Equal(t, i+1 != 3, a.ok, "seed %#x channel %d", seed, i+1)
			assert.LessOrEqual(t, a.returned, 200*time.Millisecond, "seed %#x: no waiter is stuck", seed)
		}
		assert.Equal(t, 1, failures, "seed %#x: only the failed loader's request fails", seed)
		assert.Equal(t, int64(2), w.loads(), "seed %#x", seed)
		assert.Zero(t, w.fallbacks(membership.ReasonWaitTimeout), "seed %#x", seed)
	}
}

// MS-7: cancelling the loader's request releases the user's lock. A waiter
// queued behind it takes over at once (no wait_timeout fallback), and a
// later request with no one ahead of it loads immediately.
func TestCancelledLoadReleasesTheUserLock(t *testing.T) {
	for _, seed := range seeds(20) {
		var w *world
		var loader, waiter, later, hit answer
		simRun(t, seed, func(s *sim.Sim) {
			w = newWorld(t, s, 2, func(i int) bool { return i == 1 }, membership.Config{}, nil)
			latency(w.db, authztest.StmtActiveMemberships, time.Second)
			wg := s.NewWaitGroup("checks")
			wg.Add(2)
			s.Go("loader", func() {
				defer wg.Done()
				ctx, cancel := s.WithTimeout(bg, 100*time.Millisecond)
				defer cancel()
				ok, err := w.c.IsMember(ctx, community, user, ch(1))
				loader = answer{ok, err, s.Elapsed()}
			})
			s.Go("waiter", func() {
				defer wg.Done()
				_ = s.Sleep(bg, 50*time.Millisecond)
				ok, err := w.c.IsMember(bg, community, user, ch(1))
				waiter = answer{ok, err, s.Elapsed()}
			})
			_ = wg.Wait(bg)
			ok, err := w.c.IsMember(bg, community, user, ch(2))
			hit = answer{ok, err, s.Elapsed()}

			// Again with no waiter: the cancelled loader leaves the entry
			// to the next request.
			w.c.Invalidate(w.membershipMsg(1))
			ctx, cancel := s.WithCancel(bg)
			s.Go("cancel", func() { _ = s.Sleep(bg, 10*time.Millisecond); cancel() })
			_, _ = w.c.IsMember(ctx, community, user, ch(1))
			start := s.Elapsed()
			ok, err = w.c.IsMember(bg, community, user, ch(1))
			later = answer{ok, err, s.Elapsed() - start}
		})
		assert.ErrorIs(t, loader.err, context.DeadlineExceeded, "seed %#x", seed)
		assert.Equal(t, 100*time.Millisecond, loader.returned)
		require.NoError(t, waiter.err)
		assert.True(t, waiter.ok)
		assert.Equal(t, 1100*time.Millisecond, waiter.returned, "seed %#x: the waiter loaded as soon as the lock was released", seed)
		require.NoError(t, hit.err)
		assert.False(t, hit.ok)
		require.NoError(t, later.err)
		assert.True(t, later.ok)
		assert.Equal(t, time.Second, later.returned, "seed %#x: the next request loaded at once", seed)
		assert.Zero(t, w.fallbacks(membership.ReasonWaitTimeout), "seed %#x: nobody waited out LockWait", seed)
		assert.Equal(t, int64(1), w.hits())
		assert.Equal(t, int64(4), w.misses())
	}
}

// MS-6: a check that waits LockWait for another request's slow load gives
// up and asks the database: the right answer for a member and a non-member
// channel, counted as wait_timeout, returned at LockWait plus the point
// check. A check whose own context ends while waiting returns the
// context's error and is not a fallback.
func TestLockWaitTimeoutIsAnAuthoritativePointCheck(t *testing.T) {
	for _, seed := range seeds(20) {
		var w *world
		var slow, member, other, impatient answer
		simRun(t, seed, func(s *sim.Sim) {
			w = newWorld(t, s, 2, func(i int) bool { return i == 1 }, membership.Config{LockWait: 2 * time.Second}, nil)
			w.db.Latency = func(stmt string) time.Duration {
				if stmt == authztest.StmtActiveMemberships {
					return 5 * time.Second
				}
				return 10 * time.Millisecond
			}
			wg := s.NewWaitGroup("checks")
			wg.Add(4)
			run := func(name string, delay time.Duration, ctx context.Context, channel int, out *answer) {
				s.Go(name, func() {
					defer wg.Done()
					_ = s.Sleep(bg, delay)
					ok, err := w.c.IsMember(ctx, community, user, ch(channel))
					*out = answer{ok, err, s.Elapsed()}
				})
			}
			run("slow", 0, bg, 2, &slow)
			run("member", 10*time.Millisecond, bg, 1, &member)
			run("other", 20*time.Millisecond, bg, 2, &other)
			ctx, cancel := s.WithTimeout(bg, 500*time.Millisecond)
			defer cancel()
			run("impatient", 30*time.Millisecond, ctx, 1, &impatient)
			_ = wg.Wait(bg)
		})
		require.NoError(t, slow.err)
		assert.False(t, slow.ok)
		assert.Equal(t, 5*time.Second, slow.returned)
		require.NoError(t, member.err)
		assert.True(t, member.ok, "seed %#x: a timed-out wait must not deny a member", seed)
		assert.Equal(t, 2010*time.Millisecond+10*time.Millisecond, member.returned)
		require.NoError(t, other.err)
		assert.False(t, other.ok, "seed %#x: a timed-out wait must not grant a non-member", seed)
		assert.ErrorIs(t, impatient.err, context.DeadlineExceeded)
		assert.Equal(t, 500*time.Millisecond, impatient.returned)
		assert.Equal(t, int64(2), w.fallbacks(membership.ReasonWaitTimeout))
		assert.Equal(t, int64(2), w.points())
		assert.Equal(t, int64(1), w.loads())
	}
}

// MS-7 and MS-4: a point-check error propagates too.
func TestPointCheckErrorPropagates(t *testing.T) {
	var w *world
	var first, second answer
	simRun(t, 1, func(s *sim.Sim) {
		w = newWorld(t, s, 3, func(int) bool { return true }, membership.Config{MaxSnapshotIDs: 2}, nil)
		failFirst(w.db, authztest.StmtIsActiveMember, 1)
		ok, err := w.c.IsMember(bg, community, user, ch(1))
		first = answer{ok, err, 0}
		ok, err = w.c.IsMember(bg, community, user, ch(1))
		second = answer{ok, err, 0}
	})
	assert.ErrorIs(t, first.err, errReset)
	require.NoError(t, second.err)
	assert.True(t, second.ok)
	assert.Equal(t, int64(1), w.loads(), "the marker was kept: the list read itself succeeded")
	assert.Equal(t, int64(2), w.fallbacks(membership.ReasonOversize))
}

// A request whose context has already ended does nothing.
func TestEndedContextDoesNothing(t *testing.T) {
	var w *world
	var got answer
	var usage membership.Usage
	simRun(t, 1, func(s *sim.Sim) {
		w = newWorld(t, s, 1, func(int) bool { return true }, membership.Config{}, nil)
		ctx, cancel := s.WithCancel(bg)
		cancel()
		ok, err := w.c.IsMember(ctx, community, user, ch(1))
		got = answer{ok, err, 0}
		usage = w.c.Usage()
	})
	assert.ErrorIs(t, got.err, context.Canceled)
	assert.Zero(t, w.db.Stats().Checkouts)
	assert.Zero(t, usage.Entries)
}
