package scenarios

import (
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/drainsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// drKeys are the metric keys of the DR worlds: more than one, since the
// drain yields once per key and once after the split.
var drKeys = []string{"GetItem.latency", "GetItem.size", "PutItem.latency"}

// drLinKeys are the keys of the worlds porcupine checks: each recorder owns
// two, and "Query.latency" is left to the drain's yields, so that porcupine
// guesses few record orders (drainsim.Plan.RecorderKeys).
var (
	drLinKeys      = []string{"GetItem.latency", "GetItem.size", "PutItem.latency", "PutItem.size", "Scan.latency", "Scan.size", "Query.latency"}
	drLinOwners    = [][]string{drLinKeys[0:2], drLinKeys[2:4], drLinKeys[4:6]}
	drLinHookKey   = drLinKeys[6]
	drLinRecorders = len(drLinOwners)
)

// drWorld builds a world on s with keys.
func drWorld(s *sim.Sim, keys []string) (*drainsim.World, error) {
	return drainsim.New(s, drainsim.Config{Keys: keys})
}

// drDrainYields groups the world's drain yields by the drain they belong to
// (the one between its two write acquisitions), in drain order.
func drDrainYields(r *drainsim.Report, hooks []drainsim.HookObs) [][]drainsim.HookObs {
	out := make([][]drainsim.HookObs, len(r.Drains))
	for _, h := range hooks {
		for i, d := range r.Drains {
			if d.Swap <= h.Writes && h.Writes < d.Put {
				out[i] = append(out[i], h)
			}
		}
	}
	return out
}

// drVisualization writes porcupine's visualization of an Illegal result to
// the test's artifact directory and returns "; visualization: PATH" for the
// failure report, or "" when there is none.
func drVisualization(t *testing.T, lin drainsim.LinResult, name string) string {
	path, err := lin.WriteVisualization(simtest.ArtifactDir(t), name)
	if err != nil {
		return ""
	}
	return "; visualization: " + path
}
