package drain

import (
	"math/rand/v2"
	"time"

	"github.com/windtunnel/windtunnel/sim"
)

// Stamps draws metric timestamps the way a server produces them: in arrival
// order, one Spacing apart, but out of order by up to Jitter either way
// (requests finish out of order), and now and then (LateProb) up to Late
// older than that (a late arrival). Timestamps are whole multiples of
// Spacing, so equal timestamps occur and a cutoff can fall exactly on a point
// (DR-1's boundary).
type Stamps struct {
	Base     int64         // Unix ns of arrival 0
	Spacing  time.Duration // between arrivals
	Jitter   time.Duration // uniform ± around the arrival
	LateProb float64       // probability of a late arrival
	Late     time.Duration // how much older a late arrival can be

	n int64
}

// DefaultStamps starts at the simulator's epoch: 1 ms apart, ±20 ms of
// jitter, 2% of points up to 5 s late.
func DefaultStamps() Stamps {
	return Stamps{Base: sim.Epoch.UnixNano(), Spacing: time.Millisecond, Jitter: 20 * time.Millisecond,
		LateProb: 0.02, Late: 5 * time.Second}
}

// Next returns the next timestamp, drawn from r.
func (g *Stamps) Next(r *rand.Rand) int64 {
	g.n++
	sp := max(int64(g.Spacing), 1)
	ts := g.Base + g.n*sp
	if j := int64(g.Jitter) / sp; j > 0 {
		ts += (r.Int64N(2*j+1) - j) * sp
	}
	if l := int64(g.Late) / sp; l > 0 && r.Float64() < g.LateProb {
		ts -= (1 + r.Int64N(l)) * sp
	}
	return ts
}

// Arrivals returns how many timestamps were drawn.
func (g *Stamps) Arrivals() int64 { return g.n }

// At returns the nominal timestamp of arrival n (no jitter).
func (g *Stamps) At(n int64) int64 { return g.Base + n*max(int64(g.Spacing), 1) }
