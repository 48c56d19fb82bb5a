package inactivitycop_test

import (
	"context"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// The pure core, driven instant by instant.
func Example() {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cop, err := inactivitycop.NewCop(inactivitycop.DefaultConfig(), start)
	if err != nil {
		panic(err)
	}
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	idle, _ := cop.Open(at(0))
	busy, _ := cop.Open(at(0))
	for _, c := range []*inactivitycop.Conn{idle, busy} {
		if err := cop.SetInactivityTimeout(c, at(0), 5*time.Second); err != nil {
			panic(err)
		}
	}
	for s := 1; s <= 12; s++ {
		if s <= 4 {
			cop.NetActivity(busy, at(s)) // the wheel is not touched
		}
		r := cop.Pass(at(s))
		for _, t := range r.Timeouts {
			fmt.Printf("t=%ds conn %d: %s timeout (deadline t=%v)\n", s, t.Conn.ID(), t.Kind, t.Deadline.Sub(start))
		}
		if r.Visited > 0 {
			fmt.Printf("t=%ds pass visited %d, fired %d, re-armed %d\n", s, r.Visited, r.Fired, r.Rearmed)
		}
	}
	// Output:
	// t=6s conn 1: inactivity timeout (deadline t=5s)
	// t=6s pass visited 2, fired 1, re-armed 1
	// t=10s conn 2: inactivity timeout (deadline t=9s)
	// t=10s pass visited 1, fired 1, re-armed 0
}

// A handler in a real service: the cop task runs on its own goroutine, and
// the callback closes what times out.
func ExampleHandler() {
	cfg := inactivitycop.DefaultConfig()
	cfg.Tick, cfg.Continuation = 10*time.Millisecond, time.Millisecond // short, for the example
	r := rt.Real()
	timedOut := r.NewEvent("timed out")
	var h *inactivitycop.Handler
	h, err := inactivitycop.NewHandler(r, "net-0", cfg, func(t inactivitycop.Timeout) {
		fmt.Printf("conn %d: %s timeout\n", t.Conn.ID(), t.Kind)
		h.Close(t.Conn)
		timedOut.Set()
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := h.Start(ctx)
	c := h.Open()
	if err := h.SetInactivityTimeout(c, 30*time.Millisecond); err != nil {
		panic(err)
	}
	_ = timedOut.Wait(context.Background())
	cancel()
	_ = done.Wait(context.Background())
	fmt.Println("fired:", h.Metrics().Fired.Value())
	// Output:
	// conn 1: inactivity timeout
	// fired: 1
}
