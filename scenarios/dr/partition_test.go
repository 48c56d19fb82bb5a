package dr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/scenarios/world/drain"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// partition is what one seed of DR-1 measured.
type partition struct {
	smp                   claims.Sample
	points, steps, bucket int64
	// below, at and above count, over the steps, the points buffered 1 ns
	// before a cutoff, exactly on it and 1 ns after it.
	below, at, above int64
}

// The boundary probes of DR-1: a drain, a prune and a drain into buckets
// that met a point 1 ns before, exactly on, and 1 ns after its cutoff. An
// off-by-one of the cutoff in any one of the three (a split at cut-1 or
// cut+1) shows only at one of these relations.
var boundaryRelations = []struct {
	name string
	off  int64 // the point's timestamp minus the cutoff
}{{"1ns-below", -1}, {"at", 0}, {"1ns-above", +1}}

func boundaryProbe(step, relation string) string {
	return "dr/point-" + relation + "-" + step + "-cutoff"
}

// partitionSteps are DR-1's three steps, as the probes name them.
var partitionSteps = []string{"drain", "prune", "bucket-drain"}

// boundaryProbes declares every step's probes: each seed meets all three
// relations at every step (boundaryPoints records them), so each must be
// reached once per seed.
func boundaryProbes(seeds int) []claims.Probe {
	var out []claims.Probe
	for _, step := range partitionSteps {
		for _, rel := range boundaryRelations {
			out = append(out, probe(boundaryProbe(step, rel.name),
				fmt.Sprintf("a point buffered %s the cutoff of a %s", strings.ReplaceAll(rel.name, "1ns-", "1 ns "), step), int64(seeds)))
		}
	}
	return out
}

// partitionStamps draws the timestamps of one DR-1 seed, per key: the
// server's nearly-ordered arrivals with late ones (drain.DefaultStamps) on
// half the keys, arrivals shuffled over the whole span on the others, so
// that every chunk of those straddles every cutoff. Which half is drawn.
func partitionStamps(r *rand.Rand, perKey, keys int) []*drain.Stamps {
	odd := r.IntN(2)
	out := make([]*drain.Stamps, keys)
	for i := range out {
		g := drain.DefaultStamps()
		if i%2 == odd {
			g.Jitter, g.LateProb = time.Duration(perKey)*g.Spacing, 0
		}
		out[i] = &g
	}
	return out
}

// wrongSide counts the drained points at or after the cutoff and the kept
// ones before it: points on the wrong side of the cutoff.
func wrongSide(drained, kept []model.Point, cutoff int64) int64 {
	var n int64
	for _, p := range drained {
		if !model.Drained(p.TS, cutoff) {
			n++
		}
	}
	for _, p := range kept {
		if model.Drained(p.TS, cutoff) {
			n++
		}
	}
	return n
}

