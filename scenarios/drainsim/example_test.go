package drainsim_test

import (
	"fmt"

	"github.com/windtunnel/windtunnel/scenarios/drainsim"
	"github.com/windtunnel/windtunnel/sim"
)

// A world with two recorders and a drainer; every yield of every drain
// records from another task and waits for it, and queries a whole key.
// Check replays the history in lock order: no violation, and the queries
// issued inside a split are labelled as the documented deviation.
func Example() {
	var r *drainsim.Report
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		w, err := drainsim.New(s, drainsim.Config{Keys: []string{"GetItem.latency", "PutItem.latency"}})
		if err != nil {
			s.Failf("%v", err)
		}
		w.Run(drainsim.Plan{
			Preload: 1_000, Recorders: 2, RecordsEach: 20,
			Drainers: 1, DrainsEach: 2,
			Hook:       drainsim.HookPlan{Records: true, Wait: true, Query: true},
			FinalDrain: true,
		})
		r = drainsim.Check(w)
	})
	fmt.Println("run:", res.Err)
	fmt.Println("drains:", len(r.Drains), "violations:", len(r.Violations))
	fmt.Println("deviation reproduced:", len(r.Deviations) > 0)
	// Output:
	// run: <nil>
	// drains: 3 violations: 0
	// deviation reproduced: true
}
