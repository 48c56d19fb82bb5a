package tw

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/world/netthreads"
	"github.com/windtunnel/windtunnel/sim"
)

// TestEveryCopMetricIsCompared flies a small net-thread world and requires
// each series a cop registered (as a scraper reads them) to be one of the
// names the TW checks compare with the harness's events (metricNames,
// judged by checks.CheckCopMetrics in every TW world; TW-7, TW-8, TW-10).
// A new cop metric with no comparison fails here.
func TestEveryCopMetricIsCompared(t *testing.T) {
	names := metricNames(t)
	var compared []string
	v := reflect.ValueOf(names)
	for i := range v.NumField() {
		if s := v.Field(i).String(); s != "" {
			compared = append(compared, s)
		}
	}
	var w *netthreads.World
	res := sim.Run(sim.Config{Seed: 3, MaxVirtual: twSim.MaxVirtual}, func(s *sim.Sim) {
		cfg := netthreads.Swarm(s.Rand())
		cfg.Threads = cfg.Threads[:1]
		cfg.Conns, cfg.Workers, cfg.Ops = 50, 1, 20
		var err error
		if w, err = netthreads.New(s, cfg); err == nil {
			err = w.Run()
		}
		if err != nil {
			s.Failf("%v", err)
		}
	})
	require.NoError(t, res.Err)
	hs := w.History()
	require.NotEmpty(t, hs)
	var registered []string
	for name := range hs[0].Metrics { //windtunnel:unordered collecting the names, sorted below
		registered = append(registered, name)
	}
	require.NotEmpty(t, registered)
	slices.Sort(registered)
	for _, name := range registered {
		require.Contains(t, compared, name, "series %s is registered but no TW check compares it", name)
	}
}
