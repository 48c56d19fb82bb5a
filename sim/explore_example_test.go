package sim_test

import (
	"context"
	"fmt"

	"github.com/windtunnel/windtunnel/sim"
)

// Two increments of a shared counter, each reading under the lock and
// writing under it again. Without preemptions every schedule is correct;
// allowing one, the search finds the lost update, and its decision list
// replays it.
func ExampleExplore() {
	body := func(s *sim.Sim) {
		mu := s.NewMutex("x")
		wg := s.NewWaitGroup("increments")
		x := 0
		for i := range 2 {
			wg.Add(1)
			s.Go(fmt.Sprint("inc", i), func() {
				defer wg.Done()
				mu.Lock()
				v := x
				mu.Unlock()
				mu.Lock()
				x = v + 1
				mu.Unlock()
			})
		}
		_ = wg.Wait(context.Background())
		if x != 2 {
			s.Failf("lost update: x = %d", x)
		}
	}
	for p := range 2 {
		res := sim.Explore(sim.Config{Seed: 1}, sim.ExploreOptions{MaxPreemptions: p, Reduction: sim.ReductionDPOR}, body)
		fmt.Printf("P=%d: proven=%v, %d schedules, %d failing\n", p, res.Exhausted && res.Failures == 0, res.Explored, res.Failures)
	}

	res := sim.Explore(sim.Config{Seed: 1}, sim.ExploreOptions{MaxPreemptions: 1, StopOnFailure: true}, body)
	again := sim.Run(sim.Config{Seed: 1, Strategy: sim.Replay(res.Decisions)}, body)
	fmt.Println(again.Failure().Message)
	// Output:
	// P=0: proven=true, 2 schedules, 0 failing
	// P=1: proven=false, 17 schedules, 2 failing
	// lost update: x = 1
}
