package dr

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/drain"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// everyPath is a plan that drives every path a collector or flush-worker
// series counts: records accepted and refused (invalid, and a full buffer
// the preload nearly fills), prunes, concurrent drains with records during
// their splits, and a flush worker whose cycles panic, fail or drain. It
// ends with points buffered, so the gauge of buffered points is compared
// off zero.
func everyPath(s *sim.Sim) (drain.Config, drain.Plan) {
	const preload = 40
	cfg := drain.Config{Keys: keys, Collector: collector.Config{MaxBufferedPoints: int64(preload*len(keys) + 12)}}
	return cfg, drain.Plan{Preload: preload, Recorders: 3, RecordsEach: 15, Pause: 200 * time.Millisecond,
		Drainers: 2, DrainsEach: 2, DrainDelay: 10, Prunes: 2, Refusals: 6, Full: true,
		Worker: &drain.WorkerPlan{Period: time.Second, Fail: flushFailures(s)},
		Hook:   drain.HookPlan{Records: true, Wait: true}}
}

// metricSeries are the series the collector and its flush worker register,
// as the world's account keys them: each must be driven off zero by some
// seed of TestDR1_EveryMetricOnEveryPath (a probe each).
var metricSeries = []string{
	collector.MetricRecorded, collector.MetricRejected + `{reason="invalid"}`, collector.MetricRejected + `{reason="full"}`,
	collector.MetricBuffered, collector.MetricPruned, collector.MetricDrains, collector.MetricDrained,
	collector.MetricMovedUnderLock, collector.MetricLockHoldMaxNs,
	collector.MetricWorkerCycles + `{worker="metrics_flush"}`, collector.MetricWorkerErrors + `{worker="metrics_flush"}`,
}

func pathProbe(series string) string { return "dr/metric-path/" + series }

// TestDR1_EveryMetricOnEveryPath compares every series the collector and
// its flush worker register with the drain world's own account, on a
// workload that drives every path each one counts. That is records
// accepted and refused as invalid or as full, prunes, concurrent drains
// with records between their swaps, and flush cycles that panic, fail or
// drain. The world's account comes from the answers the checkers hold to
// the model, the lock order and the probe's clock (drain.World.Account).
// Each comparison names its claim: DR-1 (points recorded, refused,
// buffered, drained), DR-2 (moved under the lock), DR-4 (drains), DR-8 (the
// longest write-lock hold, as the probe's clock ran during each hold),
// DR-9 (worker cycles and errors), DR-10 (pruned). Every DR check flies
// the same comparison (drain.Check); this one makes sure each path is
// driven (a probe per series), so a counter that skips one of its cases
// cannot pass unseen.
func TestDR1_EveryMetricOnEveryPath(t *testing.T) {
	var probes []claims.Probe
	for _, name := range metricSeries {
		probes = append(probes, probe(pathProbe(name), "a seed ended with "+name+" off zero, equal to the world's account", 1))
	}
	claims.Run(t, claims.Check[int]{
		Claim: "DR-1", Options: simtest.Options{Seeds: 10},
		Fly: func(s *sim.Sim, _ claims.Bound) (int, error) {
			cfg, p := everyPath(s)
			w, r, err := fly(s, cfg, p, "DR-1", "DR-2", "DR-4", "DR-8", "DR-9", "DR-10")
			if r == nil || err != nil {
				return 0, err
			}
			acc := w.Account(r)
			for _, name := range metricSeries {
				if acc[name].Value != 0 {
					s.Probe(pathProbe(name))
				}
			}
			return len(acc), nil
		},
		Sample: func(n int) claims.Sample { return claims.Sample{Of: int64(n), Seen: true} },
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("every collector and flush-worker series (%d) equal to the world's account at the end of each seed, each driven off zero by some seed; %d seeds failed", len(metricSeries), o.Failed)
		},
		Probes: probes,
	})
}

// TestEveryCollectorMetricIsCompared flies the every-path world once and
// requires each series the collector and its flush worker registered to be
// one the world's account predicts: a new metric with no comparison fails
// here (and in every DR check, as a harness violation).
func TestEveryCollectorMetricIsCompared(t *testing.T) {
	var registered []string
	var account map[string]drain.Expected
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		cfg, p := everyPath(s)
		w, r, err := fly(s, cfg, p)
		if err != nil {
			s.Failf("%v", err)
			return
		}
		for name := range w.Registry.Snapshot() { //windtunnel:unordered collecting the names, sorted after the run
			registered = append(registered, name)
		}
		account = w.Account(r)
	})
	require.NoError(t, res.Err)
	require.NotEmpty(t, registered)
	slices.Sort(registered)
	for _, name := range registered {
		want, ok := account[name]
		require.True(t, ok, "series %s is registered but no DR check compares it", name)
		require.NotEmpty(t, want.Claim, "series %s is compared under no claim", name)
	}
}
