package drain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/checks"
	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/model"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/record"
)

// HookTimeout is how long, in virtual time, a drain waits at one of its
// yields for the operations it issued there (HookPlan.Wait). A record that
// needs the write lock cannot complete while the drain holds it, so hitting
// the timeout means the lock was not free (DR-3).
const HookTimeout = time.Second

// Config configures a World.
type Config struct {
	// Keys are the metric keys the recorders use: at least two, because the
	// drain yields once per key and once after the split.
	Keys []string
	// Collector configures the collector under test. MaxBufferedPoints zero
	// means 1<<30, so that no record of a world is refused; BucketWidth
	// zero means a minute, the flush period of the source text.
	Collector collector.Config
	// Stamps draws the timestamps; the zero value means DefaultStamps().
	Stamps Stamps
	// Inspect makes the probe inspect the collector's chunks at every
	// acquisition and release of its write lock after the preload
	// (WriteSection.Before and After), for the chunk checks (DR-2, DR-6,
	// DR-10). It costs a walk over every chunk per lock section.
	Inspect bool
}

// World is the production collector on a simulated runtime, behind a Probe,
// with every operation on it recorded for the checkers.
type World struct {
	S      *sim.Sim
	Probe  *Probe
	C      *collector.Collector
	Keys   []string
	Stamps Stamps
	// Hook says what the drain does at each of its yields (see HookPlan).
	Hook HookPlan
	// Initial are the points Preload recorded, in order: the first
	// len(Initial) write acquisitions are theirs. They are kept apart from
	// Ops because a preload can be large (400,000 points per key).
	Initial []model.Point
	// Ops are the operations in the order they returned.
	Ops []Op
	// Hooks are the drain yields in the order they happened.
	Hooks []HookObs
	// PruneHorizon is the newest prune cutoff a Plan uses and the oldest
	// drain cutoff: a prune that overlaps a drain's split then never
	// concerns the points the drain holds (which the collector documents it
	// does not prune).
	PruneHorizon int64
	// Width is the collector's bucket width in ns.
	Width int64
	// FinalQueries counts the queries Plan.FinalQueries compared with the
	// final snapshot.
	FinalQueries int
	// Registry holds the collector's metrics (Config.Collector.Registry,
	// or the world's own) and the flush worker's, for CheckMetrics.
	Registry *stats.Registry

	clock    int64
	worker   *WorkerPlan        // the plan's flush worker, if any
	events   []record.EventID   // each op's answer in the run's record, parallel to Ops
	lastHook rt.Event           // set when the records of the latest hook are done
	pending  []rt.Event         // set when other operations issued at hooks are done
	values   int64              // points recorded so far: the next point's number
	recorded []int64            // timestamps recorded so far, for cutoffs
	byKey    map[string][]int64 // the same per key, for query bounds; looked up only
}

// New builds a world on s.
func New(s *sim.Sim, cfg Config) (*World, error) {
	if len(cfg.Keys) < 2 {
		return nil, fmt.Errorf("drain: %d keys; the drain yields per key, so use at least two", len(cfg.Keys))
	}
	if cfg.Stamps == (Stamps{}) {
		cfg.Stamps = DefaultStamps()
	}
	if cfg.Collector.MaxBufferedPoints == 0 {
		cfg.Collector.MaxBufferedPoints = 1 << 30
	}
	if cfg.Collector.BucketWidth == 0 {
		cfg.Collector.BucketWidth = time.Minute
	}
	if cfg.Collector.Registry == nil {
		cfg.Collector.Registry = &stats.Registry{}
	}
	w := &World{S: s, Keys: cfg.Keys, Stamps: cfg.Stamps, byKey: map[string][]int64{}, Registry: cfg.Collector.Registry}
	w.Probe = &Probe{Runtime: s, Clock: w.tick}
	c, err := collector.New(w.Probe, cfg.Collector)
	if err != nil {
		return nil, err
	}
	if w.Probe.data == nil || w.Probe.drain == nil {
		return nil, errors.New("drain: the collector did not create the locks the probe observes (collector.data, collector.drain)")
	}
	w.C = c
	w.Width = int64(cfg.Collector.BucketWidth)
	if cfg.Inspect {
		ins, err := newInspector(c)
		if err != nil {
			return nil, err
		}
		w.Probe.inspector = ins
		w.Probe.Inspecting = true
	}
	w.Probe.OnYield = w.onYield
	w.PruneHorizon = w.Stamps.Base
	return w, nil
}

