package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

// leaky starts a receiver nobody sends to, a task that locks a mutex main
// holds, and a task that finishes late; then main returns.
func leaky(s *sim.Sim) {
	ch := rt.NewChan[int](s, "results", 0)
	mu := s.NewMutex("state")
	mu.Lock()
	s.Go("receiver", func() { ch.Recv() })
	s.Go("locker", func() { mu.Lock() })
	s.Go("late", func() { _ = s.Sleep(context.Background(), time.Second) })
}

func TestLeakCheckReportsTasksBlockedForever(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		res := sim.Run(sim.Config{Seed: seed, LeakCheck: true}, leaky)
		f := res.Failure()
		require.NotNil(t, f, "seed %d", seed)
		assert.Equal(t, sim.FailLeak, f.Kind)
		assert.Contains(t, f.Message, "2 task(s) blocked forever after main returned")
		require.Len(t, f.Blocked, 2)
		assert.Equal(t, "receiver", f.Blocked[0].Name)
		assert.Equal(t, "chan receive chan results#1", f.Blocked[0].Wait)
		assert.Contains(t, f.Blocked[0].Site, "leak_test.go:")
		assert.Equal(t, "locker", f.Blocked[1].Name)
		assert.Equal(t, "Lock mutex state#2", f.Blocked[1].Wait)
		assert.Equal(t, time.Second, res.Elapsed, "the late task was let finish")
	}
	res := sim.Run(sim.Config{Seed: 1}, leaky)
	assert.NoError(t, res.Err, "without the check, main's return ends the run")
}

// Tasks that all finish after main returns are no leak.
func TestLeakCheckPassesWhenEveryTaskEnds(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 1, LeakCheck: true}, func(s *sim.Sim) {
		ch := rt.NewChan[int](s, "handover", 0)
		s.Go("sender", func() {
			_ = s.Sleep(context.Background(), time.Millisecond)
			ch.Send(1)
		})
		s.Go("receiver", func() { ch.Recv() })
	})
	assert.NoError(t, res.Err)
}

// A task that never settles (a ticker) cuts the check off after LeakSettle;
// a task blocked on a channel then is reported as still blocked.
func TestLeakCheckCutsOffAtSettle(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 1, LeakCheck: true, LeakSettle: 10 * time.Second}, func(s *sim.Sim) {
		s.Go("ticker", func() {
			for {
				_ = s.Sleep(context.Background(), time.Second)
			}
		})
		s.Go("waiter", func() { s.NewEvent("never").Wait(context.Background()) })
	})
	f := res.Failure()
	require.NotNil(t, f)
	assert.Equal(t, sim.FailLeak, f.Kind)
	assert.Contains(t, f.Message, "still blocked 10s")
	require.Len(t, f.Blocked, 1, "the sleeping ticker is not reported")
	assert.Equal(t, "waiter", f.Blocked[0].Name)
}

// A task that spins after main returns cuts the check off after
// LeakSettleSteps steps (1,000,000 by default), and a longer bound lets it
// finish, after which the blocked task is proved leaked.
func TestLeakCheckCutsOffAtSettleSteps(t *testing.T) {
	spinner := func(n int) func(*sim.Sim) {
		return func(s *sim.Sim) {
			s.Go("spinner", func() {
				for range n {
					s.Yield()
				}
			})
			s.Go("waiter", func() { s.NewEvent("never").Wait(context.Background()) })
		}
	}
	res := sim.Run(sim.Config{Seed: 1, LeakCheck: true, LeakSettleSteps: 1000}, spinner(5000))
	require.NotNil(t, res.Failure())
	assert.Contains(t, res.Failure().Message, "still blocked 0s and 1000 steps")
	res = sim.Run(sim.Config{Seed: 1, LeakCheck: true, LeakSettleSteps: 10_000}, spinner(5000))
	require.NotNil(t, res.Failure())
	assert.Contains(t, res.Failure().Message, "1 task(s) blocked forever")
	res = sim.Run(sim.Config{Seed: 1, LeakCheck: true}, spinner(2_000_000))
	require.NotNil(t, res.Failure())
	assert.Contains(t, res.Failure().Message, "and 1000000 steps")
	res = sim.Run(sim.Config{LeakSettleSteps: -1}, spinner(1))
	assert.ErrorContains(t, res.Err, "LeakSettleSteps must not be negative")
}

// A task marked as a ticker (TickerOf: it only sleeps and sends on its
// channel without blocking, as rtgo's time.Ticker does) can wake nobody
// but a receiver of that channel: with no such receiver, the tasks blocked
// elsewhere are blocked forever although it still ticks, and it is not
// reported itself.
func TestLeakCheckSettlesBesideTickers(t *testing.T) {
	ticking := func(s *sim.Sim, recvTick bool) {
		tick := rt.NewChan[int](s, "tick", 1)
		s.Go("ticker", func() {
			s.TickerOf(tick.Any())
			for s.Sleep(context.Background(), time.Millisecond) == nil {
				rt.TrySelect(s, tick.SendCase(1))
			}
		})
		s.Go("waiter", func() { s.NewEvent("never").Wait(context.Background()) })
		if recvTick {
			s.Go("reader", func() {
				for {
					tick.Recv()
				}
			})
		}
	}
	res := sim.Run(sim.Config{Seed: 1, LeakCheck: true, LeakSettle: 10 * time.Second}, func(s *sim.Sim) { ticking(s, false) })
	f := res.Failure()
	require.NotNil(t, f)
	assert.Contains(t, f.Message, "1 task(s) blocked forever")
	require.Len(t, f.Blocked, 1, "the ticker is not reported")
	assert.Equal(t, "waiter", f.Blocked[0].Name)
	assert.Less(t, res.Elapsed, time.Second, "settled without waiting for the cut-off")

	// A task that waits on the ticker's channel can still be woken: the
	// run goes on to the cut-off, and the waiter is only possibly leaked.
	res = sim.Run(sim.Config{Seed: 1, LeakCheck: true, LeakSettle: 10 * time.Second}, func(s *sim.Sim) { ticking(s, true) })
	f = res.Failure()
	require.NotNil(t, f)
	assert.Contains(t, f.Message, "still blocked 10s")
}
