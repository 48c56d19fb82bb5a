package sim

import (
	"context"
	"iter"
	"testing"
)

// BenchmarkBareCoroutine is the floor: one iter.Pull resume+yield round trip.
func BenchmarkBareCoroutine(b *testing.B) {
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
	defer stop()
	for b.Loop() {
		next()
	}
}

// BenchmarkSchedulerStep is one scheduling step of a task that yields through
// an rt call: two tasks taking turns on a sim Mutex. ns/op is per step; the
// issue's goal is at most 1.5x BenchmarkBareCoroutine.
func BenchmarkSchedulerStep(b *testing.B) {
	n := b.N
	var steps int64
	b.ResetTimer()
	res := Run(Config{Seed: 1, MaxSteps: int64(n) + 1000}, func(s *Sim) {
		mu := s.NewMutex("shared")
		done := s.NewWaitGroup("done")
		done.Add(2)
		for range 2 {
			s.Go("worker", func() {
				defer done.Done()
				for int(s.Steps()) < n {
					mu.Lock()
					//lint:ignore SA2001 the lock operations are the scheduling steps measured
					mu.Unlock()
				}
			})
		}
		_ = done.Wait(context.Background())
		steps = s.Steps()
	})
	b.StopTimer()
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
}
