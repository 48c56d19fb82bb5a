package netsim_test

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/inactivitycop"
	"github.com/windtunnel/windtunnel/scenarios/netsim"
	"github.com/windtunnel/windtunnel/sim"
)

// A small world with two net threads: every timeout the wheel cops fired
// was the full scan's, at the same pass or within its continuations.
func Example() {
	var w *netsim.World
	res := sim.Run(sim.Config{Seed: 7, MaxVirtual: 72 * time.Hour}, func(s *sim.Sim) {
		cfg := netsim.Swarm(s.Rand())
		cfg.Threads = cfg.Threads[:2]
		cfg.Conns, cfg.Workers, cfg.Ops = 100, 1, 30
		var err error
		if w, err = netsim.New(s, cfg); err == nil {
			err = w.Run()
		}
		if err != nil {
			s.Failf("%v", err)
		}
	})
	fmt.Println("run:", res.Err)
	fmt.Println("violations:", len(w.Violations()))
	fmt.Println("timeouts matched:", w.Stats().Timeouts > 0)
	// Output:
	// run: <nil>
	// violations: 0
	// timeouts matched: true
}

// Predict says which passes visit a connection, from the TW-1 contract: an
// inactivity timeout of 5.5 s set at 0.5 s, activity at 3.5 s. The wheel
// holds 6 s, visits at tick 7, finds 9 s and re-arms; tick 10 fires it.
func ExamplePredict() {
	ops := []netsim.ConnOp{
		{At: 500 * time.Millisecond, Kind: netsim.SetInactivity, D: 5500 * time.Millisecond},
		{At: 3500 * time.Millisecond, Kind: netsim.Activity},
	}
	p, err := netsim.Predict(inactivitycop.DefaultBuckets, time.Second, ops, time.Minute)
	if err != nil {
		panic(err)
	}
	fmt.Println("visits:", p.Visits)
	for _, f := range p.Fired {
		fmt.Printf("%s deadline %v fired at %v\n", f.Kind, f.Deadline, f.At)
	}
	// Output:
	// visits: 2
	// inactivity deadline 9s fired at 10s
}
