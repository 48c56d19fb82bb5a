package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// goOrderOf runs prog under GoOrder with no switches and returns what its
// tasks appended to the log it is given, in order.
func goOrderOf(t *testing.T, prog func(s *Sim, log *[]string)) []string {
	t.Helper()
	var log []string
	g := &goOrder{fixedRate: 64}
	res := Run(Config{Seed: 1, Strategy: g}, func(s *Sim) { prog(s, &log) })
	require.NoError(t, res.Err)
	require.Zero(t, g.switched, "a rate of 2^-64 switched")
	return log
}

// A spawned task waits for its parent to block or yield; then the newest
// spawned runs first, and the older one after it, before the parent.
func TestGoOrderRunsTheNewestReadiedTaskAfterAYield(t *testing.T) {
	got := goOrderOf(t, func(s *Sim, log *[]string) {
		mu := s.NewMutex("m")
		s.Go("a", func() { *log = append(*log, "a") })
		s.Go("b", func() { *log = append(*log, "b") })
		mu.Lock() // no contention: the parent goes on
		mu.Unlock()
		*log = append(*log, "parent before Yield")
		s.Yield()
		*log = append(*log, "parent after Yield")
	})
	assert.Equal(t, []string{"parent before Yield", "b", "a", "parent after Yield"}, got)
}

// A task woken by an Unlock takes the runnext slot from a task spawned
// before it.
func TestGoOrderRunsAWokenTaskNext(t *testing.T) {
	got := goOrderOf(t, func(s *Sim, log *[]string) {
		mu := s.NewMutex("m")
		mu.Lock()
		s.Go("waiter", func() {
			mu.Lock()
			*log = append(*log, "waiter")
			mu.Unlock()
		})
		s.Yield() // the waiter blocks on mu
		s.Go("spawned", func() { *log = append(*log, "spawned") })
		mu.Unlock()
		s.Yield()
		*log = append(*log, "parent")
	})
	assert.Equal(t, []string{"waiter", "spawned", "parent"}, got)
}

// A task that never blocks nor yields is sent to the back after
// goSliceSteps steps.
func TestGoOrderPreemptsALongRun(t *testing.T) {
	got := goOrderOf(t, func(s *Sim, log *[]string) {
		mu := s.NewMutex("m")
		s.Go("other", func() { *log = append(*log, "other") })
		for range 2 * goSliceSteps {
			mu.Lock()
			mu.Unlock()
		}
		*log = append(*log, "spinner")
	})
	assert.Equal(t, []string{"other", "spinner"}, got)
}

// A child started before its parent yields takes a read lock the parent
// then waits for: Etcd5509's shape. Go's order runs the child first; a walk
// that switches at every step does so far less often.
func TestGoOrderFindsTheChildFirstOrderMostOften(t *testing.T) {
	childFirst := func(st func() Strategy) (n int) {
		for seed := uint64(0); seed < 200; seed++ {
			first := ""
			res := Run(Config{Seed: seed, Strategy: st()}, func(s *Sim) {
				rw := s.NewRWMutex("client")
				wg := s.NewWaitGroup("parent")
				wg.Add(1)
				s.Go("parent", func() {
					defer wg.Done()
					s.Go("child", func() {
						rw.RLock()
						if first == "" {
							first = "child"
						}
						rw.RUnlock()
					})
					s.Yield()
					rw.Lock()
					if first == "" {
						first = "parent"
					}
					rw.Unlock()
				})
				_ = wg.Wait(bg)
			})
			require.NoError(t, res.Err)
			if first == "child" {
				n++
			}
		}
		return n
	}
	g, r := childFirst(GoOrder), childFirst(RandomWalk)
	t.Logf("child first on 200 seeds: goorder %d, random %d", g, r)
	assert.GreaterOrEqual(t, g, 180)
	assert.Greater(t, g, r)
	assert.Less(t, g, 200, "the seeded switches reach the other order too")
}

// Same seed, same schedule; the switch rate differs between seeds; the
// runnext slot is held by one task at most.
func TestGoOrderIsDeterministicAndSwitches(t *testing.T) {
	rates := map[int]bool{}
	var switched int64
	for seed := uint64(0); seed < 100; seed++ {
		w := &goOrderWatch{goOrder: &goOrder{}, t: t}
		a := Run(Config{Seed: seed, Strategy: w}, busyProgram)
		b := Run(Config{Seed: seed, Strategy: GoOrder()}, busyProgram)
		require.NoError(t, a.Err, "seed %d", seed)
		require.Equal(t, a.Hash, b.Hash, "seed %d ran twice with different traces", seed)
		require.Empty(t, w.violation)
		rates[w.rateBits] = true
		switched += w.switched
	}
	assert.Greater(t, len(rates), goMaxRateShift/2, "seeds draw different switch rates")
	assert.Positive(t, switched)
}

