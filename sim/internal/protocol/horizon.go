package protocol

import (
	"strconv"
	"strings"
)

// Horizon is how far a recorded run got in each task's Keep calls. It holds
// the calls it asked, by task key name and kind, and within the operation
// the task was in when the run ended. A run that fails stops there. A replay
// of it that goes on (the code without the fault under test, which does not
// fail there) asks calls the recording never saw. Keyed, such a call is
// unlisted, and an unlisted call is answered false: dropped. That is what a
// shrinker's edited run wants (everything it did not keep is gone), but not
// what a control run wants, which should see the world the seed would have
// gone on with. Keeps.Beyond set to the run's Horizon answers the calls past
// it true, and leaves every call the run asked as it was.
type Horizon struct {
	Tasks map[string]TaskHorizon // by task key name
}

// TaskHorizon is one task's part of a Horizon.
type TaskHorizon struct {
	Asked [KeepKinds]int // the task's own Keep calls, by kind
	// Cur is the operation the task was in at the end (its count of
	// KeepOperation calls), CurAsked the calls made inside it (Inside).
	Cur      int
	CurAsked [KeepKinds]int
}

// Past reports whether a Keep call of the kind, keyed key, lies past the
// horizon: a call the recorded run never asked because it had ended. A
// call of a task the run never had is past it. So is one inside an
// operation the task had not begun, or inside the one it was in, past the
// calls made there. A call inside an earlier operation is not: the task
// had moved on, and an unlisted one there was dropped.
func (h *Horizon) Past(what Keepable, key KeepKey) bool {
	owner, op, inside := strings.Cut(key.Task, OpMark)
	th, ok := h.Tasks[owner]
	if !ok {
		return true
	}
	if !inside {
		return key.N >= th.Asked[what]
	}
	n, err := strconv.Atoi(op)
	switch {
	case err != nil:
		return false // not a key sim makes: leave it dropped
	case n != th.Cur:
		return n > th.Cur
	}
	return key.N >= th.CurAsked[what]
}
