package simbus

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Swarm picks the bus faults of one seed, as in swarm testing (Groce et
// al., ISSTA 2012). Each fault kind is on with probability ½ and, when on,
// gets a random intensity. horizon is how long the workload runs; partition
// windows are placed inside it (none if it is not positive).
//
// The intensities, kind by kind. Loss: 1–30% of messages. Delay: 0–1 ms up
// to 1–20 ms, with a tail of 1–10% at 100 ms–2 s. Duplication: 1–20%.
// Reordering: 1–20% held back 10 ms–1 s. Partitions: 1–3 windows of 100 ms
// up to a quarter of the horizon, at most 5 s. Reconnect gaps: about every
// 0.5–20 s, each 10 ms–1 s. Record the result's String in the run header
// with s.Note.
func Swarm(r *rand.Rand, horizon time.Duration) Faults {
	var f Faults
	if on(r) {
		f.LossProb = between(r, 0.01, 0.30)
	}
	if on(r) {
		f.Delay = Delay{
			Min:      msDraw(r, 0, 1),
			Max:      msDraw(r, 1, 20),
			TailProb: between(r, 0.01, 0.10),
			TailMin:  100 * time.Millisecond,
			TailMax:  msDraw(r, 200, 2000),
		}
	}
	if on(r) {
		f.DupProb = between(r, 0.01, 0.20)
	}
	if on(r) {
		f.ReorderProb = between(r, 0.01, 0.20)
		f.ReorderMin, f.ReorderMax = 10*time.Millisecond, msDraw(r, 20, 1000)
	}
	if on(r) && horizon > 0 {
		f.Partitions = partitions(r, horizon)
	}
	if on(r) {
		f.Reconnect = Reconnect{MeanEvery: msDraw(r, 500, 20_000), MinGap: 10 * time.Millisecond, MaxGap: msDraw(r, 20, 1000)}
	}
	return f
}

// partitions draws 1–3 windows inside [0, horizon), dropping any that would
// overlap an earlier one.
func partitions(r *rand.Rand, horizon time.Duration) []Window {
	longest := min(horizon/4, 5*time.Second)
	var ws []Window
	for range 1 + r.IntN(3) {
		d := uniform(r, min(100*time.Millisecond, longest), longest)
		if d <= 0 {
			continue
		}
		start := uniform(r, 0, horizon-d)
		w := Window{Start: start, End: start + d}
		if !slices.ContainsFunc(ws, func(x Window) bool { return x.Start < w.End && w.Start < x.End }) {
			ws = append(ws, w)
		}
	}
	return ws
}

func on(r *rand.Rand) bool { return r.IntN(2) == 1 }

func between(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

func msDraw(r *rand.Rand, lo, hi int) time.Duration {
	return uniform(r, time.Duration(lo)*time.Millisecond, time.Duration(hi)*time.Millisecond)
}
