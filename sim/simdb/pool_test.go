package simdb_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

type checkout struct {
	who      string
	conn     int
	asked    time.Duration
	gotAt    time.Duration
	outAt    time.Duration // CheckedOutAt
	released time.Duration
}

// TestPoolQueuesFIFOAndHandsOverAtRelease: a pool of N; N holders take
// every connection at once, then N+2 callers arrive one by one. Each waits
// until a release, gets the connection at exactly that instant
// (CheckedOutAt = the release instant), in arrival order; the counters of
// checkouts and queueing time are exact.
func TestPoolQueuesFIFOAndHandsOverAtRelease(t *testing.T) {
	const n = 3
	for seed := uint64(1); seed <= 30; seed++ {
		var log []checkout
		var st simdb.Stats
		var inUseAfter, waitingAfter int
		run(t, seed, func(s *sim.Sim) {
			db := newDB(s, simdb.Config{PoolSize: n})
			wg := s.NewWaitGroup("all")
			take := func(who string, arrive, hold time.Duration) {
				wg.Add(1)
				s.Go(who, func() {
					defer wg.Done()
					_ = s.Sleep(bg, arrive)
					asked := s.Elapsed()
					c, err := db.Acquire(bg)
					if err != nil {
						s.Failf("%s: %v", who, err)
					}
					rec := checkout{who: who, conn: c.ID(), asked: asked, gotAt: s.Elapsed(), outAt: at(c.CheckedOutAt())}
					_ = s.Sleep(bg, hold)
					rec.released = s.Elapsed()
					c.Release()
					log = append(log, rec)
				})
			}
			for i := range n {
				take(fmt.Sprint("holder", i), 0, time.Duration(i+1)*time.Second) // release at 1s, 2s, 3s
			}
			for i := range n + 2 {
				take(fmt.Sprint("waiter", i), ms(10*(i+1)), 500*time.Millisecond)
			}
			_ = wg.Wait(bg)
			st = db.Stats()
			inUseAfter, waitingAfter = db.InUse(), db.Waiting()
		})
		got := map[string]checkout{}
		for _, r := range log {
			got[r.who] = r
		}
		// Releases: holders at 1s, 2s, 3s; waiter0 (got 1s) at 1.5s;
		// waiter1 (2s) at 2.5s; waiter2 (2.5s... FIFO) and so on.
		want := map[string]time.Duration{
			"waiter0": 1 * time.Second,         // holder0's release
			"waiter1": 1500 * time.Millisecond, // waiter0's release
			"waiter2": 2 * time.Second,         // holder1's release
			"waiter3": 2 * time.Second,         // waiter1's release (2.0s)
			"waiter4": 2500 * time.Millisecond, // waiter2's release
		}
		var waitTotal, waitMax time.Duration
		for who, when := range want { //windtunnel:unordered independent checks
			r := got[who]
			assert.Equal(t, when, r.gotAt, "seed %d: %s got its connection at the wrong instant", seed, who)
			assert.Equal(t, r.gotAt, r.outAt, "seed %d: %s: CheckedOutAt is the release instant", seed, who)
			w := r.gotAt - r.asked
			waitTotal += w
			waitMax = max(waitMax, w)
		}
		for i := range n {
			r := got[fmt.Sprint("holder", i)]
			assert.Equal(t, time.Duration(0), r.outAt, "holders get a free connection at once")
		}
		assert.Equal(t, int64(2*n+2), st.Checkouts)
		assert.Equal(t, int64(n+2), st.CheckoutWaits)
		assert.Equal(t, waitTotal, st.WaitTotal)
		assert.Equal(t, waitMax, st.WaitMax)
		assert.Equal(t, int64(n), st.InUseMax)
		assert.Zero(t, inUseAfter)
		assert.Zero(t, waitingAfter)
	}
}

// TestAcquireGivesUpAtItsDeadline: with the only connection held for 10s,
// a caller with a 300ms timeout gets an error wrapping DeadlineExceeded at
// exactly +300ms, leaves the queue, and the connection still goes to the
// next caller when it is released.
func TestAcquireGivesUpAtItsDeadline(t *testing.T) {
	var (
		errAt, nextAt time.Duration
		acqErr        error
		st            simdb.Stats
	)
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{PoolSize: 1})
		held := s.NewEvent("held")
		s.Go("holder", func() {
			c, _ := db.Acquire(bg)
			held.Set()
			_ = s.Sleep(bg, 10*time.Second)
			c.Release()
		})
		_ = held.Wait(bg)
		ctx, cancel := s.WithTimeout(bg, 300*time.Millisecond)
		defer cancel()
		_, acqErr = db.Acquire(ctx)
		errAt = s.Elapsed()
		c, err := db.Acquire(bg)
		if err != nil {
			s.Failf("%v", err)
		}
		nextAt = at(c.CheckedOutAt())
		c.Release()
		st = db.Stats()
	})
	require.Error(t, acqErr)
	assert.True(t, errors.Is(acqErr, context.DeadlineExceeded), "%v", acqErr)
	assert.Equal(t, 300*time.Millisecond, errAt)
	assert.Equal(t, 10*time.Second, nextAt)
	assert.Equal(t, int64(1), st.AcquireCanceled)
	assert.Equal(t, int64(2), st.Checkouts)
	assert.Equal(t, 10*time.Second-300*time.Millisecond, st.WaitMax)
}

