package claims

// Probe is a rare event a check's seeds must reach at least Min times in
// all (sim.Sim.Probe counts it where the world or check observes it).
// Min is declared for the check's default seed count: a run with fewer
// seeds (-sim.seeds=2 in make determinism) must reach it at the same rate,
// Min × seeds / default rounded up, and never less than once; a run with
// more seeds must still reach Min.
type Probe struct {
	Name string // as passed to sim.Sim.Probe
	What string // in words
	Min  int64
}

// probeMin is the number of times seeds seeds must reach a probe declared
// as min over defaultSeeds seeds: the same rate, rounded up, at least once.
func probeMin(min int64, seeds, defaultSeeds int) int64 {
	if min <= 0 {
		return 0
	}
	if defaultSeeds <= 0 || seeds >= defaultSeeds {
		return min
	}
	scaled := (min*int64(seeds) + int64(defaultSeeds) - 1) / int64(defaultSeeds)
	return max(scaled, 1)
}
