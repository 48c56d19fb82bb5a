package scenarios

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/drainsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// drFlushFailures injects a failing flush cycle now and then: one cycle in
// ten panics, one in ten returns an error (DR-9's faults, in DR-7's world).
func drFlushFailures(s *sim.Sim) func(int) string {
	return func(int) string {
		switch s.Rand().IntN(10) {
		case 0:
			return "panic"
		case 1:
			return "error"
		}
		return ""
	}
}

// TestDR7_Linearizable is DR-7, the whole world of the issue on the
// production collector: recorders on several keys with out-of-order
// timestamps, the flush worker draining every virtual second (with injected
// panics and errors), a second drainer, a pruner, in-memory queries, and at
// every yield of every drain a record and a whole-key query issued from
// other tasks.
//
// Record, drain, prune and the queries that overlap no drain must be
// linearizable against model.CollectorModel (porcupine, on call/return
// intervals only) and at the collector's lock order (drainsim.Check). The
// queries issued inside a split must reproduce the documented deviation: the
// full history is not linearizable, and each such query returned exactly the
// points recorded since the drain's first swap, which Check labels; any
// other wrong answer is a violation.
func TestDR7_Linearizable(t *testing.T) {
	var ops, linOps, deviations, reproduced, unknown, cycles, failed int
	var artifact, witness string
	sum := simtest.Run(t, simtest.Options{Seeds: 30}, func(s *sim.Sim) error {
		w, err := drWorld(s, drLinKeys)
		if err != nil {
			return err
		}
		wp := &drainsim.WorkerPlan{Period: time.Second, Fail: drFlushFailures(s)}
		w.Run(drainsim.Plan{Preload: 150, Recorders: drLinRecorders, RecordsEach: 30, RecorderKeys: drLinOwners,
			Pause: 200 * time.Millisecond, Drainers: 1, DrainsEach: 2, DrainDelay: 10, Prunes: 2, Queries: 10,
			Worker: wp, Hook: drainsim.HookPlan{Records: true, Key: drLinHookKey, Wait: true, Query: true},
			FinalDrain: true, FinalSnapshot: true})
		cycles += wp.Calls
		failed += len(wp.Injected)
		// Porcupine, outside the collector: every operation but the queries
		// that overlap a drain.
		lin, err := drainsim.Linearizable(w.Initial, w.Ops, func(op drainsim.Op) bool {
			return op.Kind != drainsim.KindQuery || !drainsim.Concurrent(op, w.Ops)
		}, 20*time.Second)
		if err != nil {
			return err
		}
		if lin.Verdict == porcupine.Unknown {
			unknown++
			return fmt.Errorf("DR-7: porcupine ran out of time on %d operations: no verdict", lin.Ops)
		}
		if lin.Verdict != porcupine.Ok {
			return fmt.Errorf("DR-7: porcupine: %d record/drain/prune/query operations (no query overlapping a drain) are not linearizable against the collector model%s",
				lin.Ops, drVisualization(t, lin, fmt.Sprintf("dr7-%#x.html", s.Seed())))
		}
		ops += len(w.Ops)
		linOps += lin.Ops
		// The lock-order replay: the same verdict at the collector's own
		// linearization points, and the label of every query that overlapped
		// a split.
		r := drainsim.Check(w)
		if err := r.Err("DR-7"); err != nil {
			return err
		}
		// The deviation: labelled by Check, and porcupine must reject the
		// history that includes those queries.
		real := 0
		for _, d := range r.Deviations {
			if len(d.Got) < len(d.Want) {
				real++
			}
		}
		deviations += real
		if real == 0 {
			return nil
		}
		full, err := drainsim.Linearizable(w.Initial, w.Ops, nil, 20*time.Second)
		if err != nil {
			return err
		}
		if full.Verdict != porcupine.Illegal {
			return fmt.Errorf("DR-7: %d queries inside a split missed buffered points, yet porcupine finds the full history %s", real, full.Verdict)
		}
		reproduced++
		if artifact == "" {
			d := r.Deviations[0]
			for _, x := range r.Deviations {
				if len(x.Got) < len(x.Want) {
					d = x
					break
				}
			}
			witness = fmt.Sprintf("seed %#x: %s, issued at a yield of a drain, returned %d points, those recorded since the drain's first swap; the model holds %d for that key there",
				s.Seed(), d.Op, len(d.Got), len(d.Want))
			if path, err := full.WriteVisualization(simtest.ArtifactDir(t), "dr7-query-deviation.html"); err == nil {
				artifact = path
			}
		}
		return nil
	})
	ok := sum.Failures == 0 && reproduced > 0
	if sum.Failures == 0 && reproduced == 0 {
		t.Errorf("DR-7: the documented query deviation was not reproduced in %d seeds", sum.Seeds)
	}
	claims.Report(t, claims.Record{
		ID: "DR-7", Verdict: claims.Verdict(ok),
		Measured: fmt.Sprintf("porcupine Ok on %d record/drain/prune/query operations (of %d; queries overlapping a drain left out) and the lock-order replay agrees on all; the deviation reproduced in %d of %d seeds: %d queries inside a split saw only the points recorded since the swap (porcupine Illegal with them), all labelled, none otherwise wrong; %d flush cycles, %d with an injected failure",
			linOps, ops, reproduced, sum.Seeds, deviations, cycles, failed),
		Bound: "linearizable, except the documented query deviation, which must be reproduced", Value: float64(sum.Failures), Unit: "failed seeds", Seeds: sum.Seeds,
		Witness: witness, Artifact: artifact,
		Note: "documented deviation (seed and package doc): while a drain is between its swaps, an in-memory query does not see the swapped-out points; serve durable metrics from the store",
	})
}
