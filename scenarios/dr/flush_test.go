package dr

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/model/baseline"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/drain"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// flushKeys are metric names with dimensions, as the source text's flush
// writes them: keys that differ only in a dimension must stay apart.
var flushKeys = []string{
	"GetItem.latency{table=orders}", "GetItem.latency{table=users}",
	"PutItem.latency{table=orders}", "PutItem.size{table=orders}",
}

// flushSeed is what one seed of DR-11 compared.
type flushSeed struct {
	drains, prunes, buckets, points, records int64
	wrong                                    int64
	witness                                  string
	epoch                                    bool // recorded around the Unix epoch
}

// probeBucketBeforeEpoch counts the flushed buckets that start before 1970.
const probeBucketBeforeEpoch = "dr/bucket-before-the-epoch"

// epochProbe is DR-11's probe of a size: its seeds must flush buckets
// before the epoch. The one seed of the large size may be a seed after
// 1970, so only the small size is held to it.
func epochProbe(perKey int) []claims.Probe {
	if perKey >= 400_000 {
		return nil
	}
	return []claims.Probe{probe(probeBucketBeforeEpoch, "a flushed bucket that starts before the Unix epoch (negative timestamps)", 20)}
}

// aroundTheEpoch draws the default stamps with the Unix epoch in the middle
// of the points preloaded: half of them negative. A bucket of a negative
// timestamp starts at the multiple of the width below it, not the one
// toward zero; with every stamp after 1970, an aggregation that forgot the
// sign survived DR-11. The base is 1 ns off the millisecond grid, so some
// points lie 1 ns before a bucket's start, the remainder (-1 ns) closest
// to zero that still needs the correction. The seed, not the random
// stream, picks these runs, so the other seeds draw as before.
func aroundTheEpoch(preloaded int) drain.Stamps {
	st := drain.DefaultStamps()
	st.Base = -int64(preloaded)*int64(st.Spacing)/2 - 1
	return st
}

// TestDR11_FlushOutputUnchanged checks DR-11: the flush output does not
// change: metric names, dimensions, counts and sums per bucket equal the
// old collector's, on the same records, drains and prunes, with points out
// of order, at 4,000 and 400,000 points per key. Recorders, a drainer that
// drains into flush buckets (the 10-second buckets of a flush), a pruner
// and records at the drains' yields run at once on the production
// collector. The history is then replayed, in the collector's write-lock
// order, into the old design. That is baseline.OldCollector: one slice per
// key, a drain and a prune that partition under the lock, a flush that
// sums each drained point, its key cloned, into a map by key and bucket.
// Every drain must return exactly the old flush's buckets at the point
// where it took its points, and every prune the old prune's count.
func TestDR11_FlushOutputUnchanged(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size.perKey), func(t *testing.T) {
			claims.Run(t, claims.Check[flushSeed]{
				Claim: "DR-11", Options: simtest.Options{Seeds: size.seeds, MaxSeeds: heavyCap(size.perKey)},
				Fly: func(s *sim.Sim, _ claims.Bound) (flushSeed, error) {
					cfg := drain.Config{Keys: flushKeys, Collector: collector.Config{BucketWidth: 10 * time.Second}}
					epoch := s.Seed()%2 == 0
					if epoch {
						cfg.Stamps = aroundTheEpoch(size.perKey * len(flushKeys))
					}
					w, err := drain.New(s, cfg)
					if err != nil {
						return flushSeed{}, err
					}
					w.Run(drain.Plan{Preload: size.perKey, Recorders: 2, RecordsEach: 30, Drainers: 1, DrainsEach: 3, DrainDelay: 20,
						Buckets: true, Prunes: 2, Hook: drain.HookPlan{Records: true}, FinalDrain: true})
					out, err := flushDiff(s, w.History())
					out.epoch = epoch
					if err == nil && out.wrong > 0 {
						// The seed fails on its own: its failure names
						// the seed to replay and shrink, and a mutant is
						// caught at the first seed that differs, not by
						// the verdict after all of them.
						err = fmt.Errorf("DR-11: %d differences from the old collector; first: %s", out.wrong, out.witness)
					}
					return out, err
				},
				Sample: func(x flushSeed) claims.Sample {
					tally := map[string]int64{}
					tally["drains"] += int64(x.drains)
					tally["prunes"] += int64(x.prunes)
					tally["buckets"] += int64(x.buckets)
					tally["points"] += int64(x.points)
					tally["records"] += int64(x.records)
					if x.epoch {
						tally["epoch"]++
					}
					smp := claims.Sample{Of: x.drains + x.prunes, Seen: true,
						Witness: fmt.Sprintf("%d drains into %d buckets and %d prunes equal the old collector's", x.drains, x.buckets, x.prunes)}
					for range x.wrong {
						smp.Wrongly(func() string { return x.witness })
					}
					smp.Tally = tally
					return smp
				},
				Probes: epochProbe(size.perKey),
				Measured: func(o claims.Outcome) string {
					return fmt.Sprintf("at %d/key, %d drains into %d buckets (%d points) and %d prunes over %d recorded points (%d of %d seeds around the Unix epoch, half their points before it), replayed in lock order into the old collector: %d differed in a bucket's name, dimensions, start, count, sum, min or max, or in a prune's count; %d seeds failed",
						size.perKey, o.Tally["drains"], o.Tally["buckets"], o.Tally["points"], o.Tally["prunes"], o.Tally["records"], o.Tally["epoch"], o.Seeds, o.Wrong, o.Failed)
				},
			})
		})
	}
}

// flushDiff replays h in lock order into the old collector and compares.
func flushDiff(s *sim.Sim, h *checks.CollectorHistory) (flushSeed, error) {
	var out flushSeed
	evs, err := checks.CollectorOrder(h)
	if err != nil {
		return out, fmt.Errorf("DR-11: %w", err)
	}
	old := baseline.NewOldCollector(s)
	wrong := func(format string, a ...any) {
		out.wrong++
		if out.witness == "" {
			out.witness = fmt.Sprintf(format, a...)
		}
	}
	for _, e := range evs {
		switch e.Kind {
		case checks.CollectorRecord:
			old.Record(e.Point.Key, e.Point.TS, e.Point.Value)
			out.records++
		case checks.CollectorPrune:
			out.prunes++
			if n := old.Prune(e.Op.In.Cutoff); n != e.Op.Out.Count {
				wrong("%s: the old collector prunes %d points there", e.Op, n)
			}
		case checks.CollectorDrain:
			if !e.Op.Aggregated { // the final drain of the world takes points
				if want, _ := old.Drain(e.Op.In.Cutoff); !slices.Equal(e.Op.Out.Points, want) {
					wrong("%s: the old collector drains %d points there (or others)", e.Op, len(want))
				}
				continue
			}
			out.drains++
			want := old.Flush(e.Op.In.Cutoff, h.Width)
			got := e.Op.Buckets
			out.buckets += int64(len(got))
			for _, b := range got {
				out.points += b.Count
				if b.Start < 0 {
					s.Probe(probeBucketBeforeEpoch)
				}
			}
			if !slices.Equal(got, want) {
				wrong("%s: %s", e.Op, bucketDiff(want, got))
			}
		}
	}
	return out, nil
}

func bucketDiff(want, got []model.Bucket) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("%d buckets, the old flush %d; first difference at #%d: %+v, the old flush's %+v", len(got), len(want), i, got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("%d buckets, the old flush %d; extra %+v", len(got), len(want), got[len(want)])
	}
	return fmt.Sprintf("%d buckets, the old flush %d; missing %+v", len(got), len(want), want[len(got)])
}