// TestGrantRacingDeadlineLeaksNothing: the holder releases at exactly the
// instant the waiter's deadline fires. Whichever wins on a seed, the waiter
// either has the connection or an error, never both, and the connection is
// never lost: afterwards a caller gets it at once. Both outcomes occur.
func TestGrantRacingDeadlineLeaksNothing(t *testing.T) {
	outcomes := map[bool]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		var got bool
		var inUse, waiting int
		var late time.Duration
		run(t, seed, func(s *sim.Sim) {
			db := newDB(s, simdb.Config{PoolSize: 1})
			c0, _ := db.Acquire(bg)
			s.Go("releaser", func() {
				_ = s.Sleep(bg, time.Second)
				c0.Release()
			})
			ctx, cancel := s.WithTimeout(bg, time.Second)
			defer cancel()
			c, err := db.Acquire(ctx)
			if (c == nil) == (err == nil) {
				s.Failf("Acquire returned conn %v and error %v", c, err)
			}
			got = c != nil
			if c != nil {
				c.Release()
			}
			before := s.Elapsed()
			c2, err := db.Acquire(bg)
			if err != nil {
				s.Failf("%v", err)
			}
			late = s.Elapsed() - before
			c2.Release()
			inUse, waiting = db.InUse(), db.Waiting()
		})
		outcomes[got]++
		require.Zero(t, late, "seed %d: the connection was lost", seed)
		require.Zero(t, inUse)
		require.Zero(t, waiting)
	}
	t.Logf("granted %d, gave up %d", outcomes[true], outcomes[false])
	assert.Positive(t, outcomes[true])
	assert.Positive(t, outcomes[false])
}

// TestPoolQueueIsBounded: past MaxWaiters, Acquire fails at once with
// ErrPoolQueueFull and counts it.
func TestPoolQueueIsBounded(t *testing.T) {
	var errs []error
	var st simdb.Stats
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{PoolSize: 1, MaxWaiters: 2})
		c, _ := db.Acquire(bg)
		ctx, cancel := s.WithCancel(bg)
		for i := range 4 {
			s.Go(fmt.Sprint("w", i), func() {
				_, err := db.Acquire(ctx)
				errs = append(errs, err)
			})
		}
		_ = s.Sleep(bg, time.Second)
		cancel()
		_ = s.Sleep(bg, time.Second)
		c.Release()
		st = db.Stats()
	})
	require.Len(t, errs, 4)
	full := 0
	for _, err := range errs {
		if errors.Is(err, simdb.ErrPoolQueueFull) {
			full++
		} else {
			assert.ErrorIs(t, err, context.Canceled)
		}
	}
	assert.Equal(t, 2, full)
	assert.Equal(t, int64(2), st.QueueFull)
	assert.Equal(t, int64(2), st.AcquireCanceled)
}

// TestConnectionMisuseFailsTheRun: double release, a statement after
// release, and two statements at once on one connection end the run.
func TestConnectionMisuseFailsTheRun(t *testing.T) {
	msg := failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{})
		c, _ := db.Acquire(bg)
		c.Release()
		c.Release()
	})
	assert.Contains(t, msg, "released twice")

	msg = failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Statements: []string{"read"}})
		c, _ := db.Acquire(bg)
		c.Release()
		_, _ = read(bg, s, c)
	})
	assert.Contains(t, msg, "after Release")

	msg = failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Latency: fixed(time.Second), Statements: []string{"read"}})
		c, _ := db.Acquire(bg)
		s.Go("other", func() { _, _ = read(bg, s, c) })
		_, _ = read(bg, s, c)
	})
	assert.Contains(t, msg, "while another statement runs")

	msg = failure(t, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{Latency: fixed(time.Second), Statements: []string{"read"}})
		c, _ := db.Acquire(bg)
		s.Go("other", func() { _, _ = read(bg, s, c) })
		_ = s.Sleep(bg, ms(10))
		c.Release()
	})
	assert.Contains(t, msg, "released while a statement runs")
}
