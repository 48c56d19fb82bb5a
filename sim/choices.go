package sim

import (
	"fmt"
	"math/rand/v2"
)

// The world's choices: every value a run draws through Sim.Rand, and every
// answer of Sim.Keep. Recorded (Config.RecordChoices), they are the run's
// workload and faults as data; replayed (Config.ReplayChoices), an edited
// copy is an edited run. This is how rapid and Hypothesis shrink: shorter
// lists, smaller values and dropped elements mean fewer operations, smaller
// values and no fault. The schedule is not among them: it has its own
// stream (and its own recording, Result.Decisions), so a shrinker edits the
// two apart.
//
// The draws are one list in the order they were made; past its end every
// draw is the smallest value that terminates (1: a zero would spin
// math/rand's rejection sampling forever), and a run that keeps drawing
// past the end (MaxOverrun draws) panics, so an edited list cannot hang a
// run. The Keep answers are lists of their own, one per Keepable, indexed
// by the ordinal of the Keep call of that kind: dropping the 7th operation
// leaves the 8th the 8th, whatever the 7th would have drawn. Past the end
// of a Keep list the answer is false, so a list cut short drops every
// later operation (or fault).

// Keepable names what a Keep decision keeps or drops.
type Keepable uint8

const (
	// KeepOperation is one client operation of a workload: dropped, the
	// client skips it.
	KeepOperation Keepable = iota + 1
	// KeepFault is one injected fault (a lost message, a failed read, a
	// restart): dropped, the world does not inject it.
	KeepFault

	keepKinds = 3 // array size for per-kind state, indexed by Keepable
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

func (k Keepable) valid() bool { return k == KeepOperation || k == KeepFault }

// KeepSite is one Keep decision of a recorded run.
type KeepSite struct {
	What  Keepable
	Index int    // the ordinal among the run's Keep calls of this kind
	Label string // what it is about, e.g. the key an operation reads (KeepFor)
	Kept  bool
}

// Keeps are the Keep answers a run replays, one list per kind.
type Keeps struct {
	Operations []bool
	Faults     []bool
}

func (k *Keeps) list(what Keepable) []bool {
	if what == KeepFault {
		return k.Faults
	}
	return k.Operations
}

// KeepsOf rebuilds the Keep lists of a recorded run from its sites.
func KeepsOf(sites []KeepSite) Keeps {
	var k Keeps
	for _, s := range sites {
		switch s.What {
		case KeepOperation:
			k.Operations = append(k.Operations, s.Kept)
		case KeepFault:
			k.Faults = append(k.Faults, s.Kept)
		}
	}
	return k
}

// DefaultMaxChoices bounds a recorded choice list (Config.MaxChoices): a
// shrinker works on runs far shorter, and a long run's list is cut, not
// grown without limit (Result.ChoicesCut says so). It bounds the recorded
// Keep sites too.
const DefaultMaxChoices = 1 << 22

// MaxOverrun is how many draws past the end of a replayed choice list a run
// may make before it panics.
const MaxOverrun = 1 << 20

// worldSource is the world stream's source: the seed's PCG, or a given list
// of choices; optionally recording what it hands out.
type worldSource struct {
	pcg    *rand.PCG
	replay bool // draw from list and keeps, not from pcg
	list   []uint64
	pos    int
	keeps  Keeps
	asked  [keepKinds]int // Keep calls so far, by kind

	record bool
	max    int
	rec    []uint64
	cut    bool
	sites  []KeepSite
}

// Uint64 implements rand.Source.
func (w *worldSource) Uint64() uint64 {
	var v uint64
	if w.replay {
		v = 1
		if w.pos < len(w.list) {
			v = w.list[w.pos]
		} else if w.pos-len(w.list) >= MaxOverrun {
			panic(fmt.Sprintf("sim: the run drew %d values past the end of its %d choices: an edited choice list that never ends the run", MaxOverrun, len(w.list)))
		}
		w.pos++
	} else {
		v = w.pcg.Uint64()
	}
	if w.record {
		if len(w.rec) >= w.max {
			w.cut = true
		} else {
			w.rec = append(w.rec, v)
		}
	}
	return v
}

// decide answers one Keep: true from the seed (which draws nothing, so
// that adding a Keep to a workload changes none of its seeds), the kind's
// list entry when replaying (false past its end).
func (w *worldSource) decide(what Keepable, label string) bool {
	i := w.asked[what]
	w.asked[what]++
	keep := true
	if w.replay {
		l := w.keeps.list(what)
		keep = i < len(l) && l[i]
	}
	if w.record {
		if len(w.sites) >= w.max {
			w.cut = true
		} else {
			w.sites = append(w.sites, KeepSite{What: what, Index: i, Label: label, Kept: keep})
		}
	}
	return keep
}

// Keep asks whether the run includes one optional element of its workload
// or fault plan: a client operation (KeepOperation) or an injected fault
// (KeepFault). A seed's own run keeps everything, and asking draws nothing
// from the world stream; a run replayed with edited Keep lists
// (Config.Keeps) keeps what they say, which is how a shrinker drops
// operations and faults. A workload asks before each operation, after its
// own draws, and skips the ones dropped; a fault plan asks once it has
// decided to inject.
//
// Keep is a choice of the world, like a draw from Rand: call it in a
// deterministic place.
func (s *Sim) Keep(what Keepable) bool { return s.KeepFor(what, "") }

// KeepFor is Keep with a label saying what the element is about: the key
// an operation reads or writes, the connection it touches. A shrinker
// tries first to keep only the elements whose labels the failure names
// (the key of the stale read, say), which drops most of a workload in one
// re-run.
func (s *Sim) KeepFor(what Keepable, label string) bool {
	if !what.valid() {
		panic(fmt.Sprintf("sim: Keep(%d): want KeepOperation or KeepFault", what))
	}
	if s.worldSrc.replay {
		// Only replayed lists are state the answer depends on; a seed's
		// Keep is always true and orders nothing (see Explore).
		s.touch(objWorld)
	}
	keep := s.worldSrc.decide(what, label)
	c := &s.kept
	if !keep {
		c = &s.dropped
	}
	switch what {
	case KeepOperation:
		c.Operations++
	case KeepFault:
		c.Faults++
	}
	return keep
}

// Kept counts a run's Keep decisions by what they were about.
type Kept struct {
	Operations int64
	Faults     int64
}

// Without returns a copy of k with the given Keep decisions of one kind
// dropped (by ordinal), for tests and shrinkers.
func (k Keeps) Without(what Keepable, ordinals ...int) Keeps {
	out := Keeps{Operations: append([]bool(nil), k.Operations...), Faults: append([]bool(nil), k.Faults...)}
	l := out.list(what)
	for _, i := range ordinals {
		if i >= 0 && i < len(l) {
			l[i] = false
		}
	}
	return out
}

// NoFaults returns a copy of k with every fault dropped.
func (k Keeps) NoFaults() Keeps {
	out := Keeps{Operations: append([]bool(nil), k.Operations...), Faults: make([]bool, len(k.Faults))}
	return out
}

// Of returns the kind's list.
func (k Keeps) Of(what Keepable) []bool { return k.list(what) }
