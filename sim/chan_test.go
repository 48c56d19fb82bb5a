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

// A send blocked when its channel closes panics, as in Go (the race detector
// rejects the real version of this test): a run failure that says so, naming
// the task.
func TestSendOnClosedChanFailsTheRun(t *testing.T) {
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		ch := rt.NewChan[int](s, "jobs", 0)
		s.Go("producer", func() { ch.Send(1) })
		_ = s.Sleep(context.Background(), 1)
		ch.Close()
		_ = s.Sleep(context.Background(), 1)
	})
	f := res.Failure()
	require.NotNil(t, f)
	assert.Equal(t, sim.FailPanic, f.Kind)
	assert.Contains(t, f.Message, `task "producer" panicked: send on closed channel (chan jobs#1)`)
}

// selectChoices runs a select over two ready channels in each of n seeds and
// returns the chosen case per seed, with each run's trace hash.
func selectChoices(n int) ([]int, []uint64) {
	var choices []int
	var hashes []uint64
	for seed := uint64(1); seed <= uint64(n); seed++ {
		var chosen int
		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			a := rt.NewChan[int](s, "a", 1)
			b := rt.NewChan[int](s, "b", 1)
			a.Send(1)
			b.Send(2)
			chosen, _, _ = rt.Select(s, a.RecvCase(), b.RecvCase())
		})
		if res.Err != nil {
			panic(res.Err)
		}
		choices = append(choices, chosen)
		hashes = append(hashes, res.Hash)
	}
	return choices, hashes
}

// Which of several ready cases a select takes comes from the seed: the same
// seeds choose the same, and across seeds both cases are taken.
func TestSelectChoiceIsSeeded(t *testing.T) {
	c1, h1 := selectChoices(32)
	c2, h2 := selectChoices(32)
	assert.Equal(t, c1, c2)
	assert.Equal(t, h1, h2)
	assert.Contains(t, c1, 0)
	assert.Contains(t, c1, 1)
}

// Blocked receivers are served in the order they came: a send wakes the
// longest waiter.
func TestChanWakesReceiversFIFO(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		var order []string
		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			ch := rt.NewChan[string](s, "work", 0)
			done := s.NewWaitGroup("receivers")
			done.Add(3)
			for i, name := range []string{"r0", "r1", "r2"} {
				s.Go(name, func() {
					defer done.Done()
					_ = s.Sleep(context.Background(), time.Duration(i)*time.Millisecond)
					v := ch.Recv()
					order = append(order, name+"="+v)
				})
			}
			_ = s.Sleep(context.Background(), 10*time.Millisecond)
			for _, v := range []string{"x", "y", "z"} {
				ch.Send(v)
			}
			_ = done.Wait(context.Background())
		})
		require.NoError(t, res.Err)
		assert.ElementsMatch(t, []string{"r0=x", "r1=y", "r2=z"}, order, "seed %d", seed)
	}
}
