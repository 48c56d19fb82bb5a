package netthreads

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
)

// ThreadConfig is one net thread: its cop's configuration and whether its
// workload puts deadlines exactly on pass instants.
type ThreadConfig struct {
	// Cop configures the thread's Handler. Its Tick must be the world's.
	Cop inactivitycop.Config
	// Aligned threads put many deadlines exactly on ticks (the TW-2 "strictly
	// after" boundary). Their budget must cover every visit a catch-up can
	// make (2 per open connection), so that they never continue a pass: a
	// continuation 1 ms after a tick would legitimately decide a deadline
	// on that tick differently from the full scan at the tick.
	Aligned bool
}

// Config is a world: net threads, their connections and the workload.
type Config struct {
	Plan    Plan
	Threads []ThreadConfig
	// Conns is the number of connections each thread opens at the start.
	Conns int
	// MaxConns caps the open connections of a thread; opens beyond it are
	// skipped. It bounds the work of one catch-up (see Validate).
	MaxConns int
	// Workers is the number of workload tasks per thread, each doing Ops
	// operations, the next one a random 0..OpGap later.
	Workers, Ops int
	OpGap        time.Duration
	// BurstMax is the largest number of connections opened at one instant
	// with one deadline (a burst larger than the budget, TW-4).
	BurstMax int
	// MaxTimeout bounds the timeouts the workload sets, beyond the ring for
	// small rings (TW-5).
	MaxTimeout time.Duration
	// CloseOnTimeoutPct is the chance, in percent, that the timeout
	// callback closes the connection (the rest stay open, disarmed).
	CloseOnTimeoutPct int
	// ShortenInPassPct is the chance, in percent, that a timeout callback
	// shortens another connection's deadline: a setter during a cop pass,
	// while the pass may still owe budget continuations (TW-1, TW-2).
	ShortenInPassPct int
	// CheckGap is the largest gap between two full invariant checks of a
	// thread (TW-1, TW-6), done at random instants.
	CheckGap time.Duration
}

// Validate checks the configuration, including the bound that makes the
// differential exact: a catch-up visits each open connection at most twice,
// so it needs at most 2*MaxConns/Budget continuations, which must end inside
// the quiet window.
func (c Config) Validate() error {
	if err := c.Plan.Validate(); err != nil {
		return err
	}
	switch {
	case len(c.Threads) == 0:
		return fmt.Errorf("netthreads: no threads")
	case c.Conns < 0 || c.MaxConns < max(c.Conns, 1):
		return fmt.Errorf("netthreads: need 0 <= Conns <= MaxConns, got %d and %d", c.Conns, c.MaxConns)
	case c.Workers < 0 || c.Ops < 0 || c.OpGap <= 0 || c.BurstMax < 1:
		return fmt.Errorf("netthreads: bad workload: %d workers x %d ops, gap %v, bursts up to %d", c.Workers, c.Ops, c.OpGap, c.BurstMax)
	case c.MaxTimeout < c.Plan.Tick || c.CheckGap <= 0:
		return fmt.Errorf("netthreads: MaxTimeout must be at least a tick and CheckGap positive")
	case c.CloseOnTimeoutPct < 0 || c.CloseOnTimeoutPct > 100 || c.ShortenInPassPct < 0 || c.ShortenInPassPct > 100:
		return fmt.Errorf("netthreads: CloseOnTimeoutPct and ShortenInPassPct must be in [0, 100], got %d and %d", c.CloseOnTimeoutPct, c.ShortenInPassPct)
	}
	for i, t := range c.Threads {
		if err := t.Cop.Validate(); err != nil {
			return fmt.Errorf("netthreads: thread %d: %w", i, err)
		}
		if t.Cop.Tick != c.Plan.Tick {
			return fmt.Errorf("netthreads: thread %d ticks every %v, the plan every %v", i, t.Cop.Tick, c.Plan.Tick)
		}
		visits := 2 * c.MaxConns
		if t.Aligned && t.Cop.Budget < visits {
			return fmt.Errorf("netthreads: aligned thread %d: budget %d < %d visits a catch-up may make", i, t.Cop.Budget, visits)
		}
		conts := (visits + t.Cop.Budget - 1) / t.Cop.Budget
		if time.Duration(conts)*t.Cop.Continuation >= c.Plan.Quiet {
			return fmt.Errorf("netthreads: thread %d: up to %d continuations %v apart do not fit the %v quiet window", i, conts, t.Cop.Continuation, c.Plan.Quiet)
		}
	}
	return nil
}

