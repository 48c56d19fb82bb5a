package sim

import (
	"runtime"
	"testing"
)

// A task that calls runtime.Goexit (t.FailNow, or a failed require, inside a
// task) ends the goroutine that called Run, as it would end a test's
// goroutine, and no task runs another step while the tasks below it on the
// chain of Sim.handOff unwind with it: their deferred rt calls do not
// schedule.
func TestGoexitInATaskEndsTheRunWithoutFurtherSteps(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		var stepsAtExit, steps int64
		var sim *Sim
		done := make(chan string)
		go func() {
			status := "goexit"
			defer func() {
				if r := recover(); r != nil {
					status = "panic"
				}
				done <- status
			}()
			Run(Config{Seed: seed}, func(s *Sim) {
				sim = s
				mu := s.NewMutex("m")
				wg := s.NewWaitGroup("w")
				wg.Add(4)
				for k := range 4 {
					s.Go("w", func() {
						if k != 2 {
							defer wg.Done()
						}
						for j := range 50 {
							mu.Lock()
							steps++
							mu.Unlock()
							if k == 2 && j == 20 {
								stepsAtExit = steps
								runtime.Goexit()
							}
						}
					})
				}
				_ = wg.Wait(bg)
			})
			status = "returned"
		}()
		if got := <-done; got != "goexit" {
			t.Fatalf("seed %d: Run's goroutine %s, want goexit", seed, got)
		}
		if steps != stepsAtExit {
			t.Errorf("seed %d: tasks went on after the Goexit: %d critical sections, %d at the Goexit", seed, steps, stepsAtExit)
		}
		_ = sim
	}
}
