package netthreads_test

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
)

// A small world with two net threads: every timeout the wheel cops fired
// was the full scan's, at the same pass or within its continuations.
func Example() {
	var w *netthreads.World
	res := sim.Run(sim.Config{Seed: 7, MaxVirtual: 72 * time.Hour}, func(s *sim.Sim) {
		cfg := netthreads.Swarm(s.Rand())
		cfg.Threads = cfg.Threads[:2]
		cfg.Conns, cfg.Workers, cfg.Ops = 100, 1, 30
		var err error
		if w, err = netthreads.New(s, cfg); err == nil {
			err = w.Run()
		}
		if err != nil {
			s.Failf("%v", err)
		}
	})
	fmt.Println("run:", res.Err)
	fmt.Println("violations:", len(w.Violations()))
	var vs checks.Violations
	matched := 0
	for _, h := range w.History() { // judged by package checks
		matched += checks.CheckTimeouts(h, checks.TimeoutLimits{Tick: time.Second, Continuation: time.Millisecond}, &vs).Matched
	}
	fmt.Println("checker violations:", len(vs.Of()))
	fmt.Println("timeouts matched:", matched > 0)
	// Output:
	// run: <nil>
	// violations: 0
	// checker violations: 0
	// timeouts matched: true
}
