package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/windtunnel/windtunnel/model"
)

// CollectorDeviation is a read that overlapped a drain's split and saw only
// the points recorded since the drain's first swap: the collector's
// documented deviation (DR-7). Want is what the sequential model answers at
// the read's position; Got equals what the live map held.
type CollectorDeviation struct {
	Op        CollectorOp
	Want, Got []model.Point
}

// DrainFacts is what CheckCollector established about one drain.
type DrainFacts struct {
	Op CollectorOp
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
	// IssuedAfterSplit counts the records issued from the drain's last
	// yield, after its split, that took the lock before its put-back.
	IssuedAfterSplit int64
	// Yields are the drain's yields (between its swaps), in order.
	Yields []DrainYield
	// WaitingDrains is the most other drains in flight at one of its
	// yields: called, not returned, so waiting for the drain mutex.
	WaitingDrains int
	// Want is the DrainCounts the replayed chunk layout and the lock log
	// predict (Buffered is -1 when the replay did not reach the drain).
	Want DrainCounts
	// Outside is what the inspections of the collector saw (nil when the
	// world did not inspect).
	Outside *DrainOutside
}

// CollectorInterleavings counts the interleaving classes of DR-3, DR-4,
// DR-5 and DR-10 that a history contains, so that a check can require its
// seeds to reach them (sim probes).
type CollectorInterleavings struct {
	// RecordsInSplit: records issued after a drain's first swap that took
	// the write lock before its second (DR-3).
	RecordsInSplit int64
	// RecordsAfterSplit: of those, records issued at a drain's last yield,
	// after its split (DR-3: the whole split, not only its start).
	RecordsAfterSplit int64
	// DrainWaitingInSplit: yields of a drain at which another drain was in
	// flight, waiting on the drain mutex (DR-4).
	DrainWaitingInSplit int64
	// PrunesInSplit: prunes whose write came between a drain's two swaps
	// (DR-4, DR-10: two drains around a prune).
	PrunesInSplit int64
	// DrainsDuringPrune: drains called while a prune held the write lock
	// (DR-10).
	DrainsDuringPrune int64
	// PutBackAfterKept: keys put back with both kept points and points
	// recorded during the split, which must follow them (DR-5);
	// PutBackNewKey: keys with only points recorded during the split.
	PutBackAfterKept, PutBackNewKey int64
	// QueryDeviations: reads inside a split that missed buffered points
	// (DR-7's documented deviation).
	QueryDeviations int64
}

// CollectorReport is the outcome of CheckCollector.
type CollectorReport struct {
	Ops, Yields int
	Writes      int64
	Drains      []DrainFacts
	Prunes      []PruneFacts
	Deviations  []CollectorDeviation
	Violations  Violations
	// Reads counts the queries and snapshots checked; ReadsInSplit those
	// positioned inside a drain's split.
	Reads, ReadsInSplit int
	// RecordsWaited counts the records that waited for a drain's hold of
	// the write lock (arriving during a swap: allowed).
	RecordsWaited int
	// Chunks is what the inspections saw of the chunks (zero when the world
	// did not inspect).
	Chunks ChunkFacts
	// Interleavings are the race classes the history contains.
	Interleavings CollectorInterleavings
	// Conservation, counted over the operations' own outputs: points
	// drained more than once, and recorded points that no drain returned,
	// no prune counted and the sequential model does not still hold.
	Duplicated, Unaccounted int64
	// Remaining is the number of points the sequential model still buffers
	// at the end of the history.
	Remaining int64
}

// Err returns the first violation of one of the given claims (any claim if
// none is given, or if none of them is violated: a drain check fails on
// every broken claim, naming its own first), or nil.
func (r *CollectorReport) Err(claims ...string) error {
	if err := r.Violations.Err(claims...); err != nil {
		return err
	}
	return r.Violations.Err()
}

// Has reports whether a claim is violated.
func (r *CollectorReport) Has(claim string) bool { return r.Violations.Has(claim) }

func (r *CollectorReport) add(claim, format string, a ...any) {
	r.Violations.PerClaim = 50
	r.Violations.Add(claim, 0, format, a...)
}

