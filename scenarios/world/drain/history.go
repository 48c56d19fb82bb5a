package drain

import (
	"github.com/windtunnel/windtunnel/checks"
)

// The world records into the collector history of package checks, whose
// checkers judge it; these names keep the world's code short.
type (
	// Op is one recorded operation.
	Op = checks.CollectorOp
	// Kind is the kind of a recorded operation.
	Kind = checks.CollectorKind
	// HookObs is what the world saw at one yield of a drain.
	HookObs = checks.DrainYield
)

// The operations a world records.
const (
	KindRecord   = checks.CollectorRecord   // Collector.Record
	KindDrain    = checks.CollectorDrain    // Collector.DrainPoints, or Collector.Drain when Aggregated
	KindPrune    = checks.CollectorPrune    // Collector.Prune
	KindQuery    = checks.CollectorQuery    // Collector.Query
	KindSnapshot = checks.CollectorSnapshot // Collector.Snapshot
)
