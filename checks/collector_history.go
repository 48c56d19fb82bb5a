package checks

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/model"
)

// This file is the history of a metrics collector (DR-1..DR-11): what a
// simulated world records about the collector under test, in terms that do
// not depend on its code. The checkers of collector.go, collector_chunks.go
// and collector_lin.go are pure functions of it.

// CollectorKind is the kind of a recorded collector operation.
type CollectorKind uint8

// The operations a collector history holds.
const (
	CollectorRecord   CollectorKind = iota + 1 // Record
	CollectorDrain                             // a drain (its points, or its buckets when Aggregated)
	CollectorPrune                             // Prune
	CollectorQuery                             // Query of one key
	CollectorSnapshot                          // Snapshot of every key
)

func (k CollectorKind) String() string {
	switch k {
	case CollectorRecord:
		return "record"
	case CollectorDrain:
		return "drain"
	case CollectorPrune:
		return "prune"
	case CollectorQuery:
		return "query"
	case CollectorSnapshot:
		return "snapshot"
	}
	return fmt.Sprintf("CollectorKind(%d)", uint8(k))
}

// CollectorOp is one operation on the collector as a client saw it: its input
// and output in the terms of model.CollectorStep, and when it was called and
// returned on the world's logical clock. Every call, return, lock acquisition
// and release, and drain yield is one tick, so ticks order events exactly. It
// also holds how many write-lock acquisitions the world had seen at its call
// and right after its return.
//
// Every recorded point must carry a value no other point has: the checkers
// follow points through drains, prunes and chunks by their values.
type CollectorOp struct {
	ID   int
	Task string
	Kind CollectorKind
	In   model.CollectorInput
	// Out is the output: drained points (grouped by key, recorded order per
	// key), the pruned count, or the queried points.
	Out model.CollectorOutput
	// Groups is the key of each group a DrainPoints or Snapshot returned,
	// in order: a group per key that has points in it, none for a key
	// without.
	Groups []string
	// Aggregated marks a drain into flush buckets: Buckets is its output
	// and Out.Points is empty.
	Aggregated bool
	Buckets    []model.Bucket
	// Snapshot is a CollectorSnapshot's output: every buffered point,
	// grouped by key in key order.
	Snapshot []model.Point
	// Stats is what the collector said about its own drain. The checkers
	// compare it with what they predict and observe from outside; no
	// verdict rests on it alone.
	Stats DrainCounts
	Err   error

	Call, Return int64
	// WritesAtCall and Writes are the write-lock acquisitions seen at the
	// call and right after the return. Under the simulator a task runs
	// without interruption from an acquisition to its next scheduling point.
	// So for a Record or Prune, Writes is its own acquisition's sequence
	// number (1-based). For a Query or Snapshot it is the number of writes it
	// saw.
	WritesAtCall, Writes int64

	// Yield is the number (DrainYield.N) of the drain yield this operation
	// was issued from, or 0.
	Yield int
	// Refused marks a record the collector refused under its write lock (a
	// full buffer): the acquisition is its own, and it changes nothing.
	Refused bool
}

func (o CollectorOp) String() string {
	switch o.Kind {
	case CollectorRecord:
		return fmt.Sprintf("#%d %s: record(%s, %s, %g) [write %d]", o.ID, o.Task, o.In.Key, tsString(o.In.TS), o.In.Value, o.Writes)
	case CollectorDrain:
		what := fmt.Sprintf("%d points", len(o.Out.Points))
		if o.Aggregated {
			what = fmt.Sprintf("%d buckets", len(o.Buckets))
		}
		return fmt.Sprintf("#%d %s: drain(< %s) -> %s [writes %d..%d]", o.ID, o.Task, tsString(o.In.Cutoff), what, o.WritesAtCall, o.Writes)
	case CollectorPrune:
		return fmt.Sprintf("#%d %s: prune(< %s) -> %d [write %d]", o.ID, o.Task, tsString(o.In.Cutoff), o.Out.Count, o.Writes)
	case CollectorQuery:
		return fmt.Sprintf("#%d %s: query(%s, [%s, %s)) -> %d points [after write %d]", o.ID, o.Task, o.In.Key, tsString(o.In.From), tsString(o.In.To), len(o.Out.Points), o.Writes)
	case CollectorSnapshot:
		return fmt.Sprintf("#%d %s: snapshot -> %d points [after write %d]", o.ID, o.Task, len(o.Snapshot), o.Writes)
	}
	return fmt.Sprintf("#%d %s: %v", o.ID, o.Task, o.Kind)
}

