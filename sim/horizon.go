package sim

import (
	"strconv"
	"strings"
)

// Horizon is how far a recorded run got in each task's Keep calls: the
// calls it asked, by task key name and kind, and within the operation the
// task was in when the run ended. A run that fails stops there; a replay
// of it that goes on (the code without the fault under test, which does
// not fail there) asks calls the recording never saw. Keyed, such a call
// is unlisted, and an unlisted call is answered false: dropped. That is
// what a shrinker's edited run wants (everything it did not keep is gone),
// but not what a control run wants, which should see the world the seed
// would have gone on with. Keeps.Beyond set to the run's Horizon answers
// the calls past it true, and leaves every call the run asked as it was.
type Horizon struct {
	tasks map[string]taskHorizon // by task key name
}

// taskHorizon is one task's part of a Horizon.
type taskHorizon struct {
	asked [keepKinds]int // the task's own Keep calls, by kind
	// cur is the operation the task was in at the end (its count of
	// KeepOperation calls), curAsked the calls made inside it (Inside).
	cur      int
	curAsked [keepKinds]int
}

// horizon is the recorded run's Horizon: every task's Keep calls so far.
func (w *worldSource) horizon() *Horizon {
	h := &Horizon{tasks: make(map[string]taskHorizon, len(w.byTask))}
	for _, st := range w.byTask {
		th := taskHorizon{asked: st.asked, cur: st.asked[KeepOperation]}
		if st.opSet && st.op == th.cur {
			th.curAsked = st.opAsked
		}
		h.tasks[st.name] = th
	}
	return h
}

// past reports whether a Keep call of the kind, keyed key, lies past the
// horizon: a call the recorded run never asked because it had ended. A
// call of a task the run never had is past it; so is one inside an
// operation the task had not begun, or inside the one it was in, past the
// calls made there. A call inside an earlier operation is not: the task
// had moved on, and an unlisted one there was dropped.
func (h *Horizon) past(what Keepable, key KeepKey) bool {
	owner, op, inside := strings.Cut(key.Task, opMark)
	th, ok := h.tasks[owner]
	if !ok {
		return true
	}
	if !inside {
		return key.N >= th.asked[what]
	}
	n, err := strconv.Atoi(op)
	switch {
	case err != nil:
		return false // not a key taskKey makes: leave it dropped
	case n != th.cur:
		return n > th.cur
	}
	return key.N >= th.curAsked[what]
}
