package sim

import (
	"fmt"
	"math/rand/v2"
)

// The world's choices: every value a run draws through Sim.Rand, and every
// answer of Sim.Keep, in the order the run asked for them. Recorded
// (Config.RecordChoices), they are the run's workload and faults as data;
// replayed (Config.Choices), an edited list is an edited run. This is how
// rapid and Hypothesis shrink: a choice list that is shorter, or holds
// smaller values, means fewer operations, smaller values and no fault,
// because past the end of the list every draw is the smallest value that
// terminates (1: a zero would spin math/rand's rejection sampling forever)
// and every Keep answers false. A run that keeps drawing past the end
// (MaxOverrun draws) panics, so an edited list cannot hang a run. The schedule is not in the list: it has its own stream (and its own
// recording, Result.Decisions), so a shrinker edits the two apart.

// Keepable names what a Keep decision keeps or drops.
type Keepable uint8

const (
	// KeepOperation is one client operation of a workload: dropped, the
	// client skips it.
	KeepOperation Keepable = iota + 1
	// KeepFault is one injected fault (a lost message, a failed read, a
	// restart): dropped, the world does not inject it.
	KeepFault
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

// KeepSite is where in Result.Choices a Keep decision was made.
type KeepSite struct {
	Index int // into Result.Choices
	What  Keepable
}

// DefaultMaxChoices bounds a recorded choice list (Config.MaxChoices): a
// shrinker works on runs far shorter, and a long run's list is cut, not
// grown without limit (Result.ChoicesCut says so).
const DefaultMaxChoices = 1 << 22

// MaxOverrun is how many draws past the end of a replayed choice list a run
// may make before it panics.
const MaxOverrun = 1 << 20

// worldSource is the world stream's source: the seed's PCG, or a given list
// of choices; optionally recording what it hands out.
type worldSource struct {
	pcg    *rand.PCG
	replay bool // draw from list, not from pcg
	list   []uint64
	pos    int

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
		w.keep(v)
	}
	return v
}

func (w *worldSource) keep(v uint64) {
	if len(w.rec) >= w.max {
		w.cut = true
		return
	}
	w.rec = append(w.rec, v)
}

// decide answers one Keep: true from the seed (which draws nothing, so
// that adding a Keep to a workload changes none of its seeds), the list's
// entry (non-zero keeps) when replaying.
func (w *worldSource) decide(what Keepable) bool {
	keep := true
	if w.replay {
		keep = w.pos < len(w.list) && w.list[w.pos] != 0
		w.pos++
	}
	if w.record && !w.cut {
		v := uint64(0)
		if keep {
			v = 1
		}
		w.sites = append(w.sites, KeepSite{Index: len(w.rec), What: what})
		w.keep(v)
	}
	return keep
}

// Keep asks whether the run includes one optional element of its workload
// or fault plan: a client operation (KeepOperation) or an injected fault
// (KeepFault). A seed's own run keeps everything, and asking draws nothing
// from the world stream; a run replayed from an edited choice list
// (Config.Choices) keeps what the list says, which is how a shrinker drops
// operations and faults one at a time. A workload asks before each
// operation and skips the ones dropped; a fault plan asks once it has
// decided to inject.
//
// Keep is a choice of the world stream, like a draw from Rand: call it in a
// deterministic place.
func (s *Sim) Keep(what Keepable) bool {
	if s.worldSrc.replay {
		// Only a replayed list is state the answer depends on; a seed's
		// Keep is always true and orders nothing (see Explore).
		s.touch(objWorld)
	}
	keep := s.worldSrc.decide(what)
	if keep {
		switch what {
		case KeepOperation:
			s.kept.Operations++
		case KeepFault:
			s.kept.Faults++
		}
	} else {
		switch what {
		case KeepOperation:
			s.dropped.Operations++
		case KeepFault:
			s.dropped.Faults++
		}
	}
	return keep
}

// Kept counts a run's Keep decisions by what they were about.
type Kept struct {
	Operations int64
	Faults     int64
}