// at converts Unix ns to the time the collector takes.
func at(ts int64) time.Time { return time.Unix(0, ts).UTC() }

// ToModel flattens batches into model points in batch order.
func ToModel(bs []collector.Batch) []model.Point {
	n := 0
	for _, b := range bs {
		n += len(b.Points)
	}
	var out []model.Point
	if n > 0 {
		out = make([]model.Point, 0, n) // a drain returns up to 1.2 million points
	}
	for _, b := range bs {
		for _, p := range b.Points {
			out = append(out, model.Point{Key: b.Key, TS: p.TS, Value: p.Value})
		}
	}
	return out
}

func (w *World) tick() int64 {
	w.clock++
	return w.clock
}

// call stamps op's invocation and records it in the run's record (every
// operation counts in Result.Operations); ret takes what call returned.
func (w *World) call(op *Op) record.EventID {
	op.Call = w.tick()
	op.WritesAtCall = w.Probe.Writes()
	s := w.S
	if !s.Recording() {
		s.OpBegin("")
		return record.NoEvent
	}
	return s.OpBegin("%s", describeCall(op))
}

func (w *World) ret(op Op, begin record.EventID) Op {
	op.Return = w.tick()
	op.Writes = w.Probe.Writes()
	op.ID = len(w.Ops)
	w.Ops = append(w.Ops, op)
	ev := record.NoEvent
	if begin != record.NoEvent {
		if op.Err != nil {
			ev = w.S.OpEnd(begin, "%s: %v", op, op.Err)
		} else {
			ev = w.S.OpEnd(begin, "%s", op)
		}
	}
	w.events = append(w.events, ev)
	return op
}

// describeCall renders an operation at its invocation, for the record.
func describeCall(op *Op) string {
	in := op.In
	switch op.Kind {
	case KindRecord:
		return fmt.Sprintf("%s: record(%s, %d, %g)", op.Task, in.Key, in.TS, in.Value)
	case KindDrain:
		if op.Aggregated {
			return fmt.Sprintf("%s: drain buckets(< %d)", op.Task, in.Cutoff)
		}
		return fmt.Sprintf("%s: drain(< %d)", op.Task, in.Cutoff)
	case KindPrune:
		return fmt.Sprintf("%s: prune(< %d)", op.Task, in.Cutoff)
	case KindQuery:
		return fmt.Sprintf("%s: query(%s, [%d, %d))", op.Task, in.Key, in.From, in.To)
	case KindSnapshot:
		return fmt.Sprintf("%s: snapshot", op.Task)
	}
	return fmt.Sprintf("%s: %v", op.Task, op.Kind)
}

// Event returns the recorded answer of operation id (Op.ID), or
// record.NoEvent.
func (w *World) Event(id int) record.EventID {
	if id < 0 || id >= len(w.events) {
		return record.NoEvent
	}
	return w.events[id]
}

// Record records one point with a fresh, unique value (pointValue of the
// record's number), so that every point can be traced through drains.
func (w *World) Record(task, key string, ts int64) Op { return w.record(task, key, ts, 0) }

func (w *World) record(task, key string, ts int64, hook int) Op {
	w.values++
	op := Op{Task: task, Kind: KindRecord, Yield: hook,
		In: model.CollectorInput{Op: model.OpRecord, Key: key, TS: ts, Value: pointValue(w.values)}}
	begin := w.call(&op)
	op.Err = w.C.Record(key, at(ts), op.In.Value)
	op.Refused = errors.Is(op.Err, collector.ErrFull)
	if hook == 0 {
		w.recorded = append(w.recorded, ts)
		w.byKey[key] = append(w.byKey[key], ts)
	}
	return w.ret(op, begin)
}

