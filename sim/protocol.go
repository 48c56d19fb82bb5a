package sim

import (
	"time"

	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
)

// The shrink-and-replay protocol reaches into runs through these hooks,
// so that sim exports only what a workload author uses while sim/shrink,
// sim/simtest and the worlds' components under sim/ still get at a run's
// recorded choices. None of them is on the scheduler's path.
func init() {
	protocol.ConfigOf = func(cfg any) *protocol.Options { return &cfg.(*Config).replay }
	protocol.ResultOf = func(res any) *protocol.Recorded { return &res.(*Result).recorded }
	protocol.TraceTail = func(res any) ([]string, string) { return res.(*Result).traceTail() }
	protocol.Guided = func(decisions []int32) any { return newGuided(decisions) }
	protocol.Inside = func(s any) protocol.Scope { return s.(*Sim).inside() }
	protocol.Steps = func(s any) int64 { return s.(*Sim).stepsSoFar() }
	protocol.Interval = func(s any, from time.Time, object, format string, a ...any) record.EventID {
		return s.(*Sim).interval(from, object, format, a...)
	}
	protocol.Message = func(s any, kind record.EventKind, msg int64, subscriber, format string, a ...any) record.EventID {
		return s.(*Sim).message(kind, msg, subscriber, format, a...)
	}
}