// DrainCounts is a drain's own account of what it did (the collector's
// DrainStats, in the checkers' terms).
type DrainCounts struct {
	Buffered, Drained, Kept, Keys                  int64
	RecordedDuringSplit, ChunksRecordedDuringSplit int64
	MovedUnderLock                                 int64
	ChunksMoved, ChunksSplit, PointsCopied         int64
	WriteLocks                                     int
	// LockHeld and MaxLockHeld: the drain's own total and longest hold of
	// the write lock (DR-8).
	LockHeld, MaxLockHeld time.Duration
}

// DrainYield is what the world saw at one scheduling point of a drain
// between its two swaps (the collector yields after each key of the split
// and once after the split), on the drain's own task.
type DrainYield struct {
	N         int   // 1-based over the run
	Clock     int64 // logical clock at the yield
	Writes    int64 // write acquisitions so far
	WriteHeld bool  // the write lock was held at the yield
	// DrainMutexProbed and DrainMutexHeld: the drain mutex was probed with
	// a try-lock, and was held (DR-4).
	DrainMutexProbed, DrainMutexHeld bool
	// Injected counts the records issued from this yield, Completed those
	// that completed before the drain went on (when the world waits for
	// them).
	Injected, Completed int
	// Dropped: the run's choices dropped this yield's records (sim.Keep, a
	// shrunk run): none was issued, which is not a record left incomplete.
	Dropped bool
	// Waited is the virtual time the drain waited there for them.
	Waited time.Duration
}

// WriteSection is one acquisition of the collector's write lock, seen from
// outside. It holds when the lock was acquired and released on the world's
// logical clock. When the world inspects the collector, it also holds the
// live buffered map right after the acquisition (Before) and right before the
// release (After). When the live map at the release is not the one at the
// acquisition (a drain's swap), OldAfter is the map live at the acquisition,
// walked again at the release.
type WriteSection struct {
	Acquired, Released int64
	// Held is the span of the clock readings the code took within this
	// hold, as handed out by the world's runtime: the hold as that code
	// could measure it (0 when it read the clock less than twice).
	Held          time.Duration
	Before, After *Layout
	OldAfter      *Layout
}

// Layout is the collector's buffered map as an inspection saw it: every key's
// chunks in list order, with the identity of each chunk and of its backing
// array. A checker can then tell a chunk that moved (same array) from one
// that was copied (a new array with the same points).
type Layout struct {
	Map    uintptr // identity of the map object
	Series []SeriesLayout
}

// Points counts the points of every chunk.
func (l *Layout) Points() int64 {
	if l == nil {
		return 0
	}
	var n int64
	for _, s := range l.Series {
		for _, c := range s.Chunks {
			n += int64(len(c.Points))
		}
	}
	return n
}

// SeriesLayout is one key's chunks.
type SeriesLayout struct {
	Key    string
	Header uintptr // identity of the key's list header
	// CountedPoints and CountedChunks are the header's own counts.
	CountedPoints, CountedChunks int64
	Chunks                       []ChunkLayout
}

// ChunkLayout is one chunk: its identity, its backing array's identity and
// capacity, the bounds it stores (which the split trusts), and its points in
// order as they were at the inspection.
type ChunkLayout struct {
	ID, Array    uintptr
	Cap          int
	MinTS, MaxTS int64
	Points       []ChunkPoint
}

// ChunkPoint is one point in a chunk.
type ChunkPoint struct {
	TS    int64
	Value float64
}

// CollectorHistory is everything a world recorded about one collector.
type CollectorHistory struct {
	// Initial are the points recorded before any operation was recorded,
	// in order: the first len(Initial) write acquisitions are theirs.
	Initial []model.Point
	// Ops are the operations in the order they returned.
	Ops []CollectorOp
	// Yields are the drain yields in the order they happened.
	Yields []DrainYield
	// Writes are the write-lock acquisitions in order; acquisition n
	// (1-based) is Writes[n-1].
	Writes []WriteSection
	// Width is the bucket width of aggregated drains, in ns.
	Width int64
}

// CollectorLimits are the source text's numbers the checkers judge by,
// from the claims table (never from the implementation).
type CollectorLimits struct {
	// ChunkPoints is the most points a chunk may hold (DR-6: 1,024).
	ChunkPoints int
}

// tsString shows a Unix-ns timestamp as seconds relative to the
// simulator's epoch (sim.Epoch, 2030-01-01 UTC).
func tsString(ts int64) string {
	return fmt.Sprintf("%+.3fs", time.Duration(ts-simEpochNs).Seconds())
}

// simEpochNs is sim.Epoch in Unix ns (checks does not import sim).
var simEpochNs = time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC).UnixNano()
