package simdb_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/sim/simdb"
)

// measured is a quantile of a real server's distribution, as the flights
// measured it (docs/flight.md, "The real servers against the simulated
// model"): the range its figures spanned across flights, and how far the
// model may sit outside that range (a factor), since one flight's
// quantiles move with the machine's load.
type measured struct {
	what    string
	p       float64
	lo, hi  time.Duration
	leeway  float64
	ofTotal bool // the statement's whole time (lag + latency), else its lag
}

// TestDefaultLatencyFitsTheFlights holds DefaultLatency to the real
// server's healthy statements and snapshot lags: the model's quantiles
// (100,000 draws) lie within the flights' range of each, give or take the
// stated leeway, and its ceiling reaches past every healthy p99 a flight
// saw. A model of 0.5–5 ms taken at the issue instant fails it.
func TestDefaultLatencyFitsTheFlights(t *testing.T) {
	us, ms := time.Microsecond, time.Millisecond
	rows := []measured{
		{"statement median", 0.5, 246 * us, 329 * us, 1.25, true},
		{"statement p90", 0.9, 574 * us, 2521 * us, 1, true},
		{"statement p99", 0.99, 2403 * us, 39500 * us, 1, true},
		{"lag median", 0.5, 26 * us, 49 * us, 1.25, false},
		{"lag p99", 0.99, 829 * us, 3527 * us, 1, false},
	}
	r := newRand(1)
	var total, lags []time.Duration
	for range 100_000 {
		lag, d, slow := simdb.DefaultLatency.Sample(r)
		if slow {
			t.Fatalf("the default model has no slow tail of faults")
		}
		total, lags = append(total, lag+d), append(lags, lag)
	}
	slices.Sort(total)
	slices.Sort(lags)
	q := func(s []time.Duration, p float64) time.Duration { return s[int(p*float64(len(s)-1))] }
	for _, p := range []float64{0, 0.1, 0.5, 0.9, 0.95, 0.99, 1} {
		t.Logf("model p%g: statement %v, lag %v", 100*p, q(total, p), q(lags, p))
	}
	for _, m := range rows {
		s := lags
		if m.ofTotal {
			s = total
		}
		got := q(s, m.p)
		lo, hi := time.Duration(float64(m.lo)/m.leeway), time.Duration(float64(m.hi)*m.leeway)
		assert.True(t, got >= lo && got <= hi, "%s: model %v, flights %v–%v (accepted %v–%v)", m.what, got, m.lo, m.hi, lo, hi)
	}
	assert.GreaterOrEqual(t, total[len(total)-1], 39500*us, "the healthy tail reaches the largest healthy p99 a flight saw")
	assert.GreaterOrEqual(t, lags[len(lags)-1], 87600*us, "the lag's tail reaches the largest lag a flight saw on its machine")
	assert.Less(t, q(total, 0.5), ms, "a healthy statement's median is well under a millisecond")
}
