package dr

import (
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/drain"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// chunkSeed is what the inspections of one DR-6 seed saw.
type chunkSeed struct {
	largest                           int
	largestAt                         string
	observed, boundsWrong             int64
	records, maxRealloc, sections     int
	straddling, splitKept, movedWhole int64
	notMovedWhole, drains             int64
}

// TestDR6_ChunkLayoutFromOutside checks DR-6: chunks hold at most 1,024
// points (the table's bound) with their oldest and newest timestamps. A
// record reallocates at most one chunk; only chunks straddling the cutoff
// are split. Keys start with three chunks of out-of-order points each.
// Recorders, a drainer and a pruner then run at once, and every drain yield
// records and waits.
//
// The probe inspects the collector's chunks at every acquisition and
// release of the write lock (a walk over its buffered map from outside its
// code). The largest chunk seen is the figure, which must reach the bound
// exactly (the preload fills chunks) and never pass it. Every chunk's
// stored bounds must be its points' bounds. No record may reallocate or
// open more than one chunk. Every drain's put-back must install the
// chunks that lay entirely at or after the cutoff in their own arrays, the
// only new ones being the kept halves of the chunks that straddled it. No
// verdict here rests on the collector's own audit (CheckInvariants, which
// judges by the collector's own constant) or on its account of each drain,
// which is only cross-checked.
func TestDR6_ChunkLayoutFromOutside(t *testing.T) {
	claims.Run(t, claims.Check[chunkSeed]{
		Claim: "DR-6", Bound: "chunk points", Options: simtest.Options{Seeds: 12},
		Fly: func(s *sim.Sim, b claims.Bound) (chunkSeed, error) {
			var out chunkSeed
			_, r, err := fly(s, drain.Config{Keys: keys, Inspect: true},
				drain.Plan{Preload: 3 * int(b.Int()), Recorders: 3, RecordsEach: 40,
					Drainers: 1, DrainsEach: 3, DrainDelay: 30, Prunes: 2,
					Hook: drain.HookPlan{Records: true, Wait: true}, FinalDrain: true}, "DR-6")
			if r == nil {
				return out, err
			}
			c := r.Chunks
			out = chunkSeed{largest: c.Largest, largestAt: c.LargestAt, observed: c.Observed, boundsWrong: c.BoundsWrong,
				records: c.Records, maxRealloc: c.MaxReallocated, sections: c.Sections}
			for _, f := range r.Drains {
				if o := f.Outside; o != nil {
					out.drains++
					out.straddling += o.Straddling
					out.splitKept += o.SplitKept
					out.movedWhole += o.MovedWhole
					out.notMovedWhole += o.NotMovedWhole
				}
			}
			if err == nil && int64(c.Largest) != b.Int() {
				err = fmt.Errorf("DR-6: the largest chunk seen held %d points: the workload never filled a chunk to the bound %s, so it cannot tell the bound from a smaller one", c.Largest, b)
			}
			return out, err
		},
		Sample: func(x chunkSeed) claims.Sample {
			tally, peak := map[string]int64{}, map[string]float64{}
			tally["observed"] += int64(x.observed)
			tally["sections"] += int64(x.sections)
			tally["records"] += int64(x.records)
			peak["maxRealloc"] = max(peak["maxRealloc"], float64(x.maxRealloc))
			tally["drains"] += int64(x.drains)
			tally["straddling"] += int64(x.straddling)
			tally["splitKept"] += int64(x.splitKept)
			tally["movedWhole"] += int64(x.movedWhole)
			smp := claims.Sample{Worst: float64(x.largest), Seen: x.observed > 0, Of: x.observed,
				Witness: fmt.Sprintf("a chunk of %d points, %s", x.largest, x.largestAt)}
			for range x.boundsWrong + x.notMovedWhole {
				smp.Wrongly(func() string {
					return fmt.Sprintf("%d chunks with wrong stored bounds, %d points of chunks at or after a cutoff not put back in their arrays", x.boundsWrong, x.notMovedWhole)
				})
			}
			smp.Tally, smp.Peak = tally, peak
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("the largest of %d chunk observations at %d inspected lock sections held %s points; %d wrong; %d records reallocated or opened at most %d chunk each; %d drains split %d straddling chunks (their kept halves: %d points) and put %d kept points back in their own arrays",
				o.Tally["observed"], o.Tally["sections"], o.WorstText(), o.Wrong, o.Tally["records"], int64(o.Peak["maxRealloc"]), o.Tally["drains"], o.Tally["straddling"], o.Tally["splitKept"], o.Tally["movedWhole"])
		},
		Note: "measured by walking the collector's buffered map at every lock section (scenarios/world/drain/inspect.go); the collector's DrainStats are only cross-checked",
	})
}