type goOrderWatch struct {
	*goOrder
	t         *testing.T
	violation string
}

func (w *goOrderWatch) pick(s *Sim) int {
	if err := w.assertNext(s); err != nil && w.violation == "" {
		w.violation = err.Error()
	}
	return w.goOrder.pick(s)
}

// assertNext checks the runnext slot's invariant (tests): at most one task
// holds goBandNext, and it is g.next.
func (g *goOrder) assertNext(s *Sim) error {
	for _, t := range s.runnable {
		if t.prio == goBandNext && t != g.next && t != g.cur {
			return fmt.Errorf("task %d holds the runnext band, the slot holds %v", t.id, g.next)
		}
	}
	return nil
}

// pollPair is one copy of Cockroach2448's bug: a poll loop hands an event
// to a store and sleeps 100 µs; the store yields, then waits for the loop
// to take its callback. If the loop wakes before the store is back, it
// polls again, finds no callback and waits to hand another event to the
// store, which waits for it: both blocked forever.
func pollPair(s *Sim) {
	events := rt.NewChan[int](s, "events", 0)
	callbacks := rt.NewChan[int](s, "callbacks", 0)
	s.Go("store", func() {
		for {
			events.Recv()
			s.Yield()
			callbacks.Send(1)
		}
	})
	s.Go("poll", func() {
		for {
			if i, _, _ := rt.TrySelect(s, callbacks.RecvCase()); i < 0 {
				events.Send(1)
				_ = s.Sleep(bg, 100*time.Microsecond)
			}
		}
	})
}

// pollPairConfig runs pollPair with the GoKer harness's clock and a leak
// check that settles for a second.
func pollPairConfig(seed uint64, st Strategy) Config {
	return Config{Seed: seed, Strategy: st, LeakCheck: true, LeakSettle: time.Second,
		StepDuration: time.Microsecond, IdleWake: time.Millisecond}
}

// Alone, the loop wakes before the store is back only if time passes while
// the store could run: no order of steps does that, a pause does. GoOrder
// proves the leak on every seed; a random walk, with no pauses, on none.
func TestGoOrderPausesLetALonePollLoopMeetItsTimer(t *testing.T) {
	proved := func(st func() Strategy) (n int, jumps int64) {
		for seed := uint64(0); seed < 20; seed++ {
			s := st()
			res := Run(pollPairConfig(seed, s), pollPair)
			f := res.Failure()
			require.NotNil(t, f, "seed %d: the loop cannot end", seed)
			require.Equal(t, FailLeak, f.Kind, "seed %d: %s", seed, f.Message)
			if strings.Contains(f.Message, "2 task(s) blocked forever") {
				n++
			}
			if g, ok := s.(*goOrder); ok {
				jumps += g.jumps
			}
		}
		return n, jumps
	}
	g, jumps := proved(GoOrder)
	r, _ := proved(RandomWalk)
	t.Logf("leak proved on 20 seeds: goorder %d (%d pauses), random %d", g, jumps, r)
	assert.Equal(t, 20, g)
	assert.Positive(t, jumps)
	assert.Zero(t, r, "a random walk has no pause: the loop always finds its callback")
}

// A pause is a decision (ClockDecision): replayed, and followed by a
// guided run, the run is the same.
func TestGoOrderPausesReplay(t *testing.T) {
	cfg := pollPairConfig(3, GoOrder())
	cfg.RecordDecisions = true
	res := Run(cfg, pollPair)
	require.NotNil(t, res.Failure())
	require.Contains(t, res.Decisions, ClockDecision)
	for _, st := range []Strategy{Replay(res.Decisions), newGuided(res.Decisions)} {
		again := pollPairConfig(3, st)
		again.RecordDecisions = true
		back := Run(again, pollPair)
		assert.Equal(t, res.Hash, back.Hash, "%v", st)
		assert.Equal(t, res.Decisions, back.Decisions, "%v", st)
		assert.Equal(t, res.Failure().Message, back.Failure().Message, "%v", st)
	}
	// A jump with no timer pending is a divergence, said as such.
	bad := Run(Config{Seed: 1, Strategy: Replay([]int32{ClockDecision})}, func(s *Sim) { s.Yield() })
	assert.ErrorContains(t, bad.Err, "jumps the clock, but no timer is pending")
}
