package drainsim

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/collector"
	"github.com/windtunnel/windtunnel/model"
)

// Kind is the kind of a recorded operation.
type Kind uint8

// The operations a world records.
const (
	KindRecord   Kind = iota + 1 // Collector.Record
	KindDrain                    // Collector.DrainPoints, or Collector.Drain when Aggregated
	KindPrune                    // Collector.Prune
	KindQuery                    // Collector.Query
	KindSnapshot                 // Collector.Snapshot
)

func (k Kind) String() string {
	switch k {
	case KindRecord:
		return "record"
	case KindDrain:
		return "drain"
	case KindPrune:
		return "prune"
	case KindQuery:
		return "query"
	case KindSnapshot:
		return "snapshot"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Op is one operation on the collector as a client saw it: its input and
// output in the terms of model.CollectorStep, when it was called and when it
// returned on the world's logical clock (every call and every return is one
// tick, so ticks order events exactly), and the probe's count of write-lock
// acquisitions at its call and at its return.
type Op struct {
	ID   int
	Task string
	Kind Kind
	In   model.CollectorInput
	// Out is the output: drained points (grouped by key, recorded order per
	// key), the pruned count, or the queried points.
	Out model.CollectorOutput
	// Aggregated marks a drain through Collector.Drain: Buckets is its
	// output and Out.Points is empty.
	Aggregated bool
	Buckets    []collector.Bucket
	// Snapshot is a KindSnapshot's output: every buffered point, grouped by
	// key in key order.
	Snapshot []model.Point
	// Stats is a drain's DrainStats.
	Stats collector.DrainStats
	Err   error

	Call, Return int64
	// WritesAtCall and Writes are Probe.Writes at the call and right after
	// the return. For a Record or Prune, Writes is its own position in the
	// lock order; for a Query or Snapshot, the number of writes it saw.
	WritesAtCall, Writes int64

	// Hook is the number of the drain yield (Hook.N) this operation was
	// issued from, or 0.
	Hook int
}

func (o Op) String() string {
	switch o.Kind {
	case KindRecord:
		return fmt.Sprintf("#%d %s: record(%s, %s, %g) [write %d]", o.ID, o.Task, o.In.Key, tsString(o.In.TS), o.In.Value, o.Writes)
	case KindDrain:
		what := fmt.Sprintf("%d points", len(o.Out.Points))
		if o.Aggregated {
			what = fmt.Sprintf("%d buckets", len(o.Buckets))
		}
		return fmt.Sprintf("#%d %s: drain(< %s) -> %s [writes %d..%d]", o.ID, o.Task, tsString(o.In.Cutoff), what, o.WritesAtCall, o.Writes)
	case KindPrune:
		return fmt.Sprintf("#%d %s: prune(< %s) -> %d [write %d]", o.ID, o.Task, tsString(o.In.Cutoff), o.Out.Count, o.Writes)
	case KindQuery:
		return fmt.Sprintf("#%d %s: query(%s, [%s, %s)) -> %d points [after write %d]", o.ID, o.Task, o.In.Key, tsString(o.In.From), tsString(o.In.To), len(o.Out.Points), o.Writes)
	case KindSnapshot:
		return fmt.Sprintf("#%d %s: snapshot -> %d points [after write %d]", o.ID, o.Task, len(o.Snapshot), o.Writes)
	}
	return fmt.Sprintf("#%d %s: %v", o.ID, o.Task, o.Kind)
}

// HookObs is what the probe saw at one yield of a drain, on the drain's
// task.
type HookObs struct {
	N         int   // 1-based over the run
	Clock     int64 // logical clock at the yield
	Writes    int64 // write acquisitions so far
	WriteHeld bool  // the write lock was held at the yield
	// DrainMutexProbed and DrainMutexHeld: the drain mutex was probed, and
	// was held (DR-4).
	DrainMutexProbed, DrainMutexHeld bool
	// Injected counts the records issued from this yield, Completed those
	// that completed before the drain went on (when the plan waits for them).
	Injected, Completed int
	// Waited is the virtual time the drain waited there for them (0 unless
	// something held them up, or the run adds time per step).
	Waited time.Duration
}
