package lf

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestLFProgramsStayWellFormedWhenShrunk: the LF-4 and LF-5 workloads let a
// shrinker drop any start, enter and log (sim.Keep), each with the close or
// exit that pairs with it, and what is left is still a well-formed program
// whose check holds on the correct code; dropping everything leaves no
// operation at all. Before, only logs were droppable, so an LF
// counterexample could not shrink below the hundreds of span operations
// every program made (issue 13: 183 and 1,920 operations left).
func TestLFProgramsStayWellFormedWhenShrunk(t *testing.T) {
	zero := claims.Get("LF-5", "target path locks per span enter or exit").Int()
	perFilter := claims.Get("LF-5", "span-aware read locks per span enter or exit").Int() / 2
	programs := []struct {
		name string
		fly  func(s *sim.Sim) error
	}{
		{"LF-4", func(s *sim.Sim) error { _, err := flyLF4(s, 4, 6); return err }},
		{"LF-5", func(s *sim.Sim) error { _, err := flyLF5(s, zero, perFilter); return err }},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			body := func(s *sim.Sim) {
				if err := p.fly(s); err != nil {
					s.Failf("%v", err)
				}
			}
			const seed = 3
			rec := sim.Run(simtest.RecordChoices(sim.Config{Seed: seed}), body)
			require.NoError(t, rec.Err)
			keeps := simtest.KeepsOf(rec)
			require.Greater(t, len(keeps.Operations), 100, "every start, enter and log asks Keep")
			replay := func(k simtest.Keeps) sim.Result {
				return sim.Run(simtest.ReplayChoices(sim.Config{Seed: seed}, rec, k), body)
			}

			none := replay(simtest.Keeps{}) // false past the list's end: every operation dropped
			require.NoError(t, none.Err, "the program without any operation")
			assert.Zero(t, none.Operations, "every operation of the program can be dropped")

			// Random subsets at several densities, as delta debugging
			// makes them: every one a program whose check holds.
			rng := rand.New(rand.NewPCG(seed, 13))
			for i := range 24 {
				k := simtest.Keeps{Operations: make([]bool, len(keeps.Operations))}
				density := float64(i%4+1) / 5
				for j := range k.Operations {
					k.Operations[j] = rng.Float64() < density
				}
				r := replay(k)
				require.NoError(t, r.Err, "subset %d (keeping %.0f%% of the operations)", i, density*100)
				assert.Less(t, r.Operations, rec.Operations, "subset %d dropped operations", i)
			}
		})
	}
}
