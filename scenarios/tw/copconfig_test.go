package tw

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/timerwheel"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// TestTW4_ConfigRefusesWhatItCannotRun holds the cop's configuration to
// its documented ranges, through every entry a user has: Config.Validate,
// NewCop and NewHandler must agree on each field's edges. A Validate that
// passes what NewCop refuses tells a user their configuration is good
// when no cop can run it. The seed's tick, budget and continuation come
// from the claims table; each field is moved alone from them.
func TestTW4_ConfigRefusesWhatItCannotRun(t *testing.T) {
	base := inactivitycop.DefaultConfig()
	base.Tick = claims.Get("TW-2", "tick").Duration()
	base.Budget = int(claims.Get("TW-4", "budget").Int())
	base.Continuation = claims.Get("TW-4", "continuation").Duration()
	base.Buckets = 8 // small rings keep the accepted cases cheap; MaxBuckets is tried alone below
	with := func(f func(*inactivitycop.Config)) inactivitycop.Config {
		c := base
		f(&c)
		return c
	}
	for _, c := range []struct {
		what string
		cfg  inactivitycop.Config
		ok   bool
	}{
		{"the seed's figures", base, true},
		{"a 1 ns tick and continuation", with(func(c *inactivitycop.Config) { c.Tick, c.Continuation = time.Nanosecond, time.Nanosecond }), true},
		{"tick 0", with(func(c *inactivitycop.Config) { c.Tick = 0 }), false},
		{"a negative tick", with(func(c *inactivitycop.Config) { c.Tick = -base.Tick }), false},
		{"1 bucket", with(func(c *inactivitycop.Config) { c.Buckets = 1 }), true},
		{"0 buckets", with(func(c *inactivitycop.Config) { c.Buckets = 0 }), false},
		{"-8 buckets", with(func(c *inactivitycop.Config) { c.Buckets = -8 }), false},
		{"3 buckets", with(func(c *inactivitycop.Config) { c.Buckets = 3 }), false},
		{"MinInt buckets", with(func(c *inactivitycop.Config) { c.Buckets = math.MinInt }), false},
		{"MaxBuckets+1 buckets", with(func(c *inactivitycop.Config) { c.Buckets = timerwheel.MaxBuckets + 1 }), false},
		{"2*MaxBuckets buckets (a power of two)", with(func(c *inactivitycop.Config) { c.Buckets = 2 * timerwheel.MaxBuckets }), false},
		{"budget 1", with(func(c *inactivitycop.Config) { c.Budget = 1 }), true},
		{"budget 0", with(func(c *inactivitycop.Config) { c.Budget = 0 }), false},
		{"a negative budget", with(func(c *inactivitycop.Config) { c.Budget = -1 }), false},
		{"continuation equal to the tick", with(func(c *inactivitycop.Config) { c.Continuation = c.Tick }), true},
		{"continuation 1 ns past the tick", with(func(c *inactivitycop.Config) { c.Continuation = c.Tick + time.Nanosecond }), false},
		{"continuation 0", with(func(c *inactivitycop.Config) { c.Continuation = 0 }), false},
		{"a negative continuation", with(func(c *inactivitycop.Config) { c.Continuation = -time.Millisecond }), false},
		{"a queue of 1", with(func(c *inactivitycop.Config) { c.MaxConns = 1 }), true},
		{"a queue of 0", with(func(c *inactivitycop.Config) { c.MaxConns = 0 }), false},
		{"a negative queue", with(func(c *inactivitycop.Config) { c.MaxConns = -1 }), false},
	} {
		verr := c.cfg.Validate()
		cop, cerr := inactivitycop.NewCop(c.cfg, time.Unix(0, 0))
		h, herr := inactivitycop.NewHandler(rt.Real(), "tw4-config", c.cfg, nil)
		for _, e := range []struct {
			entry string
			err   error
			made  bool
		}{{"Validate", verr, c.ok}, {"NewCop", cerr, cop != nil}, {"NewHandler", herr, h != nil}} {
			if (e.err == nil) != c.ok || e.made != c.ok {
				t.Errorf("TW-4: %s with %s: error %v; want accepted %v", e.entry, c.what, e.err, c.ok)
			}
		}
	}
	// The largest ring is accepted: its bound is inclusive.
	largest := with(func(c *inactivitycop.Config) { c.Buckets = timerwheel.MaxBuckets })
	if err := largest.Validate(); err != nil {
		t.Errorf("TW-4: Validate with MaxBuckets (%d) buckets: %v", timerwheel.MaxBuckets, err)
	}
	if cop, err := inactivitycop.NewCop(largest, time.Unix(0, 0)); err != nil || cop.Wheel().Buckets() != timerwheel.MaxBuckets {
		t.Errorf("TW-4: NewCop with MaxBuckets (%d) buckets: %v", timerwheel.MaxBuckets, err)
	}
}

// TestTW8_RunAfterItsContextEndedRunsNoPass: Run returns its context's
// error once the context has ended and runs no pass after: a cop being
// stopped must not time out one more round of connections. The harness
// sees Run return without a pass; the passes counter must say the same.
func TestTW8_RunAfterItsContextEndedRunsNoPass(t *testing.T) {
	cfg := inactivitycop.DefaultConfig()
	cfg.Buckets = 8
	var fired []inactivitycop.Timeout
	h, err := inactivitycop.NewHandler(rt.Real(), "tw8-ended", cfg, func(to inactivitycop.Timeout) { fired = append(fired, to) })
	if err != nil {
		t.Fatal(err)
	}
	c := h.Open()
	if err := h.SetActiveTimeout(c, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("TW-8: Run with an ended context returned %v; want context.Canceled", err)
	}
	if n := h.Metrics().Passes.Value(); n != 0 || len(fired) != 0 {
		t.Errorf("TW-8: Run with an ended context ran %d passes and fired %d timeouts; want none", n, len(fired))
	}
}
