package protocol

// Keeps are the Keep answers a run replays, one list per kind, and, for a
// keyed replay (KeepsOfRun), the draw or Keep call each entry is for.
type Keeps struct {
	Operations []bool
	Faults     []bool
	// OperationKeys and FaultKeys are as long as or longer than their
	// lists: answer i is for the call OperationKeys[i] (a key past the
	// list's end is answered false). ChoiceKeys, when set, makes the replay
	// keyed: Options.Choices[i] is the draw ChoiceKeys[i], and the Keep
	// answers are looked up by their keys. Nil ChoiceKeys: draws and
	// answers by the run's ordinals (the Keys are then not used).
	OperationKeys []KeepKey
	FaultKeys     []KeepKey
	ChoiceKeys    []KeepKey
	// Beyond, in a keyed replay, answers true the Keep calls that lie past
	// the recorded run's Horizon (it had ended before them) instead of
	// false. The run goes on as the seed would have. When nil, they are
	// answered false, as every other unlisted call is.
	Beyond *Horizon
}

// List is the kind's list of answers.
func (k *Keeps) List(what Keepable) []bool {
	if what == KeepFault {
		return k.Faults
	}
	return k.Operations
}

// KeepsOf rebuilds the Keep lists of a recorded run from its sites, keyed.
func KeepsOf(sites []KeepSite) Keeps {
	var k Keeps
	for _, s := range sites {
		switch s.What {
		case KeepOperation:
			k.Operations = append(k.Operations, s.Kept)
			k.OperationKeys = append(k.OperationKeys, s.Key)
		case KeepFault:
			k.Faults = append(k.Faults, s.Kept)
			k.FaultKeys = append(k.FaultKeys, s.Key)
		}
	}
	return k
}

// KeepsOfRun is a recorded run's Keep lists and choice keys: what
// replays it keyed (Options.Keeps with Options.Choices = r.Choices).
func KeepsOfRun(r *Recorded) Keeps {
	k := KeepsOf(r.KeepSites)
	k.ChoiceKeys = r.ChoiceKeys
	if k.ChoiceKeys == nil {
		k.ChoiceKeys = []KeepKey{}
	}
	if k.OperationKeys == nil {
		k.OperationKeys = []KeepKey{}
	}
	if k.FaultKeys == nil {
		k.FaultKeys = []KeepKey{}
	}
	return k
}

// Without returns a copy of k with the given Keep decisions of one kind
// dropped (by ordinal), for tests and shrinkers.
func (k Keeps) Without(what Keepable, ordinals ...int) Keeps {
	out := Keeps{Operations: append([]bool(nil), k.Operations...), Faults: append([]bool(nil), k.Faults...),
		OperationKeys: k.OperationKeys, FaultKeys: k.FaultKeys, ChoiceKeys: k.ChoiceKeys, Beyond: k.Beyond}
	l := out.List(what)
	for _, i := range ordinals {
		if i >= 0 && i < len(l) {
			l[i] = false
		}
	}
	return out
}

// NoFaults returns a copy of k with every fault dropped.
func (k Keeps) NoFaults() Keeps {
	out := Keeps{Operations: append([]bool(nil), k.Operations...), Faults: make([]bool, len(k.Faults)),
		OperationKeys: k.OperationKeys, FaultKeys: k.FaultKeys, ChoiceKeys: k.ChoiceKeys, Beyond: k.Beyond}
	return out
}

// Of returns the kind's list.
func (k Keeps) Of(what Keepable) []bool { return k.List(what) }
