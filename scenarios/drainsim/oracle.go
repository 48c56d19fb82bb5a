package drainsim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
)

// Violation is one broken claim found by Check.
type Violation struct {
	Claim string // "DR-2"
	Msg   string
}

func (v Violation) String() string { return v.Claim + ": " + v.Msg }

// Deviation is a read that overlapped a drain's split and saw only the
// points recorded since the drain's first swap: the collector's documented
// deviation (DR-7). Want is what the sequential model answers at the read's
// position; Got equals what the live map held.
type Deviation struct {
	Op        Op
	Want, Got []model.Point
}

// DrainFacts is what Check established about one drain.
type DrainFacts struct {
	Op Op
	// Swap and Put are the drain's two write-lock acquisitions, found from
	// outside: the acquisitions no Record or Prune claimed.
	Swap, Put int64
	// RecordsBetween is the number of records whose write came between Swap
	// and Put (seen by the clients); PrunedBetween the points prunes removed
	// meanwhile.
	RecordsBetween, PrunedBetween int64
	// IssuedInSplit counts the records issued after the drain's first swap
	// released the lock that took it before the second: none may wait.
	IssuedInSplit int64
	// Want is the DrainStats the replayed chunk layout predicts.
	Want collector.DrainStats
}

// Report is the outcome of Check.
type Report struct {
	Ops, Hooks int
	Writes     int64
	Drains     []DrainFacts
	Deviations []Deviation
	Violations []Violation
	// Reads counts the queries and snapshots checked; ReadsInSplit those
	// positioned inside a drain's split.
	Reads, ReadsInSplit int
	// RecordsWaited counts the records that waited for a drain's hold of
	// the write lock (arriving during a swap: allowed).
	RecordsWaited int
}

// Err returns the first violation of one of the given claims (any claim if
// none is given, or if none of them is violated), or nil.
func (r *Report) Err(claims ...string) error {
	for _, v := range r.Violations {
		if len(claims) == 0 || slices.Contains(claims, v.Claim) {
			return fmt.Errorf("%s (%d violations in all)", v, len(r.Violations))
		}
	}
	if len(r.Violations) > 0 {
		return fmt.Errorf("%s (%d violations in all)", r.Violations[0], len(r.Violations))
	}
	return nil
}

// Has reports whether a claim is violated.
func (r *Report) Has(claim string) bool {
	return slices.ContainsFunc(r.Violations, func(v Violation) bool { return v.Claim == claim })
}

func (r *Report) add(claim, format string, a ...any) {
	if len(r.Violations) < 50 {
		r.Violations = append(r.Violations, Violation{claim, fmt.Sprintf(format, a...)})
	}
}

// Check replays a world's history in the order of the collector's write
// lock and checks every operation against the sequential model
// (model.CollectorStep's semantics: record appends, a drain returns the plain
// partition at its first swap, a prune the same count) and every drain's
// DrainStats against the replayed chunk layout. It is an exact
// linearizability check whose linearization points are the lock
// acquisitions, found from outside the collector by the Probe:
//
//   - a Record or Prune claims the write acquisition that Probe.Writes shows
//     right after it returns; the acquisitions nobody claims are the drains'
//     and must be exactly two per drain, in order, inside the drain's call
//     (DR-2, DR-4);
//   - at each drain yield exactly one drain must be between its two
//     acquisitions, and no drain may hold the write lock (DR-3, DR-4);
//   - the records between a drain's two acquisitions are what it must move
//     under the lock, however much was buffered (DR-2), and each key must
//     read back as its kept points followed by them (DR-5);
//   - a read inside a split may see only the live map: the documented
//     deviation, labelled; any other wrong answer is a violation (DR-7).
//
// Check also times the records against the drains' two holds of the lock
// (Probe.AcquiredAt): a record issued after a drain's first swap released
// the lock, that took the lock before the drain's second swap, must not
// have waited for a hold by any drain (DR-3).
func Check(w *World) *Report {
	r := CheckOps(w.Initial, w.Ops, w.Hooks, w.Width, w.Probe.Writes())
	checkWaits(r, w.Ops, w.Probe.AcquiredAt)
	return r
}

