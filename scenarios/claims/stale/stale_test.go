package stale

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

func describe(id int) string { return fmt.Sprintf("read #%d", id) }

// A class's worst staleness is the sample's worst figure, witnessed by the
// read and the commit that made its answer false; every read is a value.
func TestSampleTakesTheWorstReadAndItsCommit(t *testing.T) {
	c := checks.ClassReport{Reads: 3, MaxStaleness: 900 * time.Millisecond,
		Values:  []time.Duration{0, 100 * time.Millisecond, 900 * time.Millisecond},
		Witness: &checks.Witness{Read: checks.Read{ID: 7}, Staleness: 900 * time.Millisecond, L: int64(time.Second), Ended: true, EndCommit: checks.Commit{At: int64(1100 * time.Millisecond)}}}
	s := Sample(c, describe)
	assert.Equal(t, int64(3), s.Of)
	assert.Zero(t, s.Wrong)
	assert.True(t, s.Seen)
	assert.InDelta(t, 0.9, s.Worst, 1e-12)
	assert.Equal(t, []float64{0, 0.1, 0.9}, s.Values)
	assert.Equal(t, "read #7\n  staleness 900ms: the answer was last true at +1s (the commit at +1.1s made it false)", s.Witness)
}

// A phantom answer (never true) is a wrong observation of infinite
// staleness, whatever the other reads measured.
func TestSamplePhantomsAreWrongAndWorst(t *testing.T) {
	c := checks.ClassReport{Reads: 2, MaxStaleness: time.Millisecond, Phantoms: 1,
		PhantomExamples: []checks.Read{{ID: 4}},
		Witness:         &checks.Witness{Read: checks.Read{ID: 3}, Staleness: time.Millisecond}}
	s := Sample(c, describe)
	assert.Equal(t, int64(1), s.Wrong)
	assert.Equal(t, claims.Phantom, s.Worst)
	assert.Equal(t, "1 phantom answers (never true), e.g. read #4", s.Witness)
	assert.Equal(t, "no read", Witness(nil, describe))
}
