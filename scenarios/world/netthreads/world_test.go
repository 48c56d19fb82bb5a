package netthreads

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/sim"
)

var twSim = sim.Config{MaxVirtual: 72 * time.Hour}

// quietConfig is a one-thread world with no workload of its own: the test
// drives the thread by hand.
func quietConfig() Config {
	c := Swarm(newRand(3))
	c.Threads = c.Threads[:1]
	c.Threads[0].Aligned, c.Threads[0].Cop.Budget, c.Threads[0].Cop.Buckets = false, 64, 16
	c.Conns, c.Workers, c.Ops = 0, 0, 0
	c.Plan.Pauses = nil
	return c
}

// Correct code flies clean, for a few swarm seeds.
func TestWorldIsCleanOnCorrectCode(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		cfg := twSim
		cfg.Seed = seed
		var w *World
		res := sim.Run(cfg, func(s *sim.Sim) {
			var err error
			if w, err = New(s, Swarm(s.Rand())); err == nil {
				err = w.Run()
			}
			if err != nil {
				s.Failf("%v", err)
			}
		})
		require.NoError(t, res.Err)
		assert.Empty(t, w.Violations(), "seed %d", seed)
		st := w.Stats()
		assert.Equal(t, st.Passes, st.RefPasses+st.Exhausted)
		var vs checks.Violations
		matched := 0
		for _, h := range w.History() {
			matched += checks.CheckTimeouts(h, checks.TimeoutLimits{Tick: time.Second, Continuation: time.Millisecond}, &vs).Matched
		}
		assert.Empty(t, vs.Of(), "seed %d", seed)
		assert.Positive(t, matched)
	}
}

// Every check of the world must be able to fail. Each is fed the failure
// it looks for (a late or lost connection through the wheel's own API, a
// reference that disagrees, an evicted connection left in the wheel, an
// armed connection after the drain) and must report it under its claim.
// The checkers of the recorded history are tested in package checks.
func TestEveryCheckReportsItsViolation(t *testing.T) {
	cfg := twSim
	cfg.Seed = 1
	var w *World
	res := sim.Run(cfg, func(s *sim.Sim) {
		var err error
		w, err = New(s, quietConfig())
		if err != nil {
			s.Failf("%v", err)
		}
		th := w.Threads[0]
		th.start(context.Background())
		w.sleepUntil(context.Background(), 500*time.Millisecond)
		var ids []int
		for range 4 {
			i := th.openConn()
			th.setInactivity(i, 10*time.Second)
			ids = append(ids, i)
		}
		require.Empty(t, w.Violations(), "a clean start")
		late, lost, odd := ids[0], ids[1], ids[2]
		th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) {
			require.NoError(t, Delay(cop, th.conns[late], 5*time.Second))
			require.NoError(t, Lose(cop, th.conns[lost]))
		})
		th.checkConn(late, "injected", true) // TW-1: late
		th.checkConn(lost, "injected", true) // TW-1: lost
		th.checkAll("injected")              // TW-6: wheel size
		th.Ref.NetActivity(th.refs[odd], epoch.Add(2*time.Second))
		th.checkConn(odd, "diverged", true)  // TW-2: deadlines differ
		th.checkConn(odd, "eviction", false) // TW-10: open and in the wheel
		th.checkDrained()                    // TW-2: still armed; then the harness's own check ends the run
	})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "harness: thread 0 conn 1: the reference is still armed after the drain")
	var got []string
	for _, v := range w.Violations() {
		got = append(got, v.Claim)
	}
	for _, id := range []string{"TW-1", "TW-2", "TW-6", "TW-10"} {
		assert.Contains(t, got, id, "violations: %v", w.Violations())
	}
	msgs := w.String()
	for _, want := range []string{"later than the real deadline", "that the wheel does not hold", "the wheel holds 3 elements, 4 connections",
		"wheel cop deadlines inactivity", "evicted from the full queue", "still armed"} {
		assert.Contains(t, msgs, want)
	}
	assert.ErrorContains(t, w.Err("TW-1"), "TW-1: thread 0 conn 1")
	for _, v := range w.Violations("TW-9") {
		assert.Equal(t, "harness", v.Claim, "only the harness's own violations come with another claim's")
	}
}

// A world with small queues evicts, and the evictions are the reference's:
// the recorded histories pass the checkers, and the eviction probes are
// reached.
func TestWorldEvictsLikeTheReference(t *testing.T) {
	cfg := twSim
	cfg.Seed = 2
	var w *World
	res := sim.Run(cfg, func(s *sim.Sim) {
		c := Swarm(s.Rand())
		for i := range c.Threads {
			c.Threads[i].Cop.MaxConns = c.Conns / 2
		}
		var err error
		if w, err = New(s, c); err == nil {
			err = w.Run()
		}
		if err != nil {
			s.Failf("%v", err)
		}
	})
	require.NoError(t, res.Err)
	assert.Empty(t, w.Violations())
	assert.Positive(t, w.Stats().Evicted)
	assert.Positive(t, res.Probes[ProbeEvicted])
	var vs checks.Violations
	for _, h := range w.History() {
		checks.CheckTimeouts(h, checks.TimeoutLimits{Tick: time.Second, Continuation: time.Millisecond}, &vs)
	}
	assert.Empty(t, vs.Of(), "%v", vs.Of())
}

// FailFast turns the first violation of a chosen claim into the run's
// failure.
func TestFailFastEndsTheRun(t *testing.T) {
	cfg := twSim
	cfg.Seed = 1
	reached := false
	res := sim.Run(cfg, func(s *sim.Sim) {
		w, err := New(s, quietConfig())
		if err != nil {
			s.Failf("%v", err)
		}
		w.FailFast("TW-1")
		th := w.Threads[0]
		th.start(context.Background())
		w.sleepUntil(context.Background(), 500*time.Millisecond)
		i := th.openConn()
		th.setInactivity(i, 10*time.Second)
		th.H.Do(func(cop *inactivitycop.Cop, _ time.Time) { _ = Lose(cop, th.conns[i]) })
		th.checkConn(i, "injected", true)
		reached = true
	})
	require.Error(t, res.Err)
	assert.True(t, strings.Contains(res.Err.Error(), "TW-1: thread 0 conn 1"), res.Err.Error())
	assert.False(t, reached)
}

func TestInjectRejects(t *testing.T) {
	cop, err := inactivitycop.NewCop(inactivitycop.DefaultConfig(), epoch)
	require.NoError(t, err)
	c, _ := cop.Open(epoch)
	assert.Error(t, Delay(cop, c, time.Second), "no live deadline")
	assert.Error(t, Lose(cop, nil))
	require.NoError(t, cop.SetInactivityTimeout(c, epoch, time.Minute))
	assert.Error(t, Delay(cop, c, 0))
	require.NoError(t, Delay(cop, c, time.Second))
	assert.Len(t, cop.Audit().Late, 1)
	require.NoError(t, Lose(cop, c))
	assert.Len(t, cop.Audit().Lost, 1)
}