// MaxRing returns the longest ring of the world's threads, as a duration.
func (c Config) MaxRing() time.Duration {
	var r time.Duration
	for _, t := range c.Threads {
		r = max(r, time.Duration(t.Cop.Buckets)*t.Cop.Tick)
	}
	return r
}

// Swarm draws a world from rnd (swarm testing: each seed switches features
// on or off). It has 2 to 4 threads with rings of 16, 64 or 4,096
// one-second buckets: aligned threads with the default budget or burst
// threads with a budget of 16 to 128, 300 to 1,500 connections each. It
// has 0 to 2 pauses longer than the longest ring, half of them off the
// tick grid (a clock jump), plus sometimes a short one.
func Swarm(rnd *rand.Rand) Config {
	plan := Plan{Tick: time.Second, Quiet: 300 * time.Millisecond}
	c := Config{
		Plan:              plan,
		Conns:             300 + rnd.IntN(1201),
		MaxConns:          1900,
		Workers:           2 + rnd.IntN(2),
		Ops:               80 + rnd.IntN(80),
		OpGap:             time.Duration(300+rnd.IntN(1500)) * time.Millisecond,
		CloseOnTimeoutPct: rnd.IntN(101),
		CheckGap:          time.Duration(200+rnd.IntN(800)) * time.Millisecond,
		ShortenInPassPct:  rnd.IntN(25),
	}
	rings := []int{16, 64, 4096}
	smallOnly := rnd.IntN(2) == 0 // keeps pauses short enough to leave deadlines standing
	minBudget := inactivitycop.DefaultConfig().Budget
	for range 2 + rnd.IntN(3) {
		cop := inactivitycop.DefaultConfig()
		cop.Buckets = rings[rnd.IntN(len(rings))]
		if smallOnly {
			cop.Buckets = rings[rnd.IntN(2)]
		}
		t := ThreadConfig{Cop: cop, Aligned: rnd.IntN(2) == 0}
		if !t.Aligned {
			t.Cop.Budget = 16 << rnd.IntN(4)
		}
		minBudget = min(minBudget, t.Cop.Budget)
		c.Threads = append(c.Threads, t)
	}
	c.BurstMax = max(4, 3*minBudget)
	ring := c.MaxRing()
	c.MaxTimeout = max(3*ring, 5*time.Minute)
	var lengths []time.Duration
	for range rnd.IntN(3) {
		long := ring + time.Duration(rnd.Int64N(int64(2*ring)))
		if rnd.IntN(4) == 0 {
			long = time.Duration(5+rnd.IntN(30)) * time.Second // shorter than most rings
		}
		lengths = append(lengths, long)
	}
	offGrid := make([]bool, len(lengths))
	for i := range offGrid {
		offGrid[i] = rnd.IntN(2) == 0
	}
	c.SetPauses(rnd, lengths, offGrid)
	return c
}

// Horizon is about how long the workload runs: Ops operations a mean
// OpGap/2 apart.
func (c Config) Horizon() time.Duration { return time.Duration(c.Ops) * c.OpGap / 2 }

// SetPauses replaces the plan's pauses with pauses of the given lengths,
// spread at random over the workload's horizon, each stopping outside a
// quiet window and restarting on a tick, or, where offGrid says so (a clock
// jump), anywhere early enough in a tick for the catch-up to finish.
func (c *Config) SetPauses(rnd *rand.Rand, lengths []time.Duration, offGrid []bool) {
	c.setPauses(rnd, len(lengths), offGrid, func(i int, stop time.Duration) time.Duration {
		return c.Plan.GridAfter(stop + lengths[i])
	})
}

