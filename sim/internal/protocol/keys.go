package protocol

import "strings"

// Keepable names what a Keep decision keeps or drops (sim.Keepable).
type Keepable uint8

const (
	// KeepOperation is one client operation of a workload: dropped, the
	// client skips it.
	KeepOperation Keepable = iota + 1
	// KeepFault is one injected fault (a lost message, a failed read, a
	// restart): dropped, the world does not inject it.
	KeepFault

	// KeepKinds sizes per-kind state indexed by Keepable (slot 0: draws).
	KeepKinds = 3
)

func (k Keepable) String() string {
	switch k {
	case KeepOperation:
		return "operation"
	case KeepFault:
		return "fault"
	}
	return "keepable(?)"
}

// Valid reports whether k is one of the two kinds.
func (k Keepable) Valid() bool { return k == KeepOperation || k == KeepFault }

// KeepSite is one Keep decision of a recorded run.
type KeepSite struct {
	What  Keepable
	Index int // its place among the recorded Keep calls of this kind (its list entry in KeepsOf)
	Key   KeepKey
	Label string // what it is about, e.g. the key an operation reads (KeepFor)
	Kept  bool
}

// KeepKey names one Keep call (or draw) independently of the other tasks:
// the task that made it and its ordinal among that task's calls of the
// kind. A task is named by its name, with "#k" appended for the k-th task
// of that name (k ≥ 2, in spawn order); a call outside every task has the
// empty name.
type KeepKey struct {
	Task string
	N    int
}

// OpMark joins a task's name and an operation's ordinal in the key of a
// draw or Keep call made inside the operation (sim's Inside): "client
// 3\x00op17". A task's key name holds no NUL, so the keys of a task and of
// its operations never meet.
const OpMark = "\x00op"

// Owner is the name of the task that made the call: the key's Task, less
// the operation it was made inside (Inside) if any.
func (k KeepKey) Owner() string {
	owner, _, _ := strings.Cut(k.Task, OpMark)
	return owner
}

// Kept counts a run's Keep decisions by what they were about.
type Kept struct {
	Operations int64
	Faults     int64
}