// checkWaits counts, per drain, the records issued inside its split and
// those that waited for a drain's hold of the write lock (DR-3).
func checkWaits(r *Report, ops []Op, lockTimes func(seq int64) (acquired, released int64)) {
	if len(r.Violations) > 0 {
		return
	}
	type hold struct{ acq, rel int64 }
	var holds []hold
	for _, f := range r.Drains {
		for _, seq := range []int64{f.Swap, f.Put} {
			a, rel := lockTimes(seq)
			holds = append(holds, hold{a, rel})
		}
	}
	for _, op := range ops {
		if op.Kind != KindRecord || op.Err != nil {
			continue
		}
		acq, _ := lockTimes(op.Writes)
		var waitedFor *hold
		for i, h := range holds {
			if h.acq < acq && op.Call < h.rel {
				waitedFor = &holds[i]
				break
			}
		}
		if waitedFor != nil {
			r.RecordsWaited++
		}
		for i := range r.Drains {
			f := &r.Drains[i]
			_, swapRel := lockTimes(f.Swap)
			putAcq, _ := lockTimes(f.Put)
			if op.Call > swapRel && acq < putAcq {
				f.IssuedInSplit++
				if waitedFor != nil {
					r.add("DR-3", "%s, issued during the split of %s, waited for a drain's hold of the write lock (held from tick %d to %d)",
						op, f.Op, waitedFor.acq, waitedFor.rel)
				}
			}
		}
	}
}

// CheckOps is Check on a recorded history: the preloaded points (the first
// len(initial) writes), the operations, the drain yields, the bucket width,
// and the number of write acquisitions in all.
func CheckOps(initial []model.Point, ops []Op, hooks []HookObs, width, writes int64) *Report {
	r := &Report{Ops: len(ops), Hooks: len(hooks), Writes: writes}
	if int64(len(initial)) > writes {
		r.add("harness", "%d preloaded points but only %d write acquisitions", len(initial), writes)
		return r
	}
	// claimedBy maps a write sequence number to the op index + 1 that
	// claimed it, or preloaded for the initial points.
	claimedBy := make([]int, writes+1)
	for seq := range int64(len(initial)) {
		claimedBy[seq+1] = preloaded
	}
	var drains []int
	reads := map[int64][]int{}
	for i, op := range ops {
		if op.Err != nil {
			continue
		}
		switch op.Kind {
		case KindRecord, KindPrune:
			if op.Writes < 1 || op.Writes > writes {
				r.add("harness", "%s claims write %d of %d", op, op.Writes, writes)
				return r
			}
			if j := claimedBy[op.Writes]; j == preloaded {
				r.add("harness", "%s claims write %d, a preloaded point's", op, op.Writes)
				return r
			} else if j != 0 {
				r.add("harness", "%s and %s both claim write %d", ops[j-1], op, op.Writes)
				return r
			}
			claimedBy[op.Writes] = i + 1
		case KindDrain:
			drains = append(drains, i)
		case KindQuery, KindSnapshot:
			reads[op.Writes] = append(reads[op.Writes], i)
		}
	}
	var unclaimed []int64
	for seq := int64(1); seq <= writes; seq++ {
		if claimedBy[seq] == 0 {
			unclaimed = append(unclaimed, seq)
		}
	}
	// Drains in the order of their returns; serialized drains hand the lock
	// on in that order, each taking it twice.
	slices.SortStableFunc(drains, func(a, b int) int { return cmp.Compare(ops[a].Return, ops[b].Return) })
	if len(unclaimed) != 2*len(drains) {
		var per []string
		for _, d := range drains {
			op := ops[d]
			n := 0
			for _, u := range unclaimed {
				if u > op.WritesAtCall && u <= op.Writes {
					n++
				}
			}
			per = append(per, fmt.Sprintf("%s: %d", op, n))
		}
		r.add("DR-2", "%d drains took the write lock %d times, want exactly 2 each (a swap out and a put back); acquisitions inside each drain's call: %s",
			len(drains), len(unclaimed), strings.Join(per, "; "))
		return r
	}
	owner := map[int64]int{} // unclaimed acquisition -> index into r.Drains
	for i, d := range drains {
		op := ops[d]
		f := DrainFacts{Op: op, Swap: unclaimed[2*i], Put: unclaimed[2*i+1]}
		if f.Swap <= op.WritesAtCall || f.Put > op.Writes {
			r.add("DR-4", "the write-lock acquisitions of concurrent drains interleave: %s is not inside its call [writes %d..%d] (swap %d, put %d)",
				op, op.WritesAtCall, op.Writes, f.Swap, f.Put)
		}
		owner[f.Swap], owner[f.Put] = len(r.Drains), len(r.Drains)
		r.Drains = append(r.Drains, f)
	}
	for _, h := range hooks {
		n, _ := slices.BinarySearch(unclaimed, h.Writes+1) // acquisitions <= h.Writes
		if h.WriteHeld && claimedBy[h.Writes] == 0 {
			r.add("DR-3", "at drain yield %d, in the middle of the split, a drain held the write lock (acquisition %d)", h.N, h.Writes)
		}
		if n%2 != 1 {
			r.add("DR-4", "at drain yield %d, %d drain acquisitions of the write lock had happened: want an odd number (exactly one drain between its swaps)", h.N, n)
		}
		if h.DrainMutexProbed && !h.DrainMutexHeld {
			r.add("DR-4", "at drain yield %d, in the middle of the drain, the drain mutex was free", h.N)
		}
	}
	if len(r.Violations) > 0 && r.Has("DR-4") {
		return r // the drains cannot be told apart; the replay would only add noise
	}
	replay(r, initial, ops, claimedBy, owner, reads, width)
	return r
}

