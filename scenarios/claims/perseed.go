package claims

import "slices"

// PerSeed keeps one value per seed, in the order seeds first reported. A
// seed can run more than once in one test: the harness re-runs a failing
// seed to write its artifacts, and -sim.determinism runs every seed twice.
// Runs of one seed are identical, so keeping the last value (rather than
// adding each run to a total) counts every seed exactly once.
type PerSeed[T any] struct {
	vals  map[uint64]T
	order []uint64
}

// Set records seed's value, replacing an earlier run's.
func (p *PerSeed[T]) Set(seed uint64, v T) {
	if p.vals == nil {
		p.vals = map[uint64]T{}
	}
	if _, ok := p.vals[seed]; !ok {
		p.order = append(p.order, seed)
	}
	p.vals[seed] = v
}

// Len is the number of seeds recorded.
func (p *PerSeed[T]) Len() int { return len(p.order) }

// Values returns the values in the order the seeds first reported.
func (p *PerSeed[T]) Values() []T {
	out := make([]T, 0, len(p.order))
	for _, s := range p.order {
		out = append(out, p.vals[s])
	}
	return out
}

// Seeds returns the seeds in the order they first reported.
func (p *PerSeed[T]) Seeds() []uint64 { return slices.Clone(p.order) }

// Each calls f for every seed's value, in the order seeds first reported.
func (p *PerSeed[T]) Each(f func(seed uint64, v T)) {
	for _, s := range p.order {
		f(s, p.vals[s])
	}
}

// MaxOver combines one Max per seed (get picks it from the seed's value)
// into the Max over all seeds, keeping the earliest seed's witness on ties.
func MaxOver[T any](p *PerSeed[T], get func(T) Max) Max {
	var m Max
	p.Each(func(_ uint64, v T) {
		if l := get(v); l.Seen() {
			m.Observe(l.Value, func() string { return l.Witness })
		}
	})
	return m
}
