package example

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestCounterLosesNoUpdate flies 8 tasks adding to one counter over 100
// seeded schedules: the checker is the count at the end. simtest keeps one
// result per seed; a failing seed prints the replay command.
func TestCounterLosesNoUpdate(t *testing.T) {
	res := simtest.Seeds(t, simtest.Options{Seeds: 100}, func(s *sim.Sim) (int, error) {
		c := NewCounter(s) // *sim.Sim is an rt.Runtime
		wg := s.NewWaitGroup("adders")
		const tasks = 8
		wg.Add(tasks)
		for i := range tasks {
			s.Go(fmt.Sprint("adder", i), func() { defer wg.Done(); c.Add() })
		}
		_ = wg.Wait(context.Background())
		if got := c.Value(); got != tasks {
			return got, fmt.Errorf("lost update: %d adds counted %d", tasks, got)
		}
		return c.Value(), nil
	})
	for _, r := range res.Runs {
		if r.Passed() && r.Value != 8 {
			t.Errorf("seed %#x passed with a count of %d", r.Seed, r.Value)
		}
	}
}
