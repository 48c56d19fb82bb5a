package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/rt/rtconform"
	"github.com/windtunnel/windtunnel/sim"
)

// TestSimConforms runs the rt conformance suite on the simulator, over
// several seeds so different interleavings are covered, with exact virtual
// durations.
func TestSimConforms(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rtconform.Run(t, rtconform.Env{
			Name:  "sim",
			Exact: true,
			Run: func(t *testing.T, body func(rt.Runtime)) {
				res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) { body(s) })
				require.NoError(t, res.Err, "seed %d", seed)
			},
		})
	}
}
