package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"pgregory.net/rapid"
)

// TestARecordingReplaysItsRun is the promise a shrinker stands on: a keyed
// replay's recording (its choices, its Keep sites: KeepsOfRun) replays the
// run it records, step for step, whatever the lists it ran from. Workers
// loop while KeepsLeft says a kept call is ahead, each for at most a drawn
// number of calls and until a drawn deadline, sleeping drawn times. So a run
// ends loops in every way a recording must reproduce: its last kept call,
// its time, its limit. The rapid package drops a random subset of a seed
// run's calls, and sometimes the dense prefix that makes an index file its
// keys sparse. Both ways a recording once failed to replay (a sparse index;
// a kept call a loop never reached) fail this test.
func TestARecordingReplaysItsRun(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		workers := rapid.IntRange(1, 4).Draw(rt, "workers")
		calls := rapid.IntRange(1, 40).Draw(rt, "calls")
		if rapid.Bool().Draw(rt, "long") {
			calls = 1500 // past the dense slots a few kept calls get: filed sparse
		}
		deadline := time.Duration(rapid.IntRange(1, 3000).Draw(rt, "deadline_us")) * time.Microsecond
		body := func(s *Sim) {
			ctx := context.Background()
			wg := s.NewWaitGroup("workers")
			mu := s.NewMutex("shared")
			for w := range workers {
				wg.Add(1)
				s.Go(fmt.Sprintf("worker-%d", w), func() {
					defer wg.Done()
					for i := 0; i < calls && s.KeepsLeft(KeepOperation) && s.Elapsed() < deadline; i++ {
						if s.Keep(KeepOperation) {
							// A kept call holds a lock shared by every
							// worker for a while: which calls are kept, and
							// the schedule, decide how far each loop gets
							// before its deadline.
							mu.Lock()
							_ = s.Sleep(ctx, time.Microsecond)
							mu.Unlock()
							if s.KeepsLeft(KeepFault) {
								s.Keep(KeepFault)
							}
						}
						_ = s.Sleep(ctx, time.Duration(s.Rand().IntN(3))*time.Microsecond)
					}
				})
			}
			_ = wg.Wait(ctx)
		}
		seed := rapid.Uint64().Draw(rt, "seed")
		rec := Run(withReplay(Config{Seed: seed, MaxSteps: 1 << 22}, protocol.Options{RecordChoices: true}), body)
		require.NoError(rt, rec.Err)
		keeps := protocol.KeepsOfRun(&rec.recorded)
		pct := rapid.IntRange(0, 100).Draw(rt, "drop_pct")
		drops := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "drop_seed"), 0))
		for _, what := range []Keepable{KeepOperation, KeepFault} {
			var drop []int
			for i := range keeps.Of(what) {
				if drops.IntN(100) < pct {
					drop = append(drop, i)
				}
			}
			keeps = keeps.Without(what, drop...)
		}
		// Two edits in a row, as a shrinker makes them: the second starts
		// from the first's recording, under another schedule (a guided one
		// without preemptions), so a worker may not get as far as the
		// recording it runs from did.
		first := Run(withReplay(Config{Seed: seed, MaxSteps: 1 << 22}, protocol.Options{ReplayChoices: true, Choices: rec.recorded.Choices, Keeps: keeps, RecordChoices: true}), body)
		require.NoError(rt, first.Err)
		keeps = protocol.KeepsOfRun(&first.recorded)
		if n := len(keeps.Of(KeepOperation)); n > 0 {
			keeps = keeps.Without(KeepOperation, drops.IntN(n))
		}
		run := Run(withReplay(Config{Seed: seed, Strategy: newGuided(nil), RecordDecisions: true, MaxSteps: 1 << 22}, protocol.Options{ReplayChoices: true, Choices: first.recorded.Choices, Keeps: keeps, RecordChoices: true}), body)
		require.NoError(rt, run.Err)
		again := Run(withReplay(Config{Seed: seed, Strategy: Replay(run.Decisions), MaxSteps: 1 << 22}, protocol.Options{ReplayChoices: true, Choices: run.recorded.Choices, Keeps: protocol.KeepsOfRun(&run.recorded)}), body)
		require.NoError(rt, again.Err, "the recording does not replay its run")
		require.Equal(rt, run.Hash, again.Hash, "the recording's replay is another run")
		require.Equal(rt, run.Steps, again.Steps)
	})
}