// The range of times Record accepts, as its documentation gives it:
// [1700-01-01, 2200-01-01) UTC. Literals, not the package's variables, so
// that a moved bound shows.
var (
	DocMinTime = time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	DocMaxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
)

// Refuse issues the n-th of the records the collector must refuse as
// invalid, without taking its lock: an empty key, a NaN value, a time 1 ns
// before the documented range and one at its end, in turn. The world counts
// the refusals (Account); the checkers skip the answer.
func (w *World) Refuse(task string, n int) Op {
	in := model.CollectorInput{Op: model.OpRecord, Key: w.Keys[0], TS: w.Stamps.Base, Value: 1}
	switch n % 4 {
	case 0:
		in.Key = ""
	case 1:
		in.Value = math.NaN()
	case 2:
		in.TS = DocMinTime - 1
	case 3:
		in.TS = DocMaxTime
	}
	op := Op{Task: task, Kind: KindRecord, In: in}
	begin := w.call(&op)
	op.Err = w.C.Record(in.Key, at(in.TS), in.Value)
	return w.ret(op, begin)
}

// pointValue is the value of the n-th recorded point (n from 1): unique, so
// that checks tell points apart by value, but not monotone in n, and of
// both signs, so that a bucket's Min and Max depend on all of its points,
// not only its first and last. With values that grew with n, a Max computed
// as max(Min, value) equalled the true one and survived DR-11. Multiplying
// by an odd constant is a bijection modulo 2^31; the values are integers
// below 2^30 in size, so sums of up to 2^23 of them stay exact in a float64
// whatever their order.
func pointValue(n int64) float64 {
	return float64(n*0x9E3779B1%(1<<31)) - (1 << 30)
}

// Preload records n points per key, keys interleaved at random, into
// Initial. It must come before any other operation: it ends the run
// otherwise.
func (w *World) Preload(n int) { w.preload(n, false) }

// PreloadRoundRobin is Preload with the keys in turn: the i-th point of
// every key is recorded before the (i+1)-th of any, so that with
// near-ordered stamps each key's chunks cover the same stretches of time
// (a cutoff then falls inside the same chunk of every key).
func (w *World) PreloadRoundRobin(n int) { w.preload(n, true) }

func (w *World) preload(n int, roundRobin bool) {
	if len(w.Ops) > 0 || w.Probe.Writes() != int64(len(w.Initial)) {
		w.S.Failf("drain: Preload after other operations")
	}
	inspecting := w.Probe.Inspecting
	w.Probe.Inspecting = false
	defer func() { w.Probe.Inspecting = inspecting }()
	left := make([]int, len(w.Keys))
	for i := range left {
		left[i] = n
	}
	r := w.S.Rand()
	total := n * len(w.Keys)
	w.Probe.expect(total)
	w.Initial, w.recorded = slices.Grow(w.Initial, total), slices.Grow(w.recorded, total)
	for i := range total {
		k := i % len(w.Keys)
		if !roundRobin {
			k = r.IntN(len(w.Keys))
		}
		for left[k] == 0 {
			k = (k + 1) % len(w.Keys)
		}
		left[k]--
		w.values++
		p := model.Point{Key: w.Keys[k], TS: w.Stamps.Next(r), Value: pointValue(w.values)}
		if err := w.C.Record(p.Key, at(p.TS), p.Value); err != nil {
			w.S.Failf("drain: preload: %v", err)
		}
		w.Initial = append(w.Initial, p)
		w.recorded = append(w.recorded, p.TS)
		w.byKey[p.Key] = append(w.byKey[p.Key], p.TS)
	}
	if w.Probe.Writes() != int64(len(w.Initial)) {
		w.S.Failf("drain: %d preloaded points took %d write locks", len(w.Initial), w.Probe.Writes())
	}
}

