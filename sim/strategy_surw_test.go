package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func surwProfileOf(t *testing.T, main func(*Sim)) *SURWProfile {
	t.Helper()
	st, profile := ProfileSURW()
	require.NoError(t, Run(Config{Seed: 1, Strategy: st}, main).Err)
	return profile()
}

func onlyYields(obj string) bool { return obj == AnyObject }

// uneven has task a make three selected steps (each resumes from a Yield)
// and task b one, and records the order: b's step falls in one of four
// places among a's. onlyYields selects them and nothing else (not the wait
// group's steps).
func uneven(order *[]byte) func(*Sim) {
	return func(s *Sim) {
		wg := s.NewWaitGroup("ab")
		wg.Add(2)
		for _, g := range []struct {
			name  byte
			steps int
		}{{'a', 3}, {'b', 1}} {
			s.Go(string(g.name), func() {
				defer wg.Done()
				for range g.steps {
					s.Yield()
					*order = append(*order, g.name)
				}
			})
		}
		_ = wg.Wait(bg)
	}
}

// chiSquare of the counts of b's place against the uniform distribution.
func chiSquare(t *testing.T, mk func() Strategy, runs int) (float64, [4]int) {
	var places [4]int
	for seed := range uint64(runs) {
		var order []byte
		require.NoError(t, Run(Config{Seed: seed, Strategy: mk(), Selected: onlyYields}, uneven(&order)).Err)
		require.Len(t, order, 4)
		places[strings.IndexByte(string(order), 'b')]++
	}
	want := float64(runs) / 4
	x2 := 0.0
	for _, n := range places {
		x2 += (float64(n) - want) * (float64(n) - want) / want
	}
	return x2, places
}

// TestSURWSamplesSelectedInterleavingsUniformly: over the four interleavings
// of a's three selected steps and b's one, SURW's distribution is uniform
// (chi-square under 11.34, the 1% point of 3 degrees of freedom) while
// random walk's is not (b goes first half the time).
func TestSURWSamplesSelectedInterleavingsUniformly(t *testing.T) {
	var order []byte
	st, profile := ProfileSURW()
	require.NoError(t, Run(Config{Seed: 1, Strategy: st, Selected: onlyYields}, uneven(&order)).Err)
	prof := profile()
	assert.Equal(t, int64(3), prof.Estimate("a"))
	assert.Equal(t, int64(1), prof.Estimate("b"))
	const runs = 2000
	surwX2, surwPlaces := chiSquare(t, func() Strategy { return SURW(prof) }, runs)
	walkX2, walkPlaces := chiSquare(t, RandomWalk, runs)
	t.Logf("b's place among a's steps, %d runs: surw %v (chi-square %.1f), random %v (chi-square %.1f)", runs, surwPlaces, surwX2, walkPlaces, walkX2)
	assert.Less(t, surwX2, 11.34)
	assert.Greater(t, walkX2, 11.34)
	assert.Less(t, surwX2, walkX2)
}

// TestSURWSelectedNamesTheEvents: a world that selects only one lock's
// operations makes every other step unselected; the profile counts only
// the selected ones.
func TestSURWSelectedNamesTheEvents(t *testing.T) {
	sel := func(obj string) bool { return strings.HasPrefix(obj, "mutex m#") }
	st, profile := ProfileSURW()
	require.NoError(t, Run(Config{Seed: 1, Strategy: st, Selected: sel}, lockers).Err)
	p := profile()
	assert.Greater(t, p.Estimate("m1"), int64(20), "m1's Lock and Unlock steps on m are selected")
	assert.Equal(t, int64(1), p.Estimate("n1"), "n1's steps on n are not")
	// Every seed still runs to the end under SURW with that selection.
	for seed := range uint64(20) {
		require.NoError(t, Run(Config{Seed: seed, Strategy: SURW(p), Selected: sel}, lockers).Err)
	}
}
