package scenarios

import (
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/drainsim"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// TestDR5_PutBackOrder is DR-5: points recorded during the split land
// after the kept ones. Every yield of a drain records, on an existing key, a
// point older than any cutoff (it was not buffered at the swap, so it must
// stay, and after the key's kept points), while two recorders add more; the
// drain then snapshots at once. Replayed in lock order (drainsim.Check),
// every snapshot, query and later drain must read each key as its kept
// points in recorded order followed by the points recorded during the split
// in the order their records took the lock.
func TestDR5_PutBackOrder(t *testing.T) {
	var drains, during, reads int64
	sum := simtest.Run(t, simtest.Options{Seeds: 40}, func(s *sim.Sim) error {
		w, err := drWorld(s, drKeys)
		if err != nil {
			return err
		}
		w.Run(drainsim.Plan{Preload: 1_500, Recorders: 2, RecordsEach: 30, Drainers: 1, DrainsEach: 3, DrainDelay: 20,
			SnapshotAfterDrain: true, Queries: 10, Hook: drainsim.HookPlan{Records: true, Wait: true},
			FinalDrain: true, FinalSnapshot: true})
		r := drainsim.Check(w)
		if err := r.Err("DR-5"); err != nil {
			return err
		}
		for _, f := range r.Drains {
			if f.Op.In.Cutoff == drainsim.Everything {
				continue
			}
			drains++
			during += f.Op.Stats.RecordedDuringSplit
			if f.Op.Stats.Kept == 0 || f.Op.Stats.RecordedDuringSplit == 0 {
				return fmt.Errorf("DR-5: %s kept %d points and had %d recorded during its split: nothing to order", f.Op, f.Op.Stats.Kept, f.Op.Stats.RecordedDuringSplit)
			}
		}
		reads += int64(r.Reads - r.ReadsInSplit)
		return nil
	})
	claims.Report(t, claims.Record{
		ID: "DR-5", Verdict: claims.Verdict(sum.Failures == 0),
		Measured: fmt.Sprintf("after %d drains with %d points recorded during their splits (older than the cutoff, on keys with kept points), all %d snapshots, queries and later drains read every key as its kept points, then those, in lock order",
			drains, during, reads),
		Bound: "kept points first, then the points recorded during the split, in order", Value: float64(sum.Failures), Unit: "failed seeds", Seeds: sum.Seeds,
	})
}
