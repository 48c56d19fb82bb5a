package drain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/sim"
)

// Plan is a workload: preloaded points, then recorder, drainer, pruner and
// querier tasks and optionally the flush worker, all at once, then a final
// drain of everything. Every count is a bound: a plan always ends.
type Plan struct {
	// Preload is the number of points per key recorded before the tasks
	// start.
	Preload int
	// Recorders tasks record RecordsEach points each on random keys, with
	// out-of-order timestamps, pausing up to Pause of virtual time between
	// two records (0: a yield).
	Recorders, RecordsEach int
	Pause                  time.Duration
	// RecorderKeys, if set, gives recorder i the keys RecorderKeys[i %
	// len(RecorderKeys)] instead of every key: recorders on disjoint keys
	// keep the orders a linearizability checker must guess few.
	RecorderKeys [][]string
	// Drainers tasks issue DrainsEach drains each (DrainPoints, or Drain
	// when Buckets), after up to DrainDelay yields; Drainers > 1 makes drains
	// concurrent (DR-4). SnapshotAfterDrain takes a snapshot right after
	// each drain (DR-5).
	Drainers, DrainsEach int
	DrainDelay           int
	Buckets              bool
	SnapshotAfterDrain   bool
	// Prunes and Queries are issued by one pruner and one querier task.
	Prunes, Queries int
	// InvariantsEveryOp checks the chunk invariants after every operation
	// of every task (DR-6).
	InvariantsEveryOp bool
	// Hook is what each drain does at its yields.
	Hook HookPlan
	// Worker, if set, runs the flush worker while the tasks run.
	Worker *WorkerPlan
	// FinalQueries, once the tasks are done and before the final drain,
	// queries every key at every bound a buffered point has. It asks
	// [t, t+1ns), [t, end) and [start, t) for each distinct timestamp t
	// buffered on the key, at most MaxFinalQueries in all. Each answer is
	// compared with a final snapshot (World.FinalQueries counts them). A
	// query bound then falls on the oldest and the newest point of every
	// chunk, whatever the layout (the querier's random bounds hit a chunk's
	// newest point about once in a hundred queries) (DR-7).
	FinalQueries bool
	// Refusals is the number of invalid records (World.Refuse) a refuser
	// task issues, each of which must be refused with ErrInvalid; it then
	// records at both ends of the documented range of times, which must be
	// taken. Full lets
	// records be refused with ErrFull: for a world whose
	// Collector.MaxBufferedPoints the plan fills.
	Refusals int
	Full     bool
	// FinalDrain drains everything at the end, so the last state is in the
	// history; FinalSnapshot then takes a snapshot.
	FinalDrain, FinalSnapshot bool
}

// MaxFinalQueries bounds Plan.FinalQueries: a plan that would query more
// ends the run with an error instead.
const MaxFinalQueries = 20_000

// WorkerPlan runs collector.FlushWorker with a drain function that drains
// through the world (so that its drains are in the history) and, on the
// cycles Fail picks, fails instead: with a panic or an error (DR-9).
type WorkerPlan struct {
	Period time.Duration
	// Fail returns the failure to inject in cycle n (1-based): "" none,
	// "panic" or "error".
	Fail func(n int) string
	// Registry receives the worker's metrics; nil means the world's, where
	// World.CheckMetrics compares them.
	Registry *stats.Registry

	// Filled in by Run.
	Worker   *collector.FlushWorker
	Calls    int      // drain function calls
	Injected []string // "cycle n: panic|error"
	Logs     []string
}

