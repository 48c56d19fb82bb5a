package collector_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/sim"
)

const simSeeds = 300

var simKeys = []string{"a", "b", "c"}

// simTS returns a timestamp s seconds after the simulator's epoch.
func simTS(s float64) int64 { return sim.Epoch.UnixNano() + int64(s*float64(time.Second)) }

// recordLog records points and keeps them in the order their records took
// effect. Under the simulator no task runs between a record's release of
// the write lock and its return, so appending after Record returns keeps
// the lock order.
type recordLog struct {
	c   *collector.Collector
	s   *sim.Sim
	pts []model.Point
}

func (l *recordLog) record(p model.Point) {
	if err := l.c.Record(p.Key, at(p.TS), p.Value); err != nil {
		l.s.Failf("record %+v: %v", p, err)
	}
	l.pts = append(l.pts, p)
}

// explains reports whether a drain that saw the first i logged records at
// its first swap returns drained and leaves after: the plain partition of
// log[:i], then its kept part followed by log[i:] (DR-1, DR-5). A drain is
// linearizable with the records iff some i explains it.
func explains(log []model.Point, i int, cutoff int64, drained, after []model.Point) bool {
	st, out := model.CollectorStep(model.NewCollectorState(log[:i]...), model.CollectorInput{Op: model.OpDrain, Cutoff: cutoff})
	return slices.Equal(out.Points, drained) && slices.Equal(model.GroupByKey(st.Record(log[i:]...).Points()), after)
}

// TestSimRecordDuringSplit is DR-3, DR-4 and DR-5 under the simulator, with
// background recorders racing the drain. At every scheduling point of the
// split the drain mutex must be held. A record issued from another task must
// complete while the drain waits, within one virtual second; with the write
// lock held anywhere in the split it cannot. The drain must be linearizable
// with the records and move under the write lock exactly the points recorded
// during its split (DR-2).
func TestSimRecordDuringSplit(t *testing.T) {
	for seed := uint64(1); seed <= simSeeds; seed++ {
		var (
			log     recordLog
			cutoff  = simTS(60)
			drained []model.Point
			after   []model.Point
			st      collector.DrainStats
		)
		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			probe := &probeRT{Runtime: s}
			c, err := collector.New(probe, collector.Config{BucketWidth: 10 * time.Second})
			if err != nil {
				s.Failf("%v", err)
			}
			log = recordLog{c: c, s: s}
			value := 0.0
			point := func(key string) model.Point {
				value++
				return model.Point{Key: key, TS: simTS(s.Rand().Float64() * 120), Value: value}
			}
			for _, key := range simKeys {
				for range s.Rand().IntN(300) {
					log.record(point(key))
				}
			}
			yields := 0
			probe.onYield = func() {
				yields++
				if !probe.drainMutexHeld() {
					s.Failf("DR-4: drain mutex free at yield %d of the split", yields)
				}
				p := point("probe")
				done := probe.NewEvent("probe.logged")
				s.Go("probe-recorder", func() { log.record(p); done.Set() })
				ctx, cancel := probe.WithTimeout(context.Background(), time.Second)
				defer cancel()
				if err := done.Wait(ctx); err != nil {
					s.Failf("DR-3: a record issued at yield %d of the split did not complete: %v", yields, err)
				}
			}
			wg := s.NewWaitGroup("tasks")
			for r := range 2 {
				wg.Add(1)
				s.Go(fmt.Sprint("recorder-", r), func() {
					defer wg.Done()
					for range 40 {
						log.record(point(simKeys[s.Rand().IntN(len(simKeys))]))
						s.Yield()
					}
				})
			}
			wg.Add(1)
			s.Go("drain", func() {
				defer wg.Done()
				for range s.Rand().IntN(40) {
					s.Yield()
				}
				got, ds, err := c.DrainPoints(context.Background(), at(cutoff))
				if err != nil {
					s.Failf("drain: %v", err)
				}
				drained, st = toModel(got), ds
			})
			if err := wg.Wait(context.Background()); err != nil {
				s.Failf("%v", err)
			}
			after = toModel(c.Snapshot())
			if err := c.CheckInvariants(); err != nil {
				s.Failf("%v", err)
			}
		})
		require.NoError(t, res.Err, "seed %#x", seed)
		// The drain linearizes at its first swap, before the first record
		// issued mid-split and before at least RecordedDuringSplit records.
		firstProbe := slices.IndexFunc(log.pts, func(p model.Point) bool { return p.Key == "probe" })
		lin := false
		for i := firstProbe; i >= 0 && !lin; i-- { // the swap is usually just before the first probe
			lin = len(log.pts)-i >= int(st.RecordedDuringSplit) && explains(log.pts, i, cutoff, drained, after)
		}
		require.True(t, lin, "seed %#x: the drain is not linearizable with the records (DR-1/DR-5)", seed)
		require.Equal(t, 2, st.WriteLocks, "seed %#x", seed)
		require.EqualValues(t, st.RecordedDuringSplit, st.MovedUnderLock, "seed %#x: DR-2", seed)
		require.GreaterOrEqual(t, st.RecordedDuringSplit, int64(len(simKeys)+1), "seed %#x: the probe records at every yield", seed)
	}
}

