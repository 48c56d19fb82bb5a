package drain_test

import (
	"fmt"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/drain"
	"github.com/windtunnel/windtunnel/sim"
)

// A world with two recorders and a drainer; every yield of every drain
// records from another task and waits for it, and queries a whole key.
// checks.CheckCollector replays the history in lock order: no violation,
// and the queries issued inside a split are labelled as the documented
// deviation.
func Example() {
	var r *checks.CollectorReport
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		w, err := drain.New(s, drain.Config{Keys: []string{"GetItem.latency", "PutItem.latency"}})
		if err != nil {
			s.Failf("%v", err)
		}
		w.Run(drain.Plan{
			Preload: 1_000, Recorders: 2, RecordsEach: 20,
			Drainers: 1, DrainsEach: 2,
			Hook:       drain.HookPlan{Records: true, Wait: true, Query: true},
			FinalDrain: true,
		})
		r = drain.Check(w, checks.CollectorLimits{ChunkPoints: int(claims.Get("DR-6", "chunk points").Int())})
	})
	fmt.Println("run:", res.Err)
	fmt.Println("drains:", len(r.Drains), "violations:", len(r.Violations.Of()))
	fmt.Println("deviation reproduced:", len(r.Deviations) > 0)
	// Output:
	// run: <nil>
	// drains: 3 violations: 0
	// deviation reproduced: true
}
