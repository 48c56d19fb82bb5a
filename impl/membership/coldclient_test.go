package membership_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim"
)

// MS-1: a cold client in 280 channels checks each one; the cache reads the
// membership list once, on one checkout, and answers the rest from it.
func TestColdClient280ChannelsOneRead(t *testing.T) {
	var wrong int
	var w *world
	simRun(t, 1, func(s *sim.Sim) {
		w = newWorld(t, s, 300, func(i int) bool { return i <= 280 }, membership.Config{}, nil)
		latency(w.db, authztest.StmtActiveMemberships, 20*time.Millisecond)
		for i := 1; i <= 280; i++ {
			ok, err := w.c.IsMember(bg, community, user, ch(i))
			if err != nil || !ok {
				wrong++
			}
		}
	})
	assert.Zero(t, wrong)
	st := w.db.Stats()
	assert.Equal(t, int64(1), st.ByStatement[authztest.StmtActiveMemberships], "one membership read, not 280")
	assert.Equal(t, int64(1), st.Statements)
	assert.Equal(t, int64(1), st.Checkouts)
	assert.Equal(t, int64(279), w.hits())
	assert.Equal(t, int64(1), w.misses())
}

// MS-5: K concurrent cold checks of one user share one loading entry and its
// lock; after acquiring it they recheck and hit, so there is one read. Swept
// over schedules, with and without a slow query.
func TestConcurrentColdChecksShareOneRead(t *testing.T) {
	const k = 16
	for _, slow := range []time.Duration{0, 50 * time.Millisecond} {
		for i, seed := range seeds(40) {
			// Half the seeds under PCT, which reaches schedules a random
			// walk rarely does (a waiter starved until the loader is done).
			var strategy sim.Strategy
			if i%2 == 1 {
				strategy = sim.PCT(3, 400)
			}
			t.Run(fmt.Sprintf("latency=%v/seed=%#x/pct=%v", slow, seed, strategy != nil), func(t *testing.T) {
				var w *world
				answers := make([]answer, k)
				res := sim.Run(sim.Config{Seed: seed, Strategy: strategy}, func(s *sim.Sim) {
					w = newWorld(t, s, 2*k, func(i int) bool { return i%2 == 0 }, membership.Config{}, nil)
					latency(w.db, authztest.StmtActiveMemberships, slow)
					wg := s.NewWaitGroup("checks")
					wg.Add(k)
					for i := range k {
						s.Go(fmt.Sprint("check-", i), func() {
							defer wg.Done()
							ok, err := w.c.IsMember(bg, community, user, ch(i+1))
							answers[i] = answer{ok: ok, err: err, returned: s.Elapsed()}
						})
					}
					if err := wg.Wait(bg); err != nil {
						s.Failf("wait: %v", err)
					}
				})
				require.NoError(t, res.Err)
				for i, a := range answers {
					require.NoError(t, a.err)
					assert.Equal(t, (i+1)%2 == 0, a.ok, "channel %d", i+1)
				}
				assert.Equal(t, int64(1), w.loads(), "one read for %d concurrent cold checks", k)
				assert.Equal(t, int64(1), w.db.Stats().Checkouts)
				assert.Equal(t, int64(1), w.misses())
				assert.Equal(t, int64(k-1), w.hits())
				assert.Zero(t, w.fallbacks(membership.ReasonWaitTimeout))
			})
		}
	}
}

// Same seed, same binary: the same trace (the simulator's determinism
// contract holds for this package's code).
func TestSameSeedSameTrace(t *testing.T) {
	run := func() sim.Result {
		return simRun(t, 0xfeed, func(s *sim.Sim) {
			w := newWorld(t, s, 8, func(i int) bool { return i%2 == 0 }, membership.Config{LockWait: 30 * time.Millisecond}, nil)
			w.db.Latency = func(string) time.Duration { return time.Duration(s.Rand().IntN(50)) * time.Millisecond }
			wg := s.NewWaitGroup("checks")
			wg.Add(8)
			for i := 1; i <= 8; i++ {
				s.Go(fmt.Sprint("check-", i), func() {
					defer wg.Done()
					_, _ = w.c.IsMember(bg, community, user, ch(i))
					w.invalidate(i)
					_, _ = w.c.IsMember(bg, community, user, ch(i))
				})
			}
			_ = wg.Wait(bg)
		})
	}
	a, b := run(), run()
	assert.Equal(t, a.Hash, b.Hash)
	assert.Equal(t, a.Steps, b.Steps)
	assert.Positive(t, a.Steps)
}