// CheckCollector replays a collector history in the order of the collector's
// write lock. It checks every operation against the sequential model and
// every drain's own account against the replayed chunk layout. The model is
// model.CollectorStep's semantics: record appends, a drain returns the plain
// partition at its first swap, a prune the same count. It is an exact
// linearizability check. Its linearization points are the lock acquisitions,
// found from outside the collector:
//
//   - A Record or Prune claims the write acquisition that the world saw
//     right after it returned. The acquisitions nobody claims are the
//     drains'. They must be exactly two per drain, in order, inside the
//     drain's call (DR-2, DR-4).
//   - At each drain yield exactly one drain must be between its two
//     acquisitions, and no drain may hold the write lock (DR-3, DR-4).
//   - The records between a drain's two acquisitions are what it must move
//     under the lock, however much was buffered (DR-2). Each key must read
//     back as its kept points followed by them (DR-5).
//   - A read inside a split may see only the live map: the documented
//     deviation, labelled. Any other wrong answer is a violation (DR-7).
//
// It also times the records and prunes against the drains' holds of the lock
// (DR-3). Take one issued after a drain's first swap released the lock that
// took the lock before the drain's second swap. It must not have waited for a
// hold by any drain. When the world inspected the collector at its lock
// sections, CheckChunks judges the chunks as well (DR-2, DR-6, DR-10).
func CheckCollector(h *CollectorHistory, lim CollectorLimits) *CollectorReport {
	r := &CollectorReport{Ops: len(h.Ops), Yields: len(h.Yields), Writes: int64(len(h.Writes))}
	if lim.ChunkPoints <= 0 {
		r.add("harness", "no chunk limit: CollectorLimits.ChunkPoints is %d", lim.ChunkPoints)
		return r
	}
	c := checkOps(r, h, lim)
	if c == nil {
		return r
	}
	checkWaits(r, h)
	countInterleavings(r, h, c)
	checkConservation(r, h)
	CheckChunks(r, h, lim, c.claimedBy)
	// The collector's own account last: a violation found from outside is
	// the one reported first.
	for i := range r.Drains {
		if r.Drains[i].Want.Buffered >= 0 {
			checkStats(r, &r.Drains[i], h.Writes, lim)
		}
	}
	return r
}

// opIndex is what checkOps found: which op claimed each write.
type opIndex struct {
	claimedBy []int // write seq -> op index + 1, preloaded, or 0 (a drain's)
}

// preloaded marks the writes of the initial points in claimedBy.
const preloaded = -1

