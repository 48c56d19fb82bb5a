package tw

import (
	"fmt"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// TestTW4_EdgesOfEveryRange flies the cop at the ends of every range its
// configuration and calls document, which the drawn worlds (budgets of 16
// and up, timeouts of seconds, open connections only) never reach:
//
//   - each configuration field at its smallest and largest valid value is
//     accepted, and one step outside refused (Config.Validate's ranges);
//   - a budget of 1 fires one connection a pass, the rest in continuations,
//     with passes, visited, fired and budget_exhausted counting each (TW-4,
//     TW-8);
//   - a 1 ns inactivity timeout is pushed by activity like any other: it
//     fires with the deadline the activity set (TW-1);
//   - a closed connection refuses both timeouts and stays out of the wheel,
//     activity on it included (TW-6).
func TestTW4_EdgesOfEveryRange(t *testing.T) {
	tick := claims.Get("TW-2", "tick").Duration()
	cont := claims.Get("TW-4", "continuation").Duration()
	base := defaultCop()
	base.Tick, base.Continuation = tick, cont
	edges := []struct {
		what string
		edit func(*inactivitycop.Config)
		ok   bool
	}{
		{"budget 1", func(c *inactivitycop.Config) { c.Budget = 1 }, true},
		{"budget 0", func(c *inactivitycop.Config) { c.Budget = 0 }, false},
		{"continuation 1ns", func(c *inactivitycop.Config) { c.Continuation = time.Nanosecond }, true},
		{"continuation 0", func(c *inactivitycop.Config) { c.Continuation = 0 }, false},
		{"continuation of a tick", func(c *inactivitycop.Config) { c.Continuation = c.Tick }, true},
		{"continuation past a tick", func(c *inactivitycop.Config) { c.Continuation = c.Tick + time.Nanosecond }, false},
		{"tick 1ns", func(c *inactivitycop.Config) { c.Tick, c.Continuation = time.Nanosecond, time.Nanosecond }, true},
		{"tick 0", func(c *inactivitycop.Config) { c.Tick = 0 }, false},
		{"one bucket", func(c *inactivitycop.Config) { c.Buckets = 1 }, true},
		{"no bucket", func(c *inactivitycop.Config) { c.Buckets = 0 }, false},
		{"one connection", func(c *inactivitycop.Config) { c.MaxConns = 1 }, true},
		{"no connection", func(c *inactivitycop.Config) { c.MaxConns = 0 }, false},
	}
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range edges {
		cfg := base
		e.edit(&cfg)
		_, err := inactivitycop.NewCop(cfg, origin)
		if (err == nil) != e.ok {
			t.Errorf("TW-4: a cop with %s: NewCop returned %v, want accepted=%v", e.what, err, e.ok)
		}
	}

	// A budget of 1 and three connections due in one bucket, one of them
	// with activity after its 1 ns timeout was set.
	cfg := base
	cfg.Budget = 1
	cop, err := inactivitycop.NewCop(cfg, origin)
	if err != nil {
		t.Fatalf("TW-4: %v", err)
	}
	set, act := origin.Add(tick/10), origin.Add(tick/2)
	var conns []*inactivitycop.Conn
	for range 3 {
		c, _ := cop.Open(set)
		if err := cop.SetInactivityTimeout(c, set, time.Nanosecond); err != nil {
			t.Fatalf("TW-1: a 1ns inactivity timeout: %v", err)
		}
		conns = append(conns, c)
	}
	cop.NetActivity(conns[0], act)
	want := map[uint64]time.Time{conns[0].ID(): act.Add(time.Nanosecond), conns[1].ID(): set.Add(time.Nanosecond), conns[2].ID(): set.Add(time.Nanosecond)}
	var fired []int
	at := origin.Add(tick)
	for pass := 0; pass < 10 && len(want) > 0; pass++ {
		r := cop.Pass(at)
		fired = append(fired, r.Fired)
		for _, to := range r.Timeouts {
			if d, ok := want[to.Conn.ID()]; !ok || !to.Deadline.Equal(d) {
				t.Errorf("TW-1: connection %d fired with deadline %v, want %v (a 1 ns timeout, pushed by activity at %v for the first)", to.Conn.ID(), to.Deadline.Sub(origin), d.Sub(origin), act.Sub(origin))
			}
			delete(want, to.Conn.ID())
		}
		at = at.Add(cfg.Continuation)
	}
	if fmt.Sprint(fired) != "[1 1 1]" {
		t.Errorf("TW-4: a budget of 1 fired %v per pass, want [1 1 1]", fired)
	}
	m := cop.Metrics()
	for _, c := range []struct {
		name      string
		got, want int64
	}{{seriesPasses, m.Passes.Value(), 3}, {seriesVisited, m.Visited.Value(), 3}, {seriesFired, m.Fired.Value(), 3}, {seriesExhausted, m.BudgetExhausted.Value(), 2}} {
		if c.got != c.want {
			t.Errorf("TW-8: %s is %d after three passes of budget 1 over three due connections, want %d", c.name, c.got, c.want)
		}
	}

	// A closed connection refuses timeouts and stays out of the wheel.
	c, _ := cop.Open(at)
	cop.Close(c)
	if err := cop.SetActiveTimeout(c, at, time.Second); err == nil {
		t.Errorf("TW-6: SetActiveTimeout on a closed connection returned nil")
	}
	if err := cop.SetInactivityTimeout(c, at, time.Second); err == nil {
		t.Errorf("TW-6: SetInactivityTimeout on a closed connection returned nil")
	}
	cop.NetActivity(c, at)
	if wd, held := c.WheelDeadline(); held {
		t.Errorf("TW-6: a closed connection is in the wheel at %v after timeouts were set on it", wd.Sub(origin))
	}
	if r := cop.Pass(at.Add(2 * tick)); r.Fired != 0 {
		t.Errorf("TW-6: a pass fired %d timeouts of a closed connection", r.Fired)
	}
}
