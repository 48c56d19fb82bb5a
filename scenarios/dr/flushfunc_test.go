package dr

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/scenarios/claims"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// probeFlushInsideBucket counts the flushes whose lagged instant fell
// inside a bucket that held points on both sides of it: a flush that
// drained at that instant, instead of at the bucket's start, would have
// split the bucket over two flushes.
const probeFlushInsideBucket = "dr/flush-lag-inside-a-bucket"

// flushFuncRun is what one seed of TestDR11_FlushFuncFlushesEachBucketOnce
// saw.
type flushFuncRun struct {
	flushes, buckets, points, recorded int64
	duplicated, wrong                  int64
	witness                            string
}

// TestDR11_FlushFuncFlushesEachBucketOnce checks DR-11 on the production
// flush path, Collector.FlushFunc, where TestDR11_FlushOutputUnchanged
// drains at cutoffs of its own. Recorders record points up to the lag late
// for ten virtual minutes while a flusher calls the flush function once a
// minute, and a last flush runs after them. Since no point is later than the
// lag, every bucket must reach the sink once and whole (the flusher starts
// at a random instant, so the lagged instants fall inside buckets). The
// union of every flush's buckets must equal the plain aggregation
// (model.Aggregate) of every point older than the last flush's
// bucket-aligned cutoff, with no (key, start) twice. A flush that drains at
// its lagged instant itself, not at the start of the bucket holding it,
// splits that bucket over two flushes (probe dr/flush-lag-inside-a-bucket
// counts the flushes where that would happen).
func TestDR11_FlushFuncFlushesEachBucketOnce(t *testing.T) {
	const (
		width    = 10 * time.Second
		period   = time.Minute
		lag      = 30 * time.Second
		duration = 10 * time.Minute
	)
	claims.Run(t, claims.Check[flushFuncRun]{
		Claim: "DR-11", Options: simtest.Options{Seeds: 20},
		Fly: func(s *sim.Sim, _ claims.Bound) (flushFuncRun, error) {
			var run flushFuncRun
			ctx := context.Background()
			c, err := collector.New(s, collector.Config{BucketWidth: width})
			if err != nil {
				return run, err
			}
			var all []model.Point // every point, in recorded order
			var got []model.Bucket
			flush := c.FlushFunc(lag, func(_ context.Context, bs []collector.Bucket) error {
				for _, b := range bs {
					got = append(got, model.Bucket{Key: b.Key, Start: b.Start.UnixNano(), Count: b.Count, Sum: b.Sum, Min: b.Min, Max: b.Max})
				}
				return nil
			})
			flushAt := func() error {
				run.flushes++
				if splitsABucket(all, s.Now().Add(-lag).UnixNano(), int64(width)) {
					s.Probe(probeFlushInsideBucket)
				}
				return flush(ctx)
			}
			wg := s.NewWaitGroup("recorders")
			var value int64
			for i := range 3 {
				wg.Add(1)
				s.Go(fmt.Sprint("recorder-", i), func() {
					defer wg.Done()
					r := s.Rand()
					for s.Elapsed() < duration {
						value++
						p := model.Point{Key: keys[r.IntN(len(keys))], TS: s.Now().Add(-time.Duration(r.Int64N(int64(lag)))).UnixNano(), Value: float64(value)}
						if err := c.Record(p.Key, time.Unix(0, p.TS).UTC(), p.Value); err != nil {
							s.Failf("record: %v", err)
						}
						all = append(all, p)
						_ = s.Sleep(ctx, time.Duration(r.Int64N(int64(2*time.Second))))
					}
				})
			}
			// The flusher starts at a random instant, as a server does:
			// flushing on whole minutes, its lagged instants would all fall
			// on bucket starts, where draining at the instant itself is
			// right by luck.
			offset := time.Duration(s.Rand().Int64N(int64(period)))
			s.Go("flusher", func() {
				_ = s.Sleep(ctx, offset)
				for s.Elapsed()+period <= duration {
					_ = s.Sleep(ctx, period)
					if err := flushAt(); err != nil {
						s.Failf("flush: %v", err)
					}
				}
			})
			if err := wg.Wait(ctx); err != nil {
				return run, err
			}
			_ = s.Sleep(ctx, duration+period/2-s.Elapsed())
			if err := flushAt(); err != nil {
				return run, err
			}
			last := model.BucketStart(s.Now().Add(-lag).UnixNano(), int64(width))
			run.recorded = int64(len(all))
			var older []model.Point
			for _, p := range all {
				if p.TS < last {
					older = append(older, p)
				}
			}
			want := model.Aggregate(older, int64(width))
			run.buckets = int64(len(got))
			for _, b := range got {
				run.points += b.Count
			}
			sorted := slices.Clone(got)
			slices.SortStableFunc(sorted, func(a, b model.Bucket) int {
				return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Start, b.Start))
			})
			for i := 1; i < len(sorted); i++ {
				if sorted[i].Key == sorted[i-1].Key && sorted[i].Start == sorted[i-1].Start {
					run.duplicated++
					if run.witness == "" {
						run.witness = fmt.Sprintf("bucket %s@%s reached the sink twice: %+v, then %+v", sorted[i].Key, time.Unix(0, sorted[i].Start).UTC().Format(time.TimeOnly), sorted[i-1], sorted[i])
					}
				}
			}
			if run.duplicated == 0 && !slices.Equal(sorted, want) {
				run.wrong++
				run.witness = "the flushed buckets are not the plain aggregation of the points older than the last cutoff: " + bucketDiff(want, sorted)
			}
			if run.duplicated+run.wrong > 0 {
				// The seed fails, so that the audit names it, replays it
				// and shrinks it.
				return run, fmt.Errorf("DR-11: %d buckets reached the sink twice or wrong; first: %s", run.duplicated+run.wrong, run.witness)
			}
			return run, nil
		},
		Sample: func(x flushFuncRun) claims.Sample {
			tally := map[string]int64{"flushes": x.flushes, "buckets": x.buckets, "points": x.points, "recorded": x.recorded}
			smp := claims.Sample{Of: x.buckets, Seen: true, Witness: fmt.Sprintf("%d flushes sent %d buckets, each once", x.flushes, x.buckets)}
			for range x.duplicated + x.wrong {
				smp.Wrongly(func() string { return x.witness })
			}
			smp.Tally = tally
			return smp
		},
		Measured: func(o claims.Outcome) string {
			return fmt.Sprintf("%d flushes through FlushFunc (lag %v, buckets of %v) sent %d buckets holding %d of %d recorded points; %d buckets reached the sink twice or differed from the plain aggregation; %d seeds failed",
				o.Tally["flushes"], lag, width, o.Tally["buckets"], o.Tally["points"], o.Tally["recorded"], o.Wrong, o.Failed)
		},
		Probes: []claims.Probe{probe(probeFlushInsideBucket, "a flush whose lagged instant fell inside a bucket with points on both sides of it", 80)},
	})
}

// splitsABucket reports whether a drain at cutoff itself would split a
// bucket: some key has points in cutoff's bucket both before and at or
// after cutoff.
func splitsABucket(pts []model.Point, cutoff, width int64) bool {
	start := model.BucketStart(cutoff, width)
	before, after := map[string]bool{}, map[string]bool{}
	for _, p := range pts {
		if model.BucketStart(p.TS, width) != start {
			continue
		}
		if p.TS < cutoff {
			before[p.Key] = true
		} else {
			after[p.Key] = true
		}
	}
	for _, k := range keys {
		if before[k] && after[k] {
			return true
		}
	}
	return false
}