// Run runs p in the world and returns when every task is done. It ends the
// run on an unexpected collector error.
func (w *World) Run(p Plan) {
	s := w.S
	ctx := context.Background()
	w.Hook = p.Hook
	if p.Preload > 0 {
		w.Preload(p.Preload)
		w.PruneHorizon = w.Stamps.At(int64(p.Preload * len(w.Keys) / 10))
	}
	check := func(op Op) {
		if op.Err != nil && !(p.Full && op.Refused) {
			s.Failf("world: %s failed: %v", op, op.Err)
		}
		if p.InvariantsEveryOp {
			w.CheckInvariants("after " + op.String())
		}
	}
	if p.Worker != nil {
		w.startWorker(p.Worker)
	}
	wg := s.NewWaitGroup("drain.tasks")
	for i := range p.Recorders {
		task := fmt.Sprintf("recorder-%d", i)
		keys := w.Keys
		if len(p.RecorderKeys) > 0 {
			keys = p.RecorderKeys[i%len(p.RecorderKeys)]
		}
		wg.Add(1)
		s.Go(task, func() {
			defer wg.Done()
			for range p.RecordsEach {
				key := keys[s.Rand().IntN(len(keys))]
				ts := w.Stamps.Next(s.Rand())
				// Labelled with its key: a shrinker keeps the records
				// of the key a failure names (drains stay: unlabelled).
				if s.KeepFor(sim.KeepOperation, key) {
					check(w.Record(task, key, ts))
				}
				w.pause(p.Pause)
			}
		})
	}
	for i := range p.Drainers {
		task := fmt.Sprintf("drainer-%d", i)
		wg.Add(1)
		s.Go(task, func() {
			defer wg.Done()
			for range p.DrainsEach {
				for range s.Rand().IntN(p.DrainDelay + 1) {
					w.pause(p.Pause)
				}
				cutoff := w.Cutoff()
				if s.Keep(sim.KeepOperation) {
					if p.Buckets {
						check(w.DrainBuckets(ctx, task, cutoff))
					} else {
						check(w.Drain(ctx, task, cutoff))
					}
				}
				if p.SnapshotAfterDrain && s.Keep(sim.KeepOperation) {
					check(w.Snapshot(task))
				}
			}
		})
	}
	if p.Prunes > 0 {
		wg.Add(1)
		s.Go("pruner", func() {
			defer wg.Done()
			for range p.Prunes {
				w.pause(p.Pause)
				cutoff := w.PruneCutoff()
				if s.Keep(sim.KeepOperation) {
					check(w.Prune("pruner", cutoff))
				}
			}
		})
	}
	if p.Refusals > 0 {
		wg.Add(1)
		s.Go("refuser", func() {
			defer wg.Done()
			for n := range p.Refusals {
				w.pause(p.Pause)
				if op := w.Refuse("refuser", n); !errors.Is(op.Err, collector.ErrInvalid) {
					s.Failf("world: %s: want collector.ErrInvalid, got %v", op, op.Err)
				}
			}
			// And the two ends of the documented range, which it must take.
			for _, ts := range []int64{DocMinTime, DocMaxTime - 1} {
				w.pause(p.Pause)
				check(w.Record("refuser", w.Keys[0], ts))
			}
		})
	}
	if p.Queries > 0 {
		wg.Add(1)
		s.Go("querier", func() {
			defer wg.Done()
			for range p.Queries {
				w.pause(p.Pause)
				key := w.Keys[s.Rand().IntN(len(w.Keys))]
				from, to := w.RecordedTS(key), w.RecordedTS(key)
				if from > to {
					from, to = to, from
				}
				if from == to || s.Rand().IntN(4) == 0 {
					from, to = w.Stamps.Base-int64(time.Hour), w.Stamps.Base+int64(240*time.Hour)
				}
				if s.KeepFor(sim.KeepOperation, key) {
					check(w.Query("querier", key, from, to))
				}
			}
		})
	}
	if err := wg.Wait(ctx); err != nil {
		s.Failf("world: %v", err)
	}
	if p.Worker != nil {
		if err := p.Worker.Worker.Stop(ctx); err != nil {
			s.Failf("world: stopping the flush worker: %v", err)
		}
	}
	w.Hook = HookPlan{}
	if w.lastHook != nil { // the records issued at drain yields, which nobody waited for
		if err := w.lastHook.Wait(ctx); err != nil {
			s.Failf("world: %v", err)
		}
	}
	for _, ev := range w.pending {
		if err := ev.Wait(ctx); err != nil {
			s.Failf("world: %v", err)
		}
	}
	if p.FinalQueries {
		w.queryEveryBound(check)
	}
	if p.FinalDrain {
		check(w.Drain(ctx, "final", Everything))
	}
	if p.FinalSnapshot {
		check(w.Snapshot("final"))
	}
}

