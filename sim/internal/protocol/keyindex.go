package protocol

import "fmt"

// KeyIndex finds a key's position in one keyed list (Keeps.ChoiceKeys,
// OperationKeys or FaultKeys) during a keyed replay.
//
// Why not a map[KeepKey]int? A replay looks up every draw and every Keep
// call. Hashing the key's task name on each made the lookups a fifth of a
// shrink's re-runs (TestMS2's swarm, 95,000 steps, 20,000 draws).
// Here the task name is hashed once per task and operation (the task's
// Keep state caches the slice it resolves to), and the call's ordinal
// indexes that slice. A recorded task numbers its calls 0, 1, 2, ..., so
// the slices are dense. A key whose ordinal a dense slice would make
// memory grow for (a hand-edited replay file's key 1<<40) goes to a map.
type KeyIndex struct {
	byTask map[string][]int32 // position by ordinal; NoPos where none
	Sparse map[KeepKey]int
}

// NoPos is the position of a key a list does not hold.
const NoPos = -1

// denseSlack bounds a KeyIndex's dense slots: at most this many per key
// plus denseSlots0 in all.
const (
	denseSlack  = 2
	denseSlots0 = 1024
)

// NewKeyIndex indexes keys, refusing a key listed twice (what says which
// list, for the error).
func NewKeyIndex(keys []KeepKey, what string) (KeyIndex, error) {
	if len(keys) > 1<<31-1 {
		return KeyIndex{}, fmt.Errorf("sim: Keeps: %d %s keys, more than a replay can index", len(keys), what)
	}
	ix := KeyIndex{byTask: make(map[string][]int32)}
	slots, limit := 0, denseSlack*len(keys)+denseSlots0
	for j, k := range keys {
		if k.N < 0 {
			return KeyIndex{}, fmt.Errorf("sim: Keeps: a %s key of task %q has the negative ordinal %d", what, k.Task, k.N)
		}
		sl := ix.byTask[k.Task]
		if k.N >= len(sl) && slots+k.N+1-len(sl) > limit {
			if ix.Sparse == nil {
				ix.Sparse = make(map[KeepKey]int)
			}
			if _, dup := ix.Sparse[k]; dup {
				return KeyIndex{}, fmt.Errorf("sim: Keeps: two %ss for call %d of task %q", what, k.N, k.Task)
			}
			ix.Sparse[k] = j
			continue
		}
		for len(sl) <= k.N {
			sl = append(sl, NoPos)
			slots++
		}
		if sl[k.N] != NoPos {
			return KeyIndex{}, fmt.Errorf("sim: Keeps: two %ss for call %d of task %q", what, k.N, k.Task)
		}
		sl[k.N] = int32(j)
		ix.byTask[k.Task] = sl
	}
	// A key filed sparse is never filed dense later, nor the other way:
	// slots-len(sl) never shrinks, so a later extension past a sparse
	// key's ordinal would have held it.
	return ix, nil
}

// Slice is the dense positions of one task name's calls (nil if none).
func (ix *KeyIndex) Slice(task string) []int32 { return ix.byTask[task] }

// Find is the position of key, whose task's dense slice is sl: NoPos if
// the list does not hold it.
func (ix *KeyIndex) Find(sl []int32, key KeepKey) int {
	if key.N < len(sl) {
		if j := sl[key.N]; j != NoPos {
			return int(j)
		}
	}
	if ix.Sparse != nil {
		if j, ok := ix.Sparse[key]; ok {
			return j
		}
	}
	return NoPos
}

// KeyIndexes are the three keyed lists' indexes, by slot: 0 for the
// draws, a Keepable for its answers.
type KeyIndexes [KeepKinds]KeyIndex

// IndexKeys checks that a keyed replay names every draw and answer once
// and indexes its keys; nil when the replay is not keyed.
func (k Keeps) IndexKeys(choices int) (*KeyIndexes, error) {
	if k.ChoiceKeys == nil {
		return nil, nil
	}
	var ix KeyIndexes
	for _, l := range [...]struct {
		slot int
		what string
		n    int
		keys []KeepKey
	}{{0, "choice", choices, k.ChoiceKeys}, {int(KeepOperation), "operation", len(k.Operations), k.OperationKeys}, {int(KeepFault), "fault", len(k.Faults), k.FaultKeys}} {
		if l.n > len(l.keys) {
			return nil, fmt.Errorf("sim: Keeps: %d %ss but %d keys", l.n, l.what, len(l.keys))
		}
		var err error
		if ix[l.slot], err = NewKeyIndex(l.keys, l.what); err != nil {
			return nil, err
		}
	}
	return &ix, nil
}
