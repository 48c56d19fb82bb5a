package simdb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// DefaultLatency is a plausible PostgreSQL statement latency on a warm,
// healthy server: uniform between 0.5 ms and 5 ms, no slow tail. Swarm adds
// the tail on the seeds that switch it on.
var DefaultLatency = Latency{BaseMin: 500 * time.Microsecond, BaseMax: 5 * time.Millisecond}

// maxSlowLatency bounds the slow tail: a statement that takes longer than
// this is a hang, not a slow read, and would only burn virtual time.
const maxSlowLatency = time.Hour

// Latency is the time a statement or write takes after it starts: uniform in
// [BaseMin, BaseMax], except that with probability SlowProb it is uniform in
// [SlowMin, SlowMax] instead (the slow tail: lock waits, checkpoints, cold
// caches). The slow tail is what stretches a load across a write and its
// invalidation (OC-2, MS-2), so it is modelled separately from the base.
//
// The zero Latency is valid and means every statement is instantaneous.
type Latency struct {
	BaseMin, BaseMax time.Duration
	SlowProb         float64
	SlowMin, SlowMax time.Duration
}

// Validate reports the first problem with l, or nil.
func (l Latency) Validate() error {
	switch {
	case l.BaseMin < 0 || l.BaseMax < 0:
		return fmt.Errorf("simdb: latency base must not be negative, got [%v, %v]", l.BaseMin, l.BaseMax)
	case l.BaseMin > l.BaseMax:
		return fmt.Errorf("simdb: latency BaseMin %v is above BaseMax %v", l.BaseMin, l.BaseMax)
	case math.IsNaN(l.SlowProb) || l.SlowProb < 0 || l.SlowProb > 1:
		return fmt.Errorf("simdb: latency SlowProb must be in [0, 1], got %v", l.SlowProb)
	case l.SlowMin < 0 || l.SlowMax < 0:
		return fmt.Errorf("simdb: latency slow tail must not be negative, got [%v, %v]", l.SlowMin, l.SlowMax)
	case l.SlowMin > l.SlowMax:
		return fmt.Errorf("simdb: latency SlowMin %v is above SlowMax %v", l.SlowMin, l.SlowMax)
	case l.SlowMax > maxSlowLatency:
		return fmt.Errorf("simdb: latency SlowMax %v is above the %v limit", l.SlowMax, maxSlowLatency)
	case l.BaseMax > maxSlowLatency:
		return fmt.Errorf("simdb: latency BaseMax %v is above the %v limit", l.BaseMax, maxSlowLatency)
	case l.SlowProb > 0 && l.SlowMax == 0:
		return fmt.Errorf("simdb: latency SlowProb is %v but the slow tail [%v, %v] is empty", l.SlowProb, l.SlowMin, l.SlowMax)
	}
	return nil
}

// Draw returns one latency drawn from r, and whether it came from the slow
// tail. It draws the same number of values from r whatever the outcome, so
// that turning the tail on or off does not shift the rest of a seed's
// random stream more than necessary.
func (l Latency) Draw(r *rand.Rand) (d time.Duration, slow bool) {
	base, tail, slow := l.draw(r)
	if slow {
		return tail, true
	}
	return base, false
}

// draw makes Draw's two draws and returns both readings of them: the base
// latency and, when the draw picked the slow tail, the slow one. A caller
// that drops the slow tail as a fault (sim.Keep) falls back to the base
// latency without drawing again, so the rest of the world's stream stays
// where it was.
func (l Latency) draw(r *rand.Rand) (base, tail time.Duration, slow bool) {
	t := r.Float64()
	v := r.Uint64()
	base = pick(v, l.BaseMin, l.BaseMax)
	if l.SlowProb > 0 && t < l.SlowProb {
		return base, pick(v, l.SlowMin, l.SlowMax), true
	}
	return base, 0, false
}

// pick maps the drawn value v into [lo, hi].
func pick(v uint64, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(v%uint64(hi-lo+1))
}

// String describes l for a run header, e.g. "0.5ms–5ms, slow 2% of 200ms–3s".
func (l Latency) String() string {
	s := fmt.Sprintf("%v–%v", l.BaseMin, l.BaseMax)
	if l.BaseMin == l.BaseMax {
		s = l.BaseMin.String()
	}
	if l.SlowProb > 0 {
		s += fmt.Sprintf(", slow %.3g%% of %v–%v", 100*l.SlowProb, l.SlowMin, l.SlowMax)
	}
	return s
}