// partitionSeed is one seed of DR-1 on the production collector: record
// perKey points per key out of order, then drain, record more, prune, record
// more and drain into buckets, each against the plain partition of
// everything recorded (model.Partition, model.Aggregate). Each cutoff is
// drawn 1 ns before, on or 1 ns after a recorded point, and every step
// meets a point 1 ns before its cutoff, one on it and one 1 ns after it.
// The figure is the points that ended on the wrong side of a cutoff; any
// other difference from the plain partition (order, a lost or doubled
// point, a bucket's sums) is a wrong observation.
func partitionSeed(s *sim.Sim, keys []string, perKey int) (partition, error) {
	var out partition
	ctx := context.Background()
	r := s.Rand()
	width := time.Duration(1+r.IntN(30)) * time.Second
	c, err := collector.New(s, collector.Config{BucketWidth: width, MaxBufferedPoints: 1 << 30})
	if err != nil {
		return out, err
	}
	stamps := partitionStamps(r, perKey, len(keys))
	s.Note("DR-1: %d keys x %d points, bucket width %v", len(keys), perKey, width)
	var log []model.Point // everything buffered, in recorded order
	value := 0.0
	add := func(k int, ts int64) error {
		value++
		p := model.Point{Key: keys[k], TS: ts, Value: value}
		if err := c.Record(p.Key, time.Unix(0, p.TS).UTC(), p.Value); err != nil {
			return err
		}
		log = append(log, p)
		out.points++
		return nil
	}
	// record records n points on keys drawn at random. One in eight is
	// moved 1 ns off the Spacing grid, either way: on the grid alone, no
	// point lay 1 ns from a cutoff, and a split at cut-1 passed.
	record := func(n int) error {
		log = slices.Grow(log, n) // one copy per step, not a doubling of up to 1.2 million points
		for range n {
			k := r.IntN(len(keys))
			ts := stamps[k].Next(r)
			if r.IntN(8) == 0 {
				ts += int64(2*r.IntN(2) - 1)
			}
			if err := add(k, ts); err != nil {
				return err
			}
		}
		return nil
	}
	// cutoff draws the cutoff of a step 1 ns before, on, or 1 ns after a
	// buffered point's timestamp. It then makes sure a point is buffered at
	// each of the three relations to it (recording one on a random key
	// where none is: it lands in its key's newest chunk, out of order). So
	// every step must keep the point on its cutoff and the one after, and
	// take the one before (DR-1: the split at the cutoff, not next to it).
	// The probes count the relations each step met.
	cutoff := func(step string) (int64, error) {
		cut := log[r.IntN(len(log))].TS + int64(r.IntN(3)) - 1
		var met [3]int64
		for _, p := range log {
			if d := p.TS - cut; -1 <= d && d <= 1 {
				met[d+1]++
			}
		}
		for i, rel := range boundaryRelations {
			if met[i] == 0 {
				if err := add(r.IntN(len(keys)), cut+rel.off); err != nil {
					return 0, err
				}
				met[i]++
			}
			s.Probe(boundaryProbe(step, rel.name))
		}
		out.below, out.at, out.above = out.below+met[0], out.at+met[1], out.above+met[2]
		return cut, nil
	}
	// step judges one drain or prune: the figure, and every difference.
	step := func(what string, cut int64, gotDrained, gotKept, wantDrained, wantKept []model.Point) {
		out.steps++
		wrong := wrongSide(gotDrained, gotKept, cut)
		out.smp.Observe(float64(wrong), func() string {
			return fmt.Sprintf("the %s at %d: %d points on the wrong side of the cutoff (%d drained, %d kept)", what, cut, wrong, len(gotDrained), len(gotKept))
		})
		if gotDrained != nil && !slices.Equal(gotDrained, wantDrained) {
			out.smp.Wrongly(func() string {
				return fmt.Sprintf("the %s at %d took %d points, the plain partition %d (or in another order)", what, cut, len(gotDrained), len(wantDrained))
			})
		}
		if !slices.Equal(gotKept, wantKept) {
			out.smp.Wrongly(func() string {
				return fmt.Sprintf("after the %s at %d the collector buffers %d points, the plain partition keeps %d (or in another order)", what, cut, len(gotKept), len(wantKept))
			})
		}
	}
	snapshot := func() []model.Point { return drain.ToModel(c.Snapshot()) }

	// 1. Drain the points.
	if err := record(perKey * len(keys)); err != nil {
		return out, err
	}
	cut, err := cutoff("drain")
	if err != nil {
		return out, err
	}
	got, _, err := c.DrainPoints(ctx, time.Unix(0, cut).UTC())
	if err != nil {
		return out, err
	}
	drained, kept := model.Partition(log, cut)
	step("drain", cut, drain.ToModel(got), snapshot(), model.GroupByKey(drained), model.GroupByKey(kept))
	log = kept

	// 2. Prune, after more out-of-order points.
	if err := record(perKey / 4 * len(keys)); err != nil {
		return out, err
	}
	if cut, err = cutoff("prune"); err != nil {
		return out, err
	}
	n, err := c.Prune(time.Unix(0, cut).UTC())
	if err != nil {
		return out, err
	}
	pruned, kept := model.Partition(log, cut)
	if n != int64(len(pruned)) {
		out.smp.Wrongly(func() string {
			return fmt.Sprintf("the prune at %d discarded %d points, the plain partition %d", cut, n, len(pruned))
		})
	}
	step("prune", cut, nil, snapshot(), nil, model.GroupByKey(kept))
	log = kept

	// 3. Drain into buckets, after more.
	if err := record(perKey / 4 * len(keys)); err != nil {
		return out, err
	}
	if cut, err = cutoff("bucket-drain"); err != nil {
		return out, err
	}
	buckets, _, err := c.Drain(ctx, time.Unix(0, cut).UTC())
	if err != nil {
		return out, err
	}
	drained, kept = model.Partition(log, cut)
	gotB, wantB := drain.ToBuckets(buckets), model.Aggregate(drained, int64(width))
	var count int64
	for _, b := range gotB {
		count += b.Count
	}
	extra := count - int64(len(drained))
	if extra < 0 {
		extra = -extra
	}
	step("drain into buckets", cut, nil, snapshot(), nil, model.GroupByKey(kept))
	out.smp.Observe(float64(extra), func() string {
		return fmt.Sprintf("the drain into %v buckets at %d counted %d points, the plain partition drains %d", width, cut, count, len(drained))
	})
	if !slices.Equal(gotB, wantB) {
		out.smp.Wrongly(func() string {
			return fmt.Sprintf("the drain into %v buckets at %d gave %d buckets, the aggregated plain partition %d (or other sums)", width, cut, len(gotB), len(wantB))
		})
	}
	out.bucket += int64(len(gotB))
	if err := c.CheckInvariants(); err != nil {
		return out, fmt.Errorf("DR-6: %w", err)
	}
	return out, nil
}

