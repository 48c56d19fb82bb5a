package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fence is a stand-in for the cache-fence proofs to come: two loaders fill a
// cache entry from a versioned source while an invalidator bumps the source
// and invalidates. A loader reads the generation under the short
// publication mutex, reads the source under its own lock, and publishes only
// if the generation is unchanged. At the end the cache must be empty or hold
// the current version. Without the generation check a loader can publish
// what it read before the invalidation, after it.
func fence(checkGeneration bool) func(*Sim) {
	return func(s *Sim) {
		pub := s.NewMutex("publication")
		src := s.NewMutex("source")
		version, gen, cached := 1, 0, 0 // cached 0: empty
		wg := s.NewWaitGroup("all")
		wg.Add(3)
		for i := range 2 {
			s.Go(fmt.Sprint("loader", i), func() {
				defer wg.Done()
				pub.Lock()
				g, hit := gen, cached != 0
				pub.Unlock()
				if hit {
					return
				}
				src.Lock()
				v := version
				src.Unlock()
				pub.Lock()
				if !checkGeneration || gen == g {
					cached = v
				}
				pub.Unlock()
			})
		}
		s.Go("invalidator", func() {
			defer wg.Done()
			src.Lock()
			version++
			src.Unlock()
			pub.Lock()
			gen++
			cached = 0
			pub.Unlock()
		})
		_ = wg.Wait(bg)
		if cached != 0 && cached != version {
			s.Failf("stale cache: holds version %d, the source is at %d", cached, version)
		}
	}
}

// With at most two preemptions the fence holds, and without the generation
// check one preemption suffices to break it. (Unbounded, every blocked lock
// attempt is a step of its own and the space of traces exceeds 100,000.)
func TestExploreProvesTheFence(t *testing.T) {
	for _, opts := range []ExploreOptions{
		{MaxPreemptions: 2},
		{MaxPreemptions: 2, Reduction: ReductionDPOR},
	} {
		res := Explore(Config{Seed: 1}, opts, fence(true))
		assert.True(t, res.proven(), "%+v: %v", opts, res)
		t.Logf("P=%d %v: %v", opts.MaxPreemptions, opts.Reduction, res)

		opts.StopOnFailure = true
		opts.MaxPreemptions = 1
		res = Explore(Config{Seed: 1}, opts, fence(false))
		require.NotNil(t, res.Failure, "%+v: %v", opts, res)
		assert.Contains(t, res.Failure.Message, "stale cache")
		assertReplays(t, res, fence(false))
	}
}

// BenchmarkExploreFence measures schedules explored per second on the fence
// program, for each search, against the baseline of plain random-walk runs
// of the same program (runs/s). One iteration is one whole exploration.
func BenchmarkExploreFence(b *testing.B) {
	b.Run("baseline=random-walk", func(b *testing.B) {
		var seed uint64
		for b.Loop() {
			seed++
			if res := Run(Config{Seed: seed}, fence(true)); res.Err != nil {
				b.Fatal(res.Err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
	})
	for _, c := range []struct {
		name string
		opts ExploreOptions
	}{
		{"P=2/none", ExploreOptions{MaxPreemptions: 2}},
		{"P=2/dpor", ExploreOptions{MaxPreemptions: 2, Reduction: ReductionDPOR}},
		{"P=3/dpor", ExploreOptions{MaxPreemptions: 3, Reduction: ReductionDPOR}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var explored int64
			var last ExploreResult
			for b.Loop() {
				last = Explore(Config{Seed: 1}, c.opts, fence(true))
				if !last.proven() {
					b.Fatal(last.String())
				}
				explored += last.Explored
			}
			b.ReportMetric(float64(explored)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(last.Explored), "schedules")
			b.ReportMetric(float64(last.Runs), "runs")
		})
	}
}