// Drain drains with DrainPoints and records the drained points.
func (w *World) Drain(ctx context.Context, task string, cutoff int64) Op {
	op := Op{Task: task, Kind: KindDrain, In: model.CollectorInput{Op: model.OpDrain, Cutoff: cutoff}}
	begin := w.call(&op)
	bs, st, err := w.C.DrainPoints(ctx, at(cutoff))
	op.Out.Points, op.Groups, op.Stats, op.Err = ToModel(bs), batchKeys(bs), counts(st), err
	return w.ret(op, begin)
}

// batchKeys is the key of each batch, in the order the collector returned
// them.
func batchKeys(bs []collector.Batch) []string {
	var keys []string
	for _, b := range bs {
		keys = append(keys, b.Key)
	}
	return keys
}

// DrainBuckets drains with Drain and records the buckets.
func (w *World) DrainBuckets(ctx context.Context, task string, cutoff int64) Op {
	op := Op{Task: task, Kind: KindDrain, Aggregated: true, In: model.CollectorInput{Op: model.OpDrain, Cutoff: cutoff}}
	begin := w.call(&op)
	bs, st, err := w.C.Drain(ctx, at(cutoff))
	op.Buckets, op.Stats, op.Err = ToBuckets(bs), counts(st), err
	return w.ret(op, begin)
}

// ToBuckets converts flush buckets to the model's.
func ToBuckets(bs []collector.Bucket) []model.Bucket {
	out := make([]model.Bucket, 0, len(bs))
	for _, b := range bs {
		out = append(out, model.Bucket{Key: b.Key, Start: b.Start.UnixNano(), Count: b.Count, Sum: b.Sum, Min: b.Min, Max: b.Max})
	}
	return out
}

// counts is a drain's own account, in the checkers' terms.
func counts(st collector.DrainStats) checks.DrainCounts {
	return checks.DrainCounts{Buffered: st.Buffered, Drained: st.Drained, Kept: st.Kept, Keys: st.Keys,
		RecordedDuringSplit: st.RecordedDuringSplit, ChunksRecordedDuringSplit: st.ChunksRecordedDuringSplit,
		MovedUnderLock: st.MovedUnderLock, ChunksMoved: st.ChunksMoved, ChunksSplit: st.ChunksSplit,
		PointsCopied: st.PointsCopied, WriteLocks: st.WriteLocks, LockHeld: st.LockHeld, MaxLockHeld: st.MaxLockHeld}
}

// History is what the world recorded, for the checkers of package checks.
// The returned history shares the world's slices.
func (w *World) History() *checks.CollectorHistory {
	return &checks.CollectorHistory{Initial: w.Initial, Ops: w.Ops, Yields: w.Hooks, Writes: w.Probe.Sections(), Width: w.Width}
}

// Check judges the world's history with checks.CheckCollector, with the
// limits the caller takes from the claims table. In a recorded run, the
// first violation of each claim that names an operation ("#N ...") is
// blamed on that operation's answer.
func Check(w *World, lim checks.CollectorLimits) *checks.CollectorReport {
	r := checks.CheckCollector(w.History(), lim)
	for _, v := range w.CheckMetrics(r) {
		r.Violations.Add(v.Claim, 0, "%s", v.Msg)
	}
	w.blame(r.Violations.Of())
	return r
}

// blame attaches the first violation of each claim to the operation it
// names, in a recorded run.
func (w *World) blame(vs []checks.Violation) {
	if !w.S.Recording() {
		return
	}
	var seen []string
	for _, v := range vs {
		if slices.Contains(seen, v.Claim) {
			continue
		}
		id, ok := opNamed(v.Msg)
		if !ok {
			continue
		}
		seen = append(seen, v.Claim)
		w.S.Blame(w.Event(id), "%s", v)
	}
}

// opNamed reads the operation a violation's message begins with
// (CollectorOp.String: "#12 drainer-0: ...").
func opNamed(msg string) (int, bool) {
	rest, ok := strings.CutPrefix(msg, "#")
	if !ok {
		return 0, false
	}
	n, _, ok := strings.Cut(rest, " ")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(n)
	return id, err == nil
}