// TestDR1_PlainPartition checks DR-1: the drain takes and keeps exactly the
// points a plain partition by cutoff would, in the same order; the same for
// prune and for the aggregated flush buckets; with points recorded out of
// order, at 4,000 and 400,000 points per key. Each seed runs the production
// collector on the simulator (one task: the property does not depend on the
// schedule; DR-3..DR-7 race it). The figure is the number of points on the
// wrong side of a cutoff, which must be exactly 0; any other difference
// from the plain partition is a wrong observation.
func TestDR1_PlainPartition(t *testing.T) {
	for _, size := range []struct {
		perKey, seeds int
		keys          []string
	}{
		{4_000, 12, keys},
		{400_000, 1, []string{"GetItem.latency", "PutItem.latency"}},
	} {
		t.Run(sizeName(size.perKey), func(t *testing.T) {
			claims.Run(t, claims.Check[partition]{
				Claim: "DR-1", Bound: "points on the wrong side of the cutoff", Options: simtest.Options{Seeds: size.seeds, MaxSeeds: heavyCap(size.perKey)},
				Fly: func(s *sim.Sim, _ claims.Bound) (partition, error) {
					return partitionSeed(s, size.keys, size.perKey)
				},
				Sample: func(p partition) claims.Sample {
					tally := map[string]int64{}
					tally["steps"] += int64(p.steps)
					tally["below"] += p.below
					tally["atCutoff"] += p.at
					tally["above"] += p.above
					tally["bucket"] += int64(p.bucket)
					p.smp.Of = p.points
					p.smp.Tally = tally
					return p.smp
				},
				Measured: func(o claims.Outcome) string {
					return fmt.Sprintf("%s points on the wrong side of a cutoff and %d other differences from the plain partition over %d points at %d/key: %d drain/prune/bucket steps, with %d points 1 ns before a cutoff, %d exactly on one and %d 1 ns after one; %d buckets",
						o.WorstText(), o.Wrong, o.Of, size.perKey, o.Tally["steps"], o.Tally["below"], o.Tally["atCutoff"], o.Tally["above"], o.Tally["bucket"])
				},
				Note:   "out-of-order timestamps per key: nearly ordered with 2% up to 5 s late, or shuffled over the whole span, one in eight 1 ns off the millisecond grid; each cutoff 1 ns before, on or 1 ns after a recorded point, with points at all three relations",
				Probes: boundaryProbes(size.seeds),
			})
		})
	}
}
