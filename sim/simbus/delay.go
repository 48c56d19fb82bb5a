package simbus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// maxDelay bounds every configured delay: a message held longer than this
// is lost, not late, and should be modelled as loss.
const maxDelay = time.Hour

// Delay is a message's time in flight: uniform in [Min, Max], except that
// with probability TailProb it is uniform in [TailMin, TailMax] instead (a
// slow subscriber, a congested link). The zero Delay delivers at once.
type Delay struct {
	Min, Max         time.Duration
	TailProb         float64
	TailMin, TailMax time.Duration
}

// Validate reports the first problem with d, or nil.
func (d Delay) Validate() error {
	switch {
	case d.Min < 0 || d.Max < 0 || d.TailMin < 0 || d.TailMax < 0:
		return fmt.Errorf("simbus: delays must not be negative, got %+v", d)
	case d.Min > d.Max:
		return fmt.Errorf("simbus: delay Min %v is above Max %v", d.Min, d.Max)
	case d.TailMin > d.TailMax:
		return fmt.Errorf("simbus: delay TailMin %v is above TailMax %v", d.TailMin, d.TailMax)
	case d.Max > maxDelay || d.TailMax > maxDelay:
		return fmt.Errorf("simbus: delays above %v are losses, not delays (got Max %v, TailMax %v)", maxDelay, d.Max, d.TailMax)
	case math.IsNaN(d.TailProb) || d.TailProb < 0 || d.TailProb > 1:
		return fmt.Errorf("simbus: delay TailProb must be in [0, 1], got %v", d.TailProb)
	case d.TailProb > 0 && d.TailMax == 0:
		return fmt.Errorf("simbus: delay TailProb is %v but the tail [%v, %v] is empty", d.TailProb, d.TailMin, d.TailMax)
	}
	return nil
}

// Draw returns one delay drawn from r, and whether it came from the tail.
func (d Delay) Draw(r *rand.Rand) (time.Duration, bool) {
	if d.TailProb > 0 && r.Float64() < d.TailProb {
		return uniform(r, d.TailMin, d.TailMax), true
	}
	return uniform(r, d.Min, d.Max), false
}

func (d Delay) String() string {
	s := fmt.Sprintf("%v–%v", d.Min, d.Max)
	if d.Min == d.Max {
		s = d.Min.String()
	}
	if d.TailProb > 0 {
		s += fmt.Sprintf(", tail %.3g%% of %v–%v", 100*d.TailProb, d.TailMin, d.TailMax)
	}
	return s
}

// uniform draws from [lo, hi] (the modulo bias is below 2^-30 for any
// duration up to maxDelay, far below what a run can observe).
func uniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Uint64()%uint64(hi-lo+1))
}

func validProb(name string, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("simbus: %s must be in [0, 1], got %v", name, p)
	}
	return nil
}
