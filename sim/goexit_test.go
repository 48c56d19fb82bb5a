package sim

import (
	"runtime"
	"testing"
)

// A task that calls runtime.Goexit (t.FailNow, or a failed require, inside a
// task) ends the goroutine that called Run, as it would end a test's
// goroutine. (iter.Pull carries a Goexit into whoever resumed the
// coroutine: the loop.) No other task runs another step. A scheduler
// in which tasks resume each other would carry it into a task instead, and
// that task's deferred rt calls would run the simulation on.
func TestGoexitInATaskEndsTheRunWithoutFurtherSteps(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		var sectionsAtExit, sections int64
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
							sections++
							mu.Unlock()
							if k == 2 && j == 20 {
								sectionsAtExit = sections
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
		if sections != sectionsAtExit {
			t.Errorf("seed %d: tasks went on after the Goexit: %d critical sections, %d at the Goexit", seed, sections, sectionsAtExit)
		}
	}
}