// SetPausesInTicks is SetPauses with each pause's length given in ticks:
// the restart falls in the tick that begins ticks[i] ticks after the one
// the stop falls in. A cop whose last pass before the stop finished (its
// cursor on the tick after the stop's) has then missed exactly ticks[i]
// ticks when it restarts, which puts a pause exactly where the claim's
// boundary is (TW-5: the ring). A count below 1 counts as 1.
func (c *Config) SetPausesInTicks(rnd *rand.Rand, ticks []int64, offGrid []bool) {
	c.setPauses(rnd, len(ticks), offGrid, func(i int, stop time.Duration) time.Duration {
		return (stop/c.Plan.Tick + time.Duration(max(ticks[i], 1))) * c.Plan.Tick
	})
}

// SetPausesAt is SetPausesInTicks with each restart placed offsets[i] after
// the start of its tick, exactly: 0 restarts on the grid, 1 ns just past
// it. An offset must lie in [0, Tick-2*Quiet), early enough in the tick for
// the catch-up to finish; SetPausesAt panics on one outside, a bug in the
// test that asked for it.
func (c *Config) SetPausesAt(rnd *rand.Rand, ticks []int64, offsets []time.Duration) {
	if len(offsets) != len(ticks) {
		panic(fmt.Sprintf("netthreads: %d pauses and %d offsets", len(ticks), len(offsets)))
	}
	for _, off := range offsets {
		if off < 0 || off >= c.Plan.Tick-2*c.Plan.Quiet {
			panic(fmt.Sprintf("netthreads: restart offset %v outside [0, %v)", off, c.Plan.Tick-2*c.Plan.Quiet))
		}
	}
	c.setPauses(rnd, len(ticks), nil, func(i int, stop time.Duration) time.Duration {
		return (stop/c.Plan.Tick+time.Duration(max(ticks[i], 1)))*c.Plan.Tick + offsets[i]
	})
}

// setPauses places n pauses over the horizon, one after the other, each
// restarting on the tick restartOf gives (off it where offGrid says so).
func (c *Config) setPauses(rnd *rand.Rand, n int, offGrid []bool, restartOf func(i int, stop time.Duration) time.Duration) {
	p, horizon := c.Plan, c.Horizon()
	p.Pauses = nil
	at := horizon / 5
	for i := range n {
		stop := p.NextOp(at + time.Duration(rnd.Int64N(int64(horizon/3)+1)))
		restart := restartOf(i, stop)
		if i < len(offGrid) && offGrid[i] {
			restart += time.Duration(1 + rnd.Int64N(int64(p.Tick-2*p.Quiet)))
		}
		p.Pauses = append(p.Pauses, Pause{Stop: stop, Restart: restart})
		at = restart + p.Quiet + time.Second
	}
	c.Plan.Pauses = p.Pauses
}

// String summarizes the configuration for the run header.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "netthreads: %d threads [", len(c.Threads))
	for i, t := range c.Threads {
		if i > 0 {
			b.WriteString(" ")
		}
		kind := "burst"
		if t.Aligned {
			kind = "aligned"
		}
		fmt.Fprintf(&b, "%s ring=%d budget=%d", kind, t.Cop.Buckets, t.Cop.Budget)
		if t.Cop.MaxConns < c.MaxConns {
			fmt.Fprintf(&b, " queue=%d", t.Cop.MaxConns)
		}
		if t.Cop.Audit {
			b.WriteString(" audit")
		}
	}
	fmt.Fprintf(&b, "], %d conns each (max %d), %d workers x %d ops, gap <= %v, bursts <= %d, timeouts <= %v, close on timeout %d%%, shorten in a pass %d%%, pauses",
		c.Conns, c.MaxConns, c.Workers, c.Ops, c.OpGap, c.BurstMax, c.MaxTimeout, c.CloseOnTimeoutPct, c.ShortenInPassPct)
	if len(c.Plan.Pauses) == 0 {
		b.WriteString(" none")
	}
	for _, p := range c.Plan.Pauses {
		fmt.Fprintf(&b, " %v..%v", p.Stop, p.Restart)
	}
	return b.String()
}
