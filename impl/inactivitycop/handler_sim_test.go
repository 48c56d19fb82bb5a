package inactivitycop_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/sim"
)

// fired is one callback as the harness saw it.
type fired struct {
	id       uint64
	kind     inactivitycop.Kind
	deadline time.Duration // since the epoch
	at       time.Duration // the pass instant
	called   time.Duration // when the callback ran
}

func since(t time.Time) time.Duration { return t.Sub(sim.Epoch) }

// TW-4, TW-8 under virtual time: passes fall exactly on the 1 s grid; a
// burst of 10,000 simultaneous deadlines with the default budget of 4,096
// is fired in three passes 1 ms apart, and the counters match.
func TestHandlerSimPassesAndContinuations(t *testing.T) {
	var log []fired
	var passes, exhausted, visited int64
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		var h *inactivitycop.Handler
		h, err := inactivitycop.NewHandler(s, "net-0", inactivitycop.DefaultConfig(), func(to inactivitycop.Timeout) {
			log = append(log, fired{id: to.Conn.ID(), kind: to.Kind, deadline: since(to.Deadline), at: since(to.At), called: s.Elapsed()})
			h.Close(to.Conn)
		})
		if err != nil {
			s.Failf("%v", err)
		}
		ctx, cancel := s.WithCancel(context.Background())
		done := h.Start(ctx)
		for range 10_000 {
			c := h.Open()
			if err := h.SetInactivityTimeout(c, 4500*time.Millisecond); err != nil {
				s.Failf("%v", err)
			}
		}
		_ = s.Sleep(context.Background(), 6500*time.Millisecond)
		cancel()
		_ = done.Wait(context.Background())
		m := h.Metrics()
		passes, exhausted, visited = m.Passes.Value(), m.BudgetExhausted.Value(), m.Visited.Value()
		h.Do(func(cop *inactivitycop.Cop, _ time.Time) {
			if cop.Len() != 0 {
				s.Failf("%d connections left open", cop.Len())
			}
		})
	})
	require.NoError(t, res.Err)
	require.Len(t, log, 10_000)
	count := map[time.Duration]int{}
	for _, f := range log {
		count[f.at]++
		assert.Equal(t, f.at, f.called, "the callback runs at the pass instant (a pass takes no virtual time)")
		assert.Equal(t, 4500*time.Millisecond, f.deadline)
	}
	assert.Equal(t, map[time.Duration]int{
		5 * time.Second:                    4096,
		5*time.Second + time.Millisecond:   4096,
		5*time.Second + 2*time.Millisecond: 1808,
	}, count, "continuations 1 ms apart, not at the next tick")
	assert.Equal(t, int64(7+2), passes, "grid passes at 0..6 s plus two continuations")
	assert.Equal(t, int64(2), exhausted)
	assert.Equal(t, int64(10_000), visited)
}

// A randomized workload under the simulator: workers open connections, set
// and change timeouts, make activity and close. The cop runs with a small
// budget and the audit on. Checked for every seed: no timeout fires before
// its deadline passed. Each fires by the first tick after its deadline plus
// continuations. The audit never finds a lost or late connection, and the
// TW-1 invariant holds whenever a checker task looks. The same seed gives the
// same run.
func TestHandlerSimRandomWorkload(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r1, log := runRandomWorkload(t, seed)
			require.NoError(t, r1.Err)
			require.NotEmpty(t, log)
			for _, f := range log {
				require.Less(t, f.deadline, f.at, "conn %d fired before its deadline passed", f.id)
				// Passes run on the 1 s grid, continuations 1 ms apart.
				require.Zero(t, f.at%time.Millisecond, "pass instant %v", f.at)
				require.Less(t, f.at%time.Second, 100*time.Millisecond, "pass instant %v", f.at)
				// Due at the first grid instant after the deadline, fired
				// there or in that pass's continuations.
				gridAfter := (f.deadline/time.Second + 1) * time.Second
				require.Less(t, f.at, gridAfter+100*time.Millisecond, "conn %d fired late: deadline %v, at %v", f.id, f.deadline, f.at)
			}
			r2, _ := runRandomWorkload(t, seed)
			require.Equal(t, r1.Hash, r2.Hash, "same seed, same run")
		})
	}
}