func checkOps(r *CollectorReport, h *CollectorHistory, lim CollectorLimits) *opIndex {
	writes := int64(len(h.Writes))
	ops := h.Ops
	if int64(len(h.Initial)) > writes {
		r.add("harness", "%d preloaded points but only %d write acquisitions", len(h.Initial), writes)
		return nil
	}
	claimedBy := make([]int, writes+1)
	for seq := range int64(len(h.Initial)) {
		claimedBy[seq+1] = preloaded
	}
	var drains []int
	reads := map[int64][]int{}
	for i, op := range ops {
		if op.Err != nil && !op.Refused {
			continue
		}
		switch op.Kind {
		case CollectorRecord, CollectorPrune:
			if op.Writes < 1 || op.Writes > writes {
				r.add("harness", "%s claims write %d of %d", op, op.Writes, writes)
				return nil
			}
			if j := claimedBy[op.Writes]; j == preloaded {
				r.add("harness", "%s claims write %d, a preloaded point's", op, op.Writes)
				return nil
			} else if j != 0 {
				r.add("harness", "%s and %s both claim write %d", ops[j-1], op, op.Writes)
				return nil
			}
			claimedBy[op.Writes] = i + 1
		case CollectorDrain:
			drains = append(drains, i)
		case CollectorQuery, CollectorSnapshot:
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
		return nil
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
	for _, y := range h.Yields {
		n, _ := slices.BinarySearch(unclaimed, y.Writes+1) // acquisitions <= y.Writes
		if y.WriteHeld && claimedBy[y.Writes] == 0 {
			r.add("DR-3", "at drain yield %d, in the middle of the split, a drain held the write lock (acquisition %d)", y.N, y.Writes)
		}
		if n%2 != 1 {
			r.add("DR-4", "at drain yield %d, %d drain acquisitions of the write lock had happened: want an odd number (exactly one drain between its swaps)", y.N, n)
		} else if d := owner[unclaimed[n-1]]; d < len(r.Drains) {
			r.Drains[d].Yields = append(r.Drains[d].Yields, y)
		}
		if y.DrainMutexProbed && !y.DrainMutexHeld {
			r.add("DR-4", "at drain yield %d, in the middle of the drain, the drain mutex was free", y.N)
		}
	}
	if r.Has("DR-4") {
		return nil // the drains cannot be told apart; the replay would only add noise
	}
	for i := range r.Drains {
		r.Drains[i].Want.Buffered = -1 // filled in by the replay
	}
	replay(r, h, claimedBy, owner, reads, lim)
	return &opIndex{claimedBy: claimedBy}
}

// checkWaits counts, per drain, the records issued inside its split and
// those that waited for a drain's hold of the write lock; a record or prune
// issued inside a split must not wait for one (DR-3).
func checkWaits(r *CollectorReport, h *CollectorHistory) {
	if len(r.Violations.Of()) > 0 {
		return
	}
	lockTimes := func(seq int64) (int64, int64) {
		if seq < 1 || seq > int64(len(h.Writes)) {
			return 0, 0
		}
		w := h.Writes[seq-1]
		return w.Acquired, w.Released
	}
	type hold struct{ acq, rel int64 }
	var holds []hold
	for _, f := range r.Drains {
		for _, seq := range []int64{f.Swap, f.Put} {
			a, rel := lockTimes(seq)
			holds = append(holds, hold{a, rel})
		}
	}
	for _, op := range h.Ops {
		if (op.Kind != CollectorRecord && op.Kind != CollectorPrune) || op.Err != nil {
			continue
		}
		acq, _ := lockTimes(op.Writes)
		var waitedFor *hold
		for i, hd := range holds {
			if hd.acq < acq && op.Call < hd.rel {
				waitedFor = &holds[i]
				break
			}
		}
		if waitedFor != nil && op.Kind == CollectorRecord {
			r.RecordsWaited++
		}
		for i := range r.Drains {
			f := &r.Drains[i]
			_, swapRel := lockTimes(f.Swap)
			putAcq, _ := lockTimes(f.Put)
			if op.Call > swapRel && acq < putAcq {
				if op.Kind == CollectorRecord {
					f.IssuedInSplit++
					if n := len(f.Yields); n > 0 && op.Yield == f.Yields[n-1].N {
						f.IssuedAfterSplit++
					}
				}
				if waitedFor != nil {
					r.add("DR-3", "%s, issued during the split of %s, waited for a drain's hold of the write lock (held from tick %d to %d)",
						op, f.Op, waitedFor.acq, waitedFor.rel)
				}
			}
		}
	}
}

// countInterleavings fills r.Interleavings.
func countInterleavings(r *CollectorReport, h *CollectorHistory, c *opIndex) {
	in := &r.Interleavings
	for i := range r.Drains {
		f := &r.Drains[i]
		in.RecordsInSplit += f.IssuedInSplit
		in.RecordsAfterSplit += f.IssuedAfterSplit
		for _, y := range f.Yields {
			n := 0
			for _, e := range h.Ops {
				if e.Kind == CollectorDrain && e.ID != f.Op.ID && e.Call < y.Clock && y.Clock < e.Return {
					n++
				}
			}
			if n > 0 {
				in.DrainWaitingInSplit++
			}
			f.WaitingDrains = max(f.WaitingDrains, n)
		}
	}
	for _, op := range h.Ops {
		switch {
		case op.Err != nil:
		case op.Kind == CollectorPrune:
			for _, f := range r.Drains {
				if f.Swap < op.Writes && op.Writes < f.Put {
					in.PrunesInSplit++
				}
			}
		case op.Kind == CollectorDrain:
			// The write held at the drain's call: a prune's?
			seq := op.WritesAtCall
			if seq < 1 || seq > int64(len(h.Writes)) {
				break
			}
			w := h.Writes[seq-1]
			if j := c.claimedBy[seq]; j > 0 && h.Ops[j-1].Kind == CollectorPrune && w.Acquired < op.Call && (w.Released == 0 || op.Call < w.Released) {
				in.DrainsDuringPrune++
			}
		}
	}
	for _, d := range r.Deviations {
		if len(d.Got) < len(d.Want) {
			in.QueryDeviations++
		}
	}
}

// checkConservation checks that no point was drained twice and that the
// points never drained are exactly as many as the prunes discarded (DR-4:
// concurrent drains lose and duplicate no point). The history should end
// with a drain of everything.
func checkConservation(r *CollectorReport, h *CollectorHistory) {
	var values []float64 // every drained point's value
	var pruned, drained int64
	for _, op := range h.Ops {
		if op.Err != nil {
			continue
		}
		switch op.Kind {
		case CollectorDrain:
			for _, p := range op.Out.Points {
				values = append(values, p.Value)
			}
			drained += int64(len(op.Out.Points))
			for _, b := range op.Buckets {
				drained += b.Count
			}
		case CollectorPrune:
			pruned += op.Out.Count
		}
	}
	slices.Sort(values)
	for i := 1; i < len(values); i++ {
		if values[i] == values[i-1] && (i == 1 || values[i-1] != values[i-2]) {
			r.Duplicated++
			r.add("DR-4", "the point with value %g was drained more than once", values[i])
		}
	}
	recorded := int64(len(h.Initial))
	for _, op := range h.Ops {
		if op.Kind == CollectorRecord && op.Err == nil {
			recorded++
		}
	}
	if n := recorded - drained - pruned - r.Remaining; n != 0 {
		r.Unaccounted = n
		r.add("DR-4", "%d points recorded, %d drained, %d pruned, %d still buffered: %d unaccounted for (lost, or drained twice)",
			recorded, drained, pruned, r.Remaining, n)
	}
}

// replay walks the write acquisitions in order, with each read after the
// writes it saw.
func replay(r *CollectorReport, h *CollectorHistory, claimedBy []int, owner map[int64]int, reads map[int64][]int, lim CollectorLimits) {
	ops := h.Ops
	// The sequential model's state, in recorded order. Every sequence number
	// adds at most one point, so it never outgrows this; it is partitioned
	// in place, so a prune or swap does not copy it into a new array either.
	state := make([]model.Point, 0, len(claimedBy))
	lay := newChunkModel(lim.ChunkPoints)
	inSplit := -1 // index into r.Drains of the drain between its swaps
	var kept map[string]*mseries
	putBacks := 0
	doReads := func(w int64) {
		for _, i := range reads[w] {
			checkRead(r, ops[i], state, lay, inSplit >= 0, putBacks > 0)
		}
	}
	doReads(0)
	for seq := int64(1); seq < int64(len(claimedBy)); seq++ {
		if j := claimedBy[seq]; j == preloaded {
			p := h.Initial[seq-1]
			state = append(state, p)
			lay.record(p)
		} else if j != 0 {
			op := ops[j-1]
			switch op.Kind {
			case CollectorRecord:
				if op.Refused {
					break
				}
				p := model.Point{Key: op.In.Key, TS: op.In.TS, Value: op.In.Value}
				state = append(state, p)
				lay.record(p)
				if inSplit >= 0 {
					r.Drains[inSplit].RecordsBetween++
				}
			case CollectorPrune:
				drained, k := model.PartitionInPlace(state, op.In.Cutoff)
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
				drained, k := model.PartitionInPlace(state, f.Op.In.Cutoff)
				state = k
				kept, f.Want = lay.swap(f.Op.In.Cutoff)
				checkDrained(r, f.Op, model.GroupByKey(drained), h.Width)
			} else {
				afterKept, newKeys := lay.putBack(kept, &f.Want)
				r.Interleavings.PutBackAfterKept += int64(afterKept)
				r.Interleavings.PutBackNewKey += int64(newKeys)
				inSplit = -1
				putBacks++
			}
		}
		doReads(seq)
	}
	r.Remaining = int64(len(state))
}

func checkDrained(r *CollectorReport, op CollectorOp, want []model.Point, width int64) {
	if op.Aggregated {
		if wantB := model.Aggregate(want, width); !slices.Equal(op.Buckets, wantB) {
			r.add("DR-1", "%s: its buckets differ from the aggregated plain partition at its first swap: %s", op, firstBucketDiff(wantB, op.Buckets))
		}
		return
	}
	if !slices.Equal(op.Out.Points, want) {
		r.add("DR-1", "%s: the drained points differ from the plain partition at its first swap: %s", op, firstPointDiff(want, op.Out.Points))
	}
	// The points alone hide how they were grouped: an empty or repeated
	// group changes what a caller iterating the groups sees.
	if wantG := groupKeys(want); !slices.Equal(op.Groups, wantG) {
		r.add("DR-1", "%s: returned %d groups %s; the plain partition has points under %d keys %s",
			op, len(op.Groups), quoteKeys(op.Groups), len(wantG), quoteKeys(wantG))
	}
}

// groupKeys is the key of each run of points with one key, in order.
func groupKeys(pts []model.Point) []string {
	var keys []string
	for i, p := range pts {
		if i == 0 || pts[i-1].Key != p.Key {
			keys = append(keys, p.Key)
		}
	}
	return keys
}

// quoteKeys shows up to eight keys, enough to see where two lists part.
func quoteKeys(keys []string) string {
	const shown = 8
	if len(keys) <= shown {
		return fmt.Sprintf("%q", keys)
	}
	return fmt.Sprintf("%q and %d more", keys[:shown], len(keys)-shown)
}

// checkStats compares a drain's own account with the replayed layout. It
// is a cross-check of the collector's self-description: the verdicts of
// DR-2 and DR-6 rest on what the lock log and the inspections saw.
func checkStats(r *CollectorReport, f *DrainFacts, writes []WriteSection, lim CollectorLimits) {
	got := f.Op.Stats
	if f.Swap >= 1 && f.Put >= 1 && f.Swap <= int64(len(writes)) && f.Put <= int64(len(writes)) {
		// The holds as the lock log timed them, from outside the collector.
		swap, put := writes[f.Swap-1].Held, writes[f.Put-1].Held
		f.Want.LockHeld, f.Want.MaxLockHeld = swap+put, max(swap, put)
		if got.LockHeld != f.Want.LockHeld || got.MaxLockHeld != f.Want.MaxLockHeld {
			r.add("DR-8", "%s: says it held the write lock %v in all and %v at most; the clock readings it took within its two holds span %v and %v",
				f.Op, got.LockHeld, got.MaxLockHeld, swap, put)
		}
	}
	want := f.Want
	if got.MovedUnderLock != want.MovedUnderLock || got.RecordedDuringSplit != want.RecordedDuringSplit || got.WriteLocks != 2 ||
		f.RecordsBetween-f.PrunedBetween != got.MovedUnderLock {
		r.add("DR-2", "%s: says it moved %d points under the write lock (%d write locks, %d recorded during the split by its count); the clients recorded %d points between its two acquisitions (%d pruned meanwhile); %d were buffered",
			f.Op, got.MovedUnderLock, got.WriteLocks, got.RecordedDuringSplit, f.RecordsBetween, f.PrunedBetween, got.Buffered)
	}
	if got.Buffered != want.Buffered || got.Drained != want.Drained || got.Kept != want.Kept || got.Keys != want.Keys {
		r.add("DR-1", "%s: buffered/drained/kept/keys %d/%d/%d/%d, the model says %d/%d/%d/%d",
			f.Op, got.Buffered, got.Drained, got.Kept, got.Keys, want.Buffered, want.Drained, want.Kept, want.Keys)
	}
	if got.ChunksMoved != want.ChunksMoved || got.ChunksSplit != want.ChunksSplit || got.PointsCopied != want.PointsCopied ||
		got.ChunksRecordedDuringSplit != want.ChunksRecordedDuringSplit {
		r.add("DR-6", "%s: says chunks moved/split/points copied/chunks recorded during the split %d/%d/%d/%d; chunks of at most %d points predict %d/%d/%d/%d",
			f.Op, got.ChunksMoved, got.ChunksSplit, got.PointsCopied, got.ChunksRecordedDuringSplit, lim.ChunkPoints,
			want.ChunksMoved, want.ChunksSplit, want.PointsCopied, want.ChunksRecordedDuringSplit)
	}
}

func checkRead(r *CollectorReport, op CollectorOp, state []model.Point, lay *chunkModel, inSplit, afterPutBack bool) {
	r.Reads++
	if inSplit {
		r.ReadsInSplit++
	}
	var want, live, got []model.Point
	switch op.Kind {
	case CollectorQuery:
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
	case CollectorSnapshot:
		want, live, got = model.GroupByKey(state), lay.points(""), op.Snapshot
	}
	switch {
	case slices.Equal(got, want):
	case inSplit && slices.Equal(got, live):
		r.Deviations = append(r.Deviations, CollectorDeviation{Op: op, Want: want, Got: got})
	case afterPutBack && sameSet(got, want):
		r.add("DR-5", "%s: right points, wrong order: %s (each key must read as its kept points, then the points recorded during the split)", op, firstPointDiff(want, got))
	default:
		r.add("DR-7", "%s: not the model's answer at its position in the lock order%s: %s", op, map[bool]string{true: " (inside a split, nor the live map's)"}[inSplit], firstPointDiff(want, got))
	}
	if g := groupKeys(got); op.Kind == CollectorSnapshot && !slices.Equal(op.Groups, g) {
		r.add("DR-7", "%s: returned %d groups %s for points under %d keys %s", op, len(op.Groups), quoteKeys(op.Groups), len(g), quoteKeys(g))
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

func firstPointDiff(want, got []model.Point) string {
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

// CollectorEvent is one step of a history in the collector's lock order, for
// replaying it into another design (DR-11's differential). It is a point
// recorded (preloaded or by a Record), a prune at its write, or a drain at
// its first swap. The first swap is where a drain's answer is decided.
type CollectorEvent struct {
	Kind  CollectorKind // CollectorRecord, CollectorPrune or CollectorDrain
	Point model.Point   // a record's point
	Op    *CollectorOp  // the prune or drain (nil for a preloaded point)
}

// CollectorOrder returns the history's records, prunes and drains in the
// order of the collector's write lock, as CheckCollector linearizes them.
// It fails when the lock log cannot be matched to the operations (a drain
// that did not take the lock exactly twice).
func CollectorOrder(h *CollectorHistory) ([]CollectorEvent, error) {
	writes := int64(len(h.Writes))
	if int64(len(h.Initial)) > writes {
		return nil, fmt.Errorf("checks: %d preloaded points but only %d write acquisitions", len(h.Initial), writes)
	}
	by := make([]int, writes+1)
	for seq := range int64(len(h.Initial)) {
		by[seq+1] = preloaded
	}
	var drains []int
	for i, op := range h.Ops {
		if op.Err != nil {
			continue
		}
		switch op.Kind {
		case CollectorRecord, CollectorPrune:
			if op.Writes < 1 || op.Writes > writes || by[op.Writes] != 0 {
				return nil, fmt.Errorf("checks: %s claims write %d, which is out of range or claimed twice", op, op.Writes)
			}
			by[op.Writes] = i + 1
		case CollectorDrain:
			drains = append(drains, i)
		}
	}
	slices.SortStableFunc(drains, func(a, b int) int { return cmp.Compare(h.Ops[a].Return, h.Ops[b].Return) })
	// At most one event per write acquisition (a drain's two are one):
	// sized up front, as a preload makes up to 1.2 million.
	out := make([]CollectorEvent, 0, writes)
	unclaimed := 0
	for seq := int64(1); seq <= writes; seq++ {
		switch j := by[seq]; {
		case j == preloaded:
			out = append(out, CollectorEvent{Kind: CollectorRecord, Point: h.Initial[seq-1]})
		case j > 0:
			op := &h.Ops[j-1]
			e := CollectorEvent{Kind: op.Kind, Op: op}
			if op.Kind == CollectorRecord {
				e.Point = model.Point{Key: op.In.Key, TS: op.In.TS, Value: op.In.Value}
			}
			out = append(out, e)
		default:
			if unclaimed%2 == 0 {
				if unclaimed/2 >= len(drains) {
					return nil, fmt.Errorf("checks: more unclaimed write acquisitions than two per drain (%d drains)", len(drains))
				}
				out = append(out, CollectorEvent{Kind: CollectorDrain, Op: &h.Ops[drains[unclaimed/2]]})
			}
			unclaimed++
		}
	}
	if unclaimed != 2*len(drains) {
		return nil, fmt.Errorf("checks: %d drains took the write lock %d times, want 2 each", len(drains), unclaimed)
	}
	return out, nil
}