// queryEveryBound issues Plan.FinalQueries's queries, key by key in the
// world's key order, timestamps ascending. Once every task has ended the
// answers are known: a snapshot, taken first and recorded (the checkers
// hold it to the model at its place in the lock order), says what each
// range holds. The queries themselves are compared with it here and are
// not recorded: thousands of them would only lengthen the history every
// checker and every shrink re-run walks.
func (w *World) queryEveryBound(check func(Op)) {
	snap := w.Snapshot("final-bounds")
	check(snap)
	held := make(map[string][]model.Point, len(w.Keys)) // each key's points in recorded order
	for _, p := range snap.Snapshot {
		held[p.Key] = append(held[p.Key], p)
	}
	stamps := make(map[string][]int64, len(w.Keys))
	n := 0
	for _, key := range w.Keys {
		for _, p := range held[key] {
			stamps[key] = append(stamps[key], p.TS)
		}
		slices.Sort(stamps[key])
		stamps[key] = slices.Compact(stamps[key])
		n += 3 * len(stamps[key])
	}
	if n > MaxFinalQueries {
		w.S.Failf("world: FinalQueries would issue %d queries, more than MaxFinalQueries (%d): record fewer points", n, MaxFinalQueries)
		return
	}
	start := w.Stamps.Base - int64(240*time.Hour)
	for _, key := range w.Keys {
		for _, t := range stamps[key] {
			for _, r := range [][2]int64{{t, t + 1}, {t, Everything}, {start, t}} {
				if r[0] >= r[1] {
					continue
				}
				w.queryAgainst(key, r[0], r[1], held[key])
			}
		}
	}
}

// queryAgainst queries key over [from, to) and ends the run, naming DR-7,
// unless the answer is exactly held's points in that range, in order.
func (w *World) queryAgainst(key string, from, to int64, held []model.Point) {
	w.FinalQueries++
	got, err := w.C.Query(key, at(from), at(to))
	var want []model.Point
	for _, p := range held {
		if from <= p.TS && p.TS < to {
			want = append(want, p)
		}
	}
	same := err == nil && len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		same = got[i].TS == want[i].TS && got[i].Value == want[i].Value
	}
	if !same {
		w.S.Failf("DR-7: once every task had ended, query(%s, [%d, %d)) returned %d points (%v); the final snapshot, held to the model, has %d there",
			key, from, to, len(got), err, len(want))
	}
}

func (w *World) pause(limit time.Duration) {
	if limit <= 0 {
		w.S.Yield()
		return
	}
	_ = w.S.Sleep(context.Background(), time.Duration(w.S.Rand().Int64N(int64(limit))))
}

// errInjected is the error an injected failing cycle returns.
var errInjected = errors.New("drain: injected drain failure (store unavailable)")

func (w *World) startWorker(wp *WorkerPlan) {
	s := w.S
	w.worker = wp
	if wp.Registry == nil {
		wp.Registry = w.Registry
	}
	drain := func(ctx context.Context) error {
		wp.Calls++
		n := wp.Calls
		fail := ""
		if wp.Fail != nil {
			fail = wp.Fail(n)
		}
		// An injected failure is a fault a shrinker may drop: the cycle
		// then drains as usual.
		if fail != "" {
			if !s.Keep(sim.KeepFault) {
				fail = ""
			} else if s.Recording() {
				s.Injected("flush cycle %d fails: %s", n, fail)
			}
		}
		switch fail {
		case "panic":
			wp.Injected = append(wp.Injected, fmt.Sprintf("cycle %d: panic", n))
			panic(fmt.Sprintf("drain: injected drain panic in cycle %d", n))
		case "error":
			wp.Injected = append(wp.Injected, fmt.Sprintf("cycle %d: error", n))
			return fmt.Errorf("cycle %d: %w", n, errInjected)
		}
		op := w.Drain(ctx, "flush", w.Cutoff())
		return op.Err
	}
	fw, err := collector.NewFlushWorker(s, drain, collector.WorkerConfig{
		Period:   wp.Period,
		Registry: wp.Registry,
		Logf:     func(f string, a ...any) { wp.Logs = append(wp.Logs, fmt.Sprintf(f, a...)) },
	})
	if err != nil {
		s.Failf("world: %v", err)
	}
	wp.Worker = fw
	if err := fw.Start(); err != nil {
		s.Failf("world: %v", err)
	}
}
