package checks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/model"
)

// PredictCop says which passes visit a connection, from the TW-1 contract:
// an inactivity timeout of 5.5 s set at 0.5 s, activity at 3.5 s. The wheel
// holds 6 s, visits at tick 7, finds 9 s and re-arms; tick 10 fires it.
func ExamplePredictCop() {
	ops := []checks.CopOp{
		{At: 500 * time.Millisecond, Kind: checks.OpSetInactivity, D: 5500 * time.Millisecond},
		{At: 3500 * time.Millisecond, Kind: checks.OpActivity},
	}
	p, err := checks.PredictCop(4096, time.Second, ops, time.Minute)
	if err != nil {
		panic(err)
	}
	fmt.Println("visits:", p.Visits)
	for _, f := range p.Fired {
		fmt.Printf("%s deadline %v fired at %v\n", f.Kind, f.Deadline, f.At)
	}
	// Output:
	// visits: 2
	// inactivity deadline +9s fired at +10s
}

// Once per ring until due (TW-5): a 20 s timeout on an 8-bucket ring is
// visited at ticks 5, 13 and 21, and fires at 21.
func TestPredictCopWraps(t *testing.T) {
	p, err := checks.PredictCop(8, time.Second, []checks.CopOp{{At: 500 * time.Millisecond, Kind: checks.OpSetActive, D: 20 * time.Second}}, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Visits)
	assert.Equal(t, []checks.TimeoutEvent{{Kind: model.ActiveTimeout, Deadline: checks.At(20500 * time.Millisecond), At: checks.At(21 * time.Second)}}, p.Fired)
	assert.Equal(t, "close", checks.OpClose.String())
}

func TestPredictCopRejects(t *testing.T) {
	_, err := checks.PredictCop(16, time.Second, []checks.CopOp{{At: time.Second, Kind: checks.OpActivity}}, time.Minute)
	assert.Error(t, err, "on the grid")
	_, err = checks.PredictCop(16, time.Second, []checks.CopOp{{At: 2500 * time.Millisecond, Kind: checks.OpActivity}, {At: 1500 * time.Millisecond, Kind: checks.OpActivity}}, time.Minute)
	assert.Error(t, err, "out of order")
	_, err = checks.PredictCop(16, time.Second, []checks.CopOp{{At: 2500 * time.Millisecond, Kind: checks.OpActivity}}, time.Second)
	assert.Error(t, err, "after until")
}