// TestSimConcurrentDrainsSerialize is DR-4: three drains with different
// cutoffs start together while a recorder adds young points. Every point
// must be drained at most once or kept, and the drains' outputs must be
// those of the three drains run one at a time in some order.
func TestSimConcurrentDrainsSerialize(t *testing.T) {
	cutoffs := []int64{simTS(30), simTS(60), simTS(90)}
	perms := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for seed := uint64(1); seed <= simSeeds; seed++ {
		var (
			old, young []model.Point
			outs       = make([][]model.Point, len(cutoffs))
			after      []model.Point
		)
		res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			c, err := collector.New(s, collector.Config{})
			if err != nil {
				s.Failf("%v", err)
			}
			value := 0.0
			for range 200 + s.Rand().IntN(2000) {
				value++
				p := model.Point{Key: simKeys[s.Rand().IntN(len(simKeys))], TS: simTS(s.Rand().Float64() * 100), Value: value}
				old = append(old, p)
				_ = c.Record(p.Key, at(p.TS), p.Value)
			}
			wg := s.NewWaitGroup("tasks")
			wg.Add(1)
			s.Go("young-recorder", func() {
				defer wg.Done()
				for range 30 {
					value++
					p := model.Point{Key: simKeys[s.Rand().IntN(len(simKeys))], TS: simTS(100 + s.Rand().Float64()*10), Value: value}
					_ = c.Record(p.Key, at(p.TS), p.Value)
					young = append(young, p)
					s.Yield()
				}
			})
			for i, cut := range cutoffs {
				wg.Add(1)
				s.Go(fmt.Sprint("drain-", i), func() {
					defer wg.Done()
					got, _, err := c.DrainPoints(context.Background(), at(cut))
					if err != nil {
						s.Failf("drain %d: %v", i, err)
					}
					outs[i] = toModel(got)
				})
			}
			if err := wg.Wait(context.Background()); err != nil {
				s.Failf("%v", err)
			}
			after = toModel(c.Snapshot())
		})
		require.NoError(t, res.Err, "seed %#x", seed)

		var total []float64
		for _, o := range append(slices.Clone(outs), after) {
			for _, p := range o {
				total = append(total, p.Value)
			}
		}
		slices.Sort(total)
		require.Len(t, total, len(old)+len(young), "seed %#x: points lost or duplicated", seed)
		require.Equal(t, len(total), len(slices.Compact(total)), "seed %#x: a point was returned twice", seed)

		serial := false
		for _, perm := range perms {
			st := model.NewCollectorState(old...)
			ok := true
			for _, d := range perm {
				var out model.CollectorOutput
				st, out = model.CollectorStep(st, model.CollectorInput{Op: model.OpDrain, Cutoff: cutoffs[d]})
				ok = ok && slices.Equal(out.Points, outs[d])
			}
			if ok && slices.Equal(model.GroupByKey(st.Record(young...).Points()), after) {
				serial = true
				break
			}
		}
		require.True(t, serial, "seed %#x: the drains' outputs match no serial order (DR-4)", seed)
	}
}

// TestSimSameSeedSameRun: the collector keeps the determinism contract.
func TestSimSameSeedSameRun(t *testing.T) {
	run := func(seed uint64) sim.Result {
		return sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
			c, _ := collector.New(s, collector.Config{})
			wg := s.NewWaitGroup("w")
			for r := range 3 {
				wg.Add(1)
				s.Go(fmt.Sprint("r", r), func() {
					defer wg.Done()
					for i := range 50 {
						_ = c.Record(simKeys[(r+i)%3], at(simTS(s.Rand().Float64()*100)), 1)
						if i%10 == 0 {
							_, _, _ = c.Drain(context.Background(), at(simTS(50)))
						}
					}
				})
			}
			_ = wg.Wait(context.Background())
		})
	}
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := run(seed), run(seed)
		require.NoError(t, a.Err)
		require.Equal(t, a.Hash, b.Hash, "seed %d", seed)
	}
}