// preloaded marks the writes of the initial points in claimedBy.
const preloaded = -1

// replay walks the write acquisitions in order, with each read after the
// writes it saw.
func replay(r *Report, initial []model.Point, ops []Op, claimedBy []int, owner map[int64]int, reads map[int64][]int, width int64) {
	var state []model.Point // the sequential model's state, in recorded order
	lay := newLayout()
	inSplit := -1 // index into r.Drains of the drain between its swaps
	var kept map[string]*lseries
	putBacks := 0
	doReads := func(w int64) {
		for _, i := range reads[w] {
			checkRead(r, ops[i], state, lay, inSplit >= 0, putBacks > 0)
		}
	}
	doReads(0)
	for seq := int64(1); seq < int64(len(claimedBy)); seq++ {
		if j := claimedBy[seq]; j == preloaded {
			p := initial[seq-1]
			state = append(state, p)
			lay.record(p)
		} else if j != 0 {
			op := ops[j-1]
			switch op.Kind {
			case KindRecord:
				p := model.Point{Key: op.In.Key, TS: op.In.TS, Value: op.In.Value}
				state = append(state, p)
				lay.record(p)
				if inSplit >= 0 {
					r.Drains[inSplit].RecordsBetween++
				}
			case KindPrune:
				drained, k := model.Partition(state, op.In.Cutoff)
				state = k
				live := lay.prune(op.In.Cutoff)
				if inSplit >= 0 {
					r.Drains[inSplit].PrunedBetween += live
				}
				if op.Out.Count != int64(len(drained)) {
					r.add("DR-7", "%s: the model prunes %d points at its position in the lock order (the live map held %d of them)", op, len(drained), live)
				}
			}
		} else {
			d := owner[seq]
			f := &r.Drains[d]
			if seq == f.Swap {
				inSplit = d
				drained, k := model.Partition(state, f.Op.In.Cutoff)
				state = k
				kept, f.Want = lay.swap(f.Op.In.Cutoff)
				checkDrained(r, f.Op, model.GroupByKey(drained), width)
			} else {
				lay.putBack(kept, &f.Want)
				inSplit = -1
				putBacks++
				checkStats(r, f)
			}
		}
		doReads(seq)
	}
}

func checkDrained(r *Report, op Op, want []model.Point, width int64) {
	if op.Aggregated {
		got := make([]model.Bucket, 0, len(op.Buckets))
		for _, b := range op.Buckets {
			got = append(got, model.Bucket{Key: b.Key, Start: b.Start.UnixNano(), Count: b.Count, Sum: b.Sum, Min: b.Min, Max: b.Max})
		}
		if wantB := model.Aggregate(want, width); !slices.Equal(got, wantB) {
			r.add("DR-1", "%s: its buckets differ from the aggregated plain partition at its first swap: %s", op, firstBucketDiff(wantB, got))
		}
		return
	}
	if !slices.Equal(op.Out.Points, want) {
		r.add("DR-1", "%s: the drained points differ from the plain partition at its first swap: %s", op, firstDiff(want, op.Out.Points))
	}
}

