package simdb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// DefaultLatency is a PostgreSQL statement on a healthy loopback server, fit
// to what the flight measured on the real one (docs/flight.md, "The real
// servers against the simulated model"): a body of 80–400 µs, a tail of 15%
// log-uniform up to 40 ms, and a snapshot lag of 20–60 µs whose 2% tail
// reaches 100 ms. The slow tail of faults is off: Swarm adds it on the seeds
// that switch it on.
var DefaultLatency = Latency{
	BaseMin: 80 * time.Microsecond, BaseMax: 400 * time.Microsecond,
	TailProb: 0.15, TailMax: 40 * time.Millisecond,
	LagMin: 20 * time.Microsecond, LagMax: 60 * time.Microsecond,
	LagTailProb: 0.02, LagTailMax: 100 * time.Millisecond,
}

// maxSlowLatency bounds the slow tail: a statement that takes longer than
// this is a hang, not a slow read, and would only burn virtual time.
const maxSlowLatency = time.Hour

// Latency is the time a statement or write takes after it starts: uniform in
// [BaseMin, BaseMax], except that with probability SlowProb it is uniform in
// [SlowMin, SlowMax] instead (the slow tail: lock waits, checkpoints, cold
// caches). The slow tail is what stretches a load across a write and its
// invalidation (OC-2, MS-2), so it is modelled separately from the base, as
// a fault a shrinker may drop.
//
// The healthy model has two more parts, neither of them a fault. With
// probability TailProb a statement's base latency lands in the healthy tail
// (a loaded machine's scheduling), log-uniform in [BaseMax, TailMax]: a
// tail that spans decades, as a real one does. A read's lag is the time
// from its issue to its snapshot: a server starts a statement, and takes a
// READ COMMITTED snapshot, some time after the client sends it. It is
// uniform in [LagMin, LagMax], and with probability LagTailProb log-uniform
// in [LagMax, LagTailMax]; the lag's tail is drawn from the same coin as
// the latency's (a stalled machine delays both). The lag is spent before
// the snapshot and the latency after it.
//
// The zero Latency is valid and means every statement is instantaneous.
type Latency struct {
	BaseMin, BaseMax time.Duration
	SlowProb         float64
	SlowMin, SlowMax time.Duration

	TailProb       float64
	TailMax        time.Duration
	LagMin, LagMax time.Duration
	LagTailProb    float64
	LagTailMax     time.Duration
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
	return l.validateHealthy()
}

// validateHealthy checks the healthy tail and the snapshot lag.
func (l Latency) validateHealthy() error {
	switch {
	case math.IsNaN(l.TailProb) || l.TailProb < 0 || l.TailProb > 1:
		return fmt.Errorf("simdb: latency TailProb must be in [0, 1], got %v", l.TailProb)
	case math.IsNaN(l.LagTailProb) || l.LagTailProb < 0 || l.LagTailProb > 1:
		return fmt.Errorf("simdb: latency LagTailProb must be in [0, 1], got %v", l.LagTailProb)
	case l.LagMin < 0 || l.LagMin > l.LagMax:
		return fmt.Errorf("simdb: latency lag [%v, %v] must be a non-negative range", l.LagMin, l.LagMax)
	case l.TailProb > 0 && l.TailMax < l.BaseMax:
		return fmt.Errorf("simdb: latency TailMax %v is below BaseMax %v", l.TailMax, l.BaseMax)
	case l.LagTailProb > 0 && l.LagTailMax < l.LagMax:
		return fmt.Errorf("simdb: latency LagTailMax %v is below LagMax %v", l.LagTailMax, l.LagMax)
	case l.TailMax > maxSlowLatency || l.LagTailMax > maxSlowLatency || l.LagMax > maxSlowLatency:
		return fmt.Errorf("simdb: latency tail %v or lag %v–%v is above the %v limit", l.TailMax, l.LagMax, l.LagTailMax, maxSlowLatency)
	}
	return nil
}

// Draw returns one latency drawn from r, and whether it came from the slow
// tail. It draws the same number of values from r whatever the outcome, so
// that turning the tail on or off does not shift the rest of a seed's
// random stream more than necessary.
func (l Latency) Draw(r *rand.Rand) (d time.Duration, slow bool) {
	_, d, slow = l.Sample(r)
	return d, slow
}

// Sample is Draw with the statement's snapshot lag: the time from its
// issue to its snapshot, spent before the latency d.
func (l Latency) Sample(r *rand.Rand) (lag, d time.Duration, slow bool) {
	x := l.draw(r)
	if x.slow {
		return x.lag, x.tail, true
	}
	return x.lag, x.base, false
}

// drawn is one statement's draws: its lag, its base latency and, when the
// draw picked the slow tail, the slow one.
type drawn struct {
	lag, base, tail time.Duration
	slow            bool
}

// draw makes Draw's draws and returns every reading of them. A caller that
// drops the slow tail as a fault (sim.Keep) falls back to the base latency
// without drawing again, so the rest of the world's stream stays where it
// was. A model with no healthy tail and no lag draws two values, one with
// either draws four.
func (l Latency) draw(r *rand.Rand) drawn {
	t := r.Float64()
	v := r.Uint64()
	var x drawn
	u, w := 1.0, uint64(0)
	if l.TailProb > 0 || l.LagTailProb > 0 || l.LagMax > 0 {
		u, w = r.Float64(), r.Uint64()
	}
	x.base, x.lag = pick(v, l.BaseMin, l.BaseMax), pick(w, l.LagMin, l.LagMax)
	if u < l.TailProb {
		x.base = pickLog(v, l.BaseMax, l.TailMax)
	}
	if u < l.LagTailProb {
		x.lag = pickLog(w, l.LagMax, l.LagTailMax)
	}
	if l.SlowProb > 0 && t < l.SlowProb {
		x.tail, x.slow = pick(v, l.SlowMin, l.SlowMax), true
	}
	return x
}

// pick maps the drawn value v into [lo, hi].
func pick(v uint64, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(v%uint64(hi-lo+1))
}

// pickLog maps the drawn value v into [lo, hi], log-uniformly: each
// decade of the range is as likely as the next. A range from 0 starts at
// 1 ns.
func pickLog(v uint64, lo, hi time.Duration) time.Duration {
	lo = max(lo, 1)
	if hi <= lo {
		return lo
	}
	f := float64(v>>11) / (1 << 53) // [0, 1)
	d := time.Duration(float64(lo) * math.Pow(float64(hi)/float64(lo), f))
	return min(max(d, lo), hi)
}

// String describes l for a run header, e.g. "80µs–400µs, tail 15% to 40ms,
// snapshot lag 20µs–60µs (tail 2% to 100ms), slow 2% of 200ms–3s".
func (l Latency) String() string {
	s := fmt.Sprintf("%v–%v", l.BaseMin, l.BaseMax)
	if l.BaseMin == l.BaseMax {
		s = l.BaseMin.String()
	}
	if l.TailProb > 0 {
		s += fmt.Sprintf(", tail %.3g%% to %v", 100*l.TailProb, l.TailMax)
	}
	if l.LagMax > 0 {
		s += fmt.Sprintf(", snapshot lag %v–%v", l.LagMin, l.LagMax)
		if l.LagTailProb > 0 {
			s += fmt.Sprintf(" (tail %.3g%% to %v)", 100*l.LagTailProb, l.LagTailMax)
		}
	}
	if l.SlowProb > 0 {
		s += fmt.Sprintf(", slow %.3g%% of %v–%v", 100*l.SlowProb, l.SlowMin, l.SlowMax)
	}
	return s
}