// Prune prunes and records the count.
func (w *World) Prune(task string, cutoff int64) Op {
	op := Op{Task: task, Kind: KindPrune, In: model.CollectorInput{Op: model.OpPrune, Cutoff: cutoff}}
	begin := w.call(&op)
	op.Out.Count, op.Err = w.C.Prune(at(cutoff))
	return w.ret(op, begin)
}

// Query queries one key and records the points.
func (w *World) Query(task, key string, from, to int64) Op { return w.query(task, key, from, to, 0) }

func (w *World) query(task, key string, from, to int64, hook int) Op {
	op := Op{Task: task, Kind: KindQuery, Yield: hook, In: model.CollectorInput{Op: model.OpQuery, Key: key, From: from, To: to}}
	begin := w.call(&op)
	pts, err := w.C.Query(key, at(from), at(to))
	for _, p := range pts {
		op.Out.Points = append(op.Out.Points, model.Point{Key: key, TS: p.TS, Value: p.Value})
	}
	op.Err = err
	return w.ret(op, begin)
}

// Snapshot records every buffered point.
func (w *World) Snapshot(task string) Op {
	op := Op{Task: task, Kind: KindSnapshot}
	begin := w.call(&op)
	bs := w.C.Snapshot()
	op.Snapshot, op.Groups = ToModel(bs), batchKeys(bs)
	return w.ret(op, begin)
}

// CheckInvariants checks the collector's structural invariants (DR-6) and
// ends the run naming DR-6 if they do not hold.
func (w *World) CheckInvariants(where string) {
	if err := w.C.CheckInvariants(); err != nil {
		w.S.Failf("DR-6: chunk invariants broken %s: %v", where, err)
	}
}

// Cutoff returns a drain cutoff: 1 ns before, on, or 1 ns after the
// timestamp of a point recorded so far, drawn at random (boundary), and
// never older than PruneHorizon.
func (w *World) Cutoff() int64 {
	if len(w.recorded) == 0 {
		return w.PruneHorizon
	}
	i := w.S.Rand().IntN(len(w.recorded))
	return max(boundary(w.recorded[i], i), w.PruneHorizon)
}

// PruneCutoff returns a prune cutoff: a time drawn at random from 20 s
// before the base to PruneHorizon, moved to 1 ns before, on, or 1 ns after
// the newest preloaded point at or before it (boundary), and never newer
// than PruneHorizon. The candidates are the preload's alone, which no
// shrink drops: a cutoff drawn from the points the run recorded would prune
// differently once a record was dropped, change the keys the next drain
// splits and so its yields, and shift the replay.
func (w *World) PruneCutoff() int64 {
	from := w.Stamps.Base - int64(20*time.Second)
	cut := from + w.S.Rand().Int64N(w.PruneHorizon-from+1)
	near, k := int64(0), -1
	for i, p := range w.Initial {
		if p.TS <= cut && (k < 0 || p.TS > near) {
			near, k = p.TS, i
		}
	}
	if k < 0 {
		return cut
	}
	return min(boundary(near, k), w.PruneHorizon)
}

// boundary moves cutoff ts by -1, 0 or +1 ns as i is 0, 1 or 2 modulo 3.
// On the Spacing grid alone a cutoff drawn from a point's timestamp had a
// point on it but never 1 ns from it, and a split at cut-1 or cut+1 then
// took and kept exactly the points the cutoff's would (DR-1). Taking the
// offset from the index already drawn leaves the random stream, and so
// every other draw of the run, as it was.
func boundary(ts int64, i int) int64 { return ts + int64(i%3) - 1 }

// RecordedTS returns a timestamp recorded so far on key, at random (the
// base if none was), so that a query bound can fall exactly on a point.
func (w *World) RecordedTS(key string) int64 {
	ts := w.byKey[key]
	if len(ts) == 0 {
		return w.Stamps.Base
	}
	return ts[w.S.Rand().IntN(len(ts))]
}

// Everything is a cutoff later than any timestamp a world records: a drain
// at it takes every buffered point.
var Everything = collector.MaxTime.Add(-time.Nanosecond).UnixNano()
