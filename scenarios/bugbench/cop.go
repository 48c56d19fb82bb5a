package bugbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// CopDeadlines is TW-1's and TW-2's timing on a running cop: a net thread's
// handler passes once a tick while clients arm inactivity timeouts: one of
// two ticks, one of five shortened to two, and one of one tick that a
// client's activity half a tick later moves on (the wheel then holds an
// early entry the pass re-arms). Every timeout fires once, at the first
// pass strictly after its deadline: a pass instant on the grid
// origin+k·tick (real passes run a little after theirs) after the
// deadline and no later than a tick past it. The failure hangs on time:
// on real goroutines a run costs four ticks and a half.
var CopDeadlines = &Workload{Name: "cop-deadlines", Claim: "TW-1, TW-2", Run: copDeadlines, Selected: copSelected,
	Waits: claims.Get("TW-2", "tick").Duration() * 9 / 2}

// copSelected: the handler's lock.
func copSelected(obj string) bool { return strings.HasPrefix(obj, "mutex inactivitycop/") }

func copDeadlines(r rt.Runtime) error {
	tick := claims.Get("TW-2", "tick").Duration()
	cfg := inactivitycop.DefaultConfig()
	cfg.Tick = tick
	mu := r.NewMutex("bugbench.fired")
	var fired []inactivitycop.Timeout
	h, err := inactivitycop.NewHandler(r, "bench", cfg, func(t inactivitycop.Timeout) {
		mu.Lock()
		fired = append(fired, t)
		mu.Unlock()
	})
	if err != nil {
		return err
	}
	origin := r.Now()
	ctx, stop := r.WithCancel(context.Background())
	done := h.Start(ctx)
	const conns = 3
	cs := make([]*inactivitycop.Conn, conns) // each client's own slot
	errs := make([]error, conns)
	wg := r.NewWaitGroup("bugbench.clients")
	wg.Add(conns)
	clients := []func(c *inactivitycop.Conn) error{
		func(c *inactivitycop.Conn) error { return h.SetInactivityTimeout(c, 2*tick) },
		func(c *inactivitycop.Conn) error { // TW-1: a shorter timeout re-arms the wheel
			if err := h.SetInactivityTimeout(c, 5*tick); err != nil {
				return err
			}
			r.Yield()
			return h.SetInactivityTimeout(c, 2*tick)
		},
		func(c *inactivitycop.Conn) error { // activity moves the deadline on; the pass re-arms
			if err := h.SetInactivityTimeout(c, tick); err != nil {
				return err
			}
			if err := r.Sleep(context.Background(), tick/2); err != nil {
				return err
			}
			h.NetActivity(c)
			return nil
		},
	}
	for i, client := range clients {
		r.Go(fmt.Sprint("client-", i), func() {
			defer wg.Done()
			cs[i] = h.Open()
			errs[i] = client(cs[i])
		})
	}
	if err := wg.Wait(context.Background()); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// Every deadline is at most two ticks and a half from the start; two
	// ticks more leave room for its pass.
	if err := r.Sleep(context.Background(), origin.Add(9*tick/2).Sub(r.Now())); err != nil {
		return err
	}
	stop()
	if err := done.Wait(context.Background()); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for i, c := range cs {
		var got []inactivitycop.Timeout
		for _, t := range fired {
			if t.Conn == c {
				got = append(got, t)
			}
		}
		if len(got) != 1 {
			return fmt.Errorf("TW-2: client %d's connection timed out %d times, want once", i, len(got))
		}
		t := got[0]
		grid := origin.Add(t.At.Sub(origin) / tick * tick) // the pass's own grid instant
		if !t.At.After(t.Deadline) || grid.After(t.Deadline.Add(tick)) {
			return fmt.Errorf("TW-2: client %d's %v timeout, due %v after the start, fired by the pass of %v, want the first pass strictly after it (tick %v)",
				i, t.Kind, t.Deadline.Sub(origin), grid.Sub(origin), tick)
		}
	}
	return nil
}
