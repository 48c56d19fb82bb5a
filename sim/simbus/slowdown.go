package simbus

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Slowdown is a window of virtual time during which the link to one
// subscriber is slow: a message sent in [Start, End) spends Extra more in
// flight, as behind Toxiproxy's latency toxic on the subscriber's
// connection. The link stays FIFO, so a message sent after the window
// still arrives after the slowed ones. A slowdown draws nothing from the
// run's random stream; like every fault, a shrinker may drop it.
type Slowdown struct {
	Window
	Extra time.Duration
}

func (sd Slowdown) String() string { return fmt.Sprintf("%v+%v", sd.Window, sd.Extra) }

// validateSlowdowns reports the first problem with sds: bounded in number
// like partitions, each window non-empty and from the origin on, each
// extra positive and at most maxDelay, and no two windows overlapping.
func validateSlowdowns(sds []Slowdown) error {
	if len(sds) > maxPartitions {
		return fmt.Errorf("simbus: %d slowdown windows, at most %d", len(sds), maxPartitions)
	}
	ws := sortedSlowdowns(sds)
	for i, sd := range ws {
		switch {
		case sd.Start < 0 || sd.End <= sd.Start:
			return fmt.Errorf("simbus: slowdown window %v must have 0 <= Start < End", sd.Window)
		case sd.Extra <= 0 || sd.Extra > maxDelay:
			return fmt.Errorf("simbus: slowdown %v must add more than 0 and at most %v", sd, maxDelay)
		case i > 0 && sd.Start < ws[i-1].End:
			return fmt.Errorf("simbus: slowdown windows %v and %v overlap", ws[i-1].Window, sd.Window)
		}
	}
	return nil
}

func sortedSlowdowns(sds []Slowdown) []Slowdown {
	ws := slices.Clone(sds)
	slices.SortFunc(ws, func(a, b Slowdown) int { return cmp.Compare(a.Start, b.Start) })
	return ws
}

// slowdownAt returns the extra time in flight of a message sent at sent
// (an offset from sim.Epoch), 0 outside every window.
func (f *Faults) slowdownAt(sent time.Duration) time.Duration {
	for _, sd := range f.Slowdowns {
		if sd.Start <= sent && sent < sd.End {
			return sd.Extra
		}
	}
	return 0
}

// slowdownsString describes the windows for Faults.String: "" when there
// are none, so that the headers of runs without them do not change.
func slowdownsString(sds []Slowdown) string {
	if len(sds) == 0 {
		return ""
	}
	parts := make([]string, 0, len(sds))
	for _, sd := range sortedSlowdowns(sds) {
		parts = append(parts, sd.String())
	}
	return " slowdowns=" + strings.Join(parts, " ")
}