func runRandomWorkload(t *testing.T, seed uint64) (sim.Result, []fired) {
	t.Helper()
	var log []fired
	res := sim.Run(sim.Config{Seed: seed, MaxVirtual: time.Hour}, func(s *sim.Sim) {
		cfg := inactivitycop.DefaultConfig()
		cfg.Budget = 8
		cfg.Buckets = 16 // timeouts up to 40 s wrap the ring
		cfg.Audit = true
		h, err := inactivitycop.NewHandler(s, "net-0", cfg, func(to inactivitycop.Timeout) {
			log = append(log, fired{id: to.Conn.ID(), kind: to.Kind, deadline: since(to.Deadline), at: since(to.At), called: s.Elapsed()})
		})
		if err != nil {
			s.Failf("%v", err)
		}
		ctx, cancel := s.WithCancel(context.Background())
		done := h.Start(ctx)
		rnd := s.Rand()
		wg := s.NewWaitGroup("workers")
		for w := range 4 {
			wg.Add(1)
			s.Go(fmt.Sprintf("worker-%d", w), func() {
				defer wg.Done()
				var mine []*inactivitycop.Conn
				for range 60 {
					_ = s.Sleep(ctx, time.Duration(rnd.IntN(3000))*time.Millisecond)
					if len(mine) == 0 || rnd.IntN(4) == 0 {
						// Sometimes a burst with one deadline: more than
						// the budget comes due in one bucket (TW-4).
						n, d := 1, time.Duration(1+rnd.IntN(40))*time.Second
						if rnd.IntN(5) == 0 {
							n = 10 + rnd.IntN(30)
						}
						for range n {
							c := h.Open()
							mine = append(mine, c)
							_ = h.SetInactivityTimeout(c, d)
						}
						continue
					}
					c := mine[rnd.IntN(len(mine))]
					switch rnd.IntN(6) {
					case 0, 1, 2:
						h.NetActivity(c)
					case 3:
						_ = h.SetInactivityTimeout(c, time.Duration(rnd.IntN(20_000))*time.Millisecond)
					case 4:
						_ = h.SetActiveTimeout(c, time.Duration(rnd.IntN(20_000))*time.Millisecond)
					default:
						h.Close(c)
					}
				}
			})
		}
		s.Go("checker", func() {
			for ctx.Err() == nil {
				_ = s.Sleep(ctx, time.Duration(1+rnd.IntN(700))*time.Millisecond)
				h.Do(func(cop *inactivitycop.Cop, now time.Time) {
					for _, c := range cop.Conns() {
						at, ok := c.WheelDeadline()
						real := c.Deadline()
						if !real.IsZero() && (!ok || at.After(real)) {
							s.Failf("TW-1: conn %d real deadline %v, wheel %v (held %v)", c.ID(), since(real), since(at), ok)
						}
					}
				})
			}
		})
		_ = wg.Wait(context.Background())
		_ = s.Sleep(context.Background(), 45*time.Second) // every armed deadline passes
		h.Do(func(cop *inactivitycop.Cop, now time.Time) {
			for _, c := range cop.Conns() {
				if d := c.Deadline(); !d.IsZero() {
					s.Failf("conn %d still armed at %v, deadline %v", c.ID(), since(now), since(d))
				}
			}
		})
		cancel()
		_ = done.Wait(context.Background())
		m := h.Metrics()
		if m.AuditLost.Value() != 0 || m.AuditLate.Value() != 0 {
			s.Failf("audit found %d lost and %d late", m.AuditLost.Value(), m.AuditLate.Value())
		}
		if m.Fired.Value() != int64(len(log)) {
			s.Failf("inactivity_cop_fired %d, callbacks %d", m.Fired.Value(), len(log))
		}
	})
	return res, log
}

// TW-10 under the simulator: four tasks open 50 connections each on a thread
// whose queue holds 32, arming each with a short timeout and making activity
// on their own. Each of the 168 evicted connections gets exactly one
// callback, Evicted, as the last event it ever gets: none of its timeouts
// fires afterwards. It comes from the task whose Open evicted it, before that
// Open returns. The counter matches, and 32 stay open.
func TestHandlerSimEviction(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		events := map[uint64][]inactivitycop.Kind{}
		var evicted []uint64
		var counted int64
		var open int
		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			cfg := inactivitycop.DefaultConfig()
			cfg.MaxConns = 32
			var h *inactivitycop.Handler
			opening := 0 // tasks inside h.Open
			h, err := inactivitycop.NewHandler(s, "net-0", cfg, func(to inactivitycop.Timeout) {
				events[to.Conn.ID()] = append(events[to.Conn.ID()], to.Kind)
				if to.Kind != inactivitycop.Evicted {
					return
				}
				evicted = append(evicted, to.Conn.ID())
				if !to.Conn.Closed() {
					s.Failf("evicted conn %d is not closed", to.Conn.ID())
				}
				if opening == 0 {
					s.Failf("conn %d's eviction was reported outside the Open that evicted it", to.Conn.ID())
				}
			})
			if err != nil {
				s.Failf("%v", err)
			}
			ctx, cancel := s.WithCancel(context.Background())
			done := h.Start(ctx)
			wg := s.NewWaitGroup("openers")
			for w := range 4 {
				wg.Add(1)
				s.Go(fmt.Sprintf("opener-%d", w), func() {
					defer wg.Done()
					var mine []*inactivitycop.Conn
					for range 50 {
						_ = s.Sleep(ctx, time.Duration(1+s.Rand().IntN(300))*time.Millisecond)
						if len(mine) > 0 && s.Rand().IntN(3) == 0 {
							h.NetActivity(mine[s.Rand().IntN(len(mine))])
						}
						opening++
						c := h.Open()
						opening--
						mine = append(mine, c)
						_ = h.SetInactivityTimeout(c, time.Duration(2+s.Rand().IntN(4))*time.Second)
					}
				})
			}
			_ = wg.Wait(context.Background())
			_ = s.Sleep(context.Background(), 10*time.Second)
			cancel()
			_ = done.Wait(context.Background())
			counted = h.Metrics().Evicted.Value()
			h.Do(func(cop *inactivitycop.Cop, _ time.Time) { open = cop.Len() })
		})
		require.NoError(t, res.Err, "seed %d", seed)
		assert.Len(t, evicted, 200-32, "seed %d", seed)
		assert.Equal(t, int64(len(evicted)), counted)
		assert.Equal(t, 32, open)
		for _, id := range evicted {
			n := 0
			for _, k := range events[id] {
				if k == inactivitycop.Evicted {
					n++
				}
			}
			assert.Equal(t, 1, n, "conn %d: exactly one eviction event", id)
			assert.Equal(t, inactivitycop.Evicted, events[id][len(events[id])-1], "conn %d: nothing after its eviction", id)
		}
	}
}