func checkStats(r *Report, f *DrainFacts) {
	got, want := f.Op.Stats, f.Want
	if got.MovedUnderLock != want.MovedUnderLock || got.RecordedDuringSplit != want.RecordedDuringSplit || got.WriteLocks != 2 ||
		f.RecordsBetween-f.PrunedBetween != got.MovedUnderLock {
		r.add("DR-2", "%s: moved %d points under the write lock (%d write locks, %d recorded during the split by its count); the clients recorded %d points between its two acquisitions (%d pruned meanwhile); %d were buffered",
			f.Op, got.MovedUnderLock, got.WriteLocks, got.RecordedDuringSplit, f.RecordsBetween, f.PrunedBetween, got.Buffered)
	}
	if got.Buffered != want.Buffered || got.Drained != want.Drained || got.Kept != want.Kept || got.Keys != want.Keys {
		r.add("DR-1", "%s: buffered/drained/kept/keys %d/%d/%d/%d, the model says %d/%d/%d/%d",
			f.Op, got.Buffered, got.Drained, got.Kept, got.Keys, want.Buffered, want.Drained, want.Kept, want.Keys)
	}
	if got.ChunksMoved != want.ChunksMoved || got.ChunksSplit != want.ChunksSplit || got.PointsCopied != want.PointsCopied ||
		got.ChunksRecordedDuringSplit != want.ChunksRecordedDuringSplit {
		r.add("DR-6", "%s: chunks moved/split/points copied/chunks recorded during the split %d/%d/%d/%d; chunks of at most %d points predict %d/%d/%d/%d",
			f.Op, got.ChunksMoved, got.ChunksSplit, got.PointsCopied, got.ChunksRecordedDuringSplit, collector.ChunkPoints,
			want.ChunksMoved, want.ChunksSplit, want.PointsCopied, want.ChunksRecordedDuringSplit)
	}
}

func checkRead(r *Report, op Op, state []model.Point, lay *layout, inSplit, afterPutBack bool) {
	r.Reads++
	if inSplit {
		r.ReadsInSplit++
	}
	var want, live, got []model.Point
	switch op.Kind {
	case KindQuery:
		for _, p := range state {
			if p.Key == op.In.Key && op.In.From <= p.TS && p.TS < op.In.To {
				want = append(want, p)
			}
		}
		for _, p := range lay.points(op.In.Key) {
			if op.In.From <= p.TS && p.TS < op.In.To {
				live = append(live, p)
			}
		}
		got = op.Out.Points
	case KindSnapshot:
		want, live, got = model.GroupByKey(state), lay.points(""), op.Snapshot
	}
	switch {
	case slices.Equal(got, want):
	case inSplit && slices.Equal(got, live):
		r.Deviations = append(r.Deviations, Deviation{Op: op, Want: want, Got: got})
	case afterPutBack && sameSet(got, want):
		r.add("DR-5", "%s: right points, wrong order: %s (each key must read as its kept points, then the points recorded during the split)", op, firstDiff(want, got))
	default:
		r.add("DR-7", "%s: not the model's answer at its position in the lock order%s: %s", op, map[bool]string{true: " (inside a split, nor the live map's)"}[inSplit], firstDiff(want, got))
	}
}

func sameSet(a, b []model.Point) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	byValue := func(p, q model.Point) int {
		return cmp.Or(cmp.Compare(p.Value, q.Value), cmp.Compare(p.Key, q.Key), cmp.Compare(p.TS, q.TS))
	}
	slices.SortFunc(x, byValue)
	slices.SortFunc(y, byValue)
	return slices.Equal(x, y)
}

func firstDiff(want, got []model.Point) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("%d points, want %d; first difference at #%d: got %s, want %s", len(got), len(want), i, pointString(got[i]), pointString(want[i]))
		}
	}
	switch {
	case len(got) > len(want):
		return fmt.Sprintf("%d points, want %d; extra %s", len(got), len(want), pointString(got[len(want)]))
	case len(got) < len(want):
		return fmt.Sprintf("%d points, want %d; missing %s", len(got), len(want), pointString(want[len(got)]))
	}
	return "equal"
}

func firstBucketDiff(want, got []model.Bucket) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("%d buckets, want %d; first difference at #%d: got %+v, want %+v", len(got), len(want), i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d buckets, want %d", len(got), len(want))
}

func pointString(p model.Point) string {
	return fmt.Sprintf("%s@%s=%g", p.Key, tsString(p.TS), p.Value)
}
