package membership_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

// MS-3: a load in flight while the user's membership is removed and
// invalidated answers its own request but does not publish. Its statement
// read the state before the removal, after the request began. The next check
// reads again and sees the removal. A waiter queued on the old load's lock
// and a check that arrives after the invalidation both answer from the new
// state.
func TestFenceInvalidationDuringLoadLeavesNoStaleSnapshot(t *testing.T) {
	for _, seed := range seeds(20) {
		var w *world
		var old, waiter, after, next answer
		var afterOld membership.EntryInfo
		var afterOldOK bool
		simRun(t, seed, func(s *sim.Sim) {
			w = newWorld(t, s, 3, func(i int) bool { return true }, membership.Config{}, nil)
			latency(w.db, authztest.StmtActiveMemberships, time.Second)
			wg := s.NewWaitGroup("checks")
			wg.Add(3)
			s.Go("old-load", func() {
				defer wg.Done()
				ok, err := w.c.IsMember(bg, community, user, ch(1))
				old = answer{ok, err, s.Elapsed()}
				afterOld, afterOldOK = w.c.Inspect(community, user)
			})
			s.Go("waiter", func() {
				defer wg.Done()
				_ = s.Sleep(bg, 100*time.Millisecond)
				ok, err := w.c.IsMember(bg, community, user, ch(1))
				waiter = answer{ok, err, s.Elapsed()}
			})
			s.Go("after-invalidation", func() {
				defer wg.Done()
				_ = s.Sleep(bg, 600*time.Millisecond)
				ok, err := w.c.IsMember(bg, community, user, ch(1))
				after = answer{ok, err, s.Elapsed()}
			})
			_ = s.Sleep(bg, 500*time.Millisecond)
			w.revoke(1)
			w.invalidate(1)
			_ = wg.Wait(bg)
			ok, err := w.c.IsMember(bg, community, user, ch(1))
			next = answer{ok, err, s.Elapsed()}
		})
		require.NoError(t, old.err)
		assert.True(t, old.ok, "the old load answers its own request from what it read")
		assert.Equal(t, time.Second, old.returned)
		if afterOldOK {
			assert.NotEqual(t, membership.Snapshot, afterOld.Kind, "seed %#x: the old load must not publish", seed)
			assert.Greater(t, afterOld.CheckedOutAt, sim.Epoch.Add(500*time.Millisecond), "seed %#x: only a load begun after the invalidation may be current", seed)
		}
		require.NoError(t, waiter.err)
		assert.False(t, waiter.ok, "seed %#x: the waiter must not get the fenced-out list", seed)
		require.NoError(t, after.err)
		assert.False(t, after.ok, "seed %#x", seed)
		require.NoError(t, next.err)
		assert.False(t, next.ok, "seed %#x: no stale snapshot after the old load finished", seed)
		assert.GreaterOrEqual(t, w.loads(), int64(2), "the next check re-reads")
	}
}

// MS-3, the simplest form: one request, one invalidation during its load,
// then the next check.
func TestFenceNextCheckRereads(t *testing.T) {
	var w *world
	var first, second answer
	simRun(t, 7, func(s *sim.Sim) {
		w = newWorld(t, s, 2, func(i int) bool { return i == 1 }, membership.Config{}, nil)
		latency(w.db, authztest.StmtActiveMemberships, time.Second)
		done := s.NewEvent("first")
		s.Go("first", func() {
			ok, err := w.c.IsMember(bg, community, user, ch(2))
			first = answer{ok, err, s.Elapsed()}
			done.Set()
		})
		_ = s.Sleep(bg, 300*time.Millisecond)
		w.grant(2)
		w.invalidate(2)
		_ = done.Wait(bg)
		ok, err := w.c.IsMember(bg, community, user, ch(2))
		second = answer{ok, err, s.Elapsed()}
	})
	require.NoError(t, first.err)
	assert.False(t, first.ok, "read before the grant")
	require.NoError(t, second.err)
	assert.True(t, second.ok, "the grant is visible at once: the old list was not published")
	assert.Equal(t, int64(2), w.loads())
	assert.Equal(t, int64(2), w.misses())
}
