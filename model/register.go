package model

import (
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"
)

// RegisterInput is one operation on a family of independent boolean
// registers, one per key, as recorded for the porcupine checker. A write sets
// the key's register to Value; a read's Value is ignored and the value it
// observed is the operation's output (a bool). Writes have no meaningful
// output.
//
// The keys are authorization questions ("may user U read channel C?") and
// the value is the answer, so a boolean register is the whole state the
// linearizability claims (MS-3, OC-6, and the Δ-shift cross-check of every
// staleness claim) talk about.
type RegisterInput struct {
	Key   string
	Write bool
	Value bool
}

// registerState is the state of one key's register inside one partition.
// Porcupine's Init takes no arguments, so it cannot know which key a
// partition holds: the state starts as "initial" (known=false) and the first
// step reads the key's initial value from the model's table. Comparable, so
// porcupine's default == equality is correct.
type registerState struct {
	known bool
	value bool
}

// NewRegister returns the porcupine model of independent boolean registers,
// one per key, partitioned by key. Porcupine checks each key on its own,
// which is exact because the registers share nothing. initial gives each
// key's value before the first operation; it is copied. A key missing from it
// starts false; callers that care, like checks.Linearizable, reject unknown
// keys before checking.
//
// Step is pure: it never mutates its arguments, and on inputs of the wrong
// type it answers "cannot step" instead of panicking.
func NewRegister(initial map[string]bool) porcupine.Model {
	init := make(map[string]bool, len(initial))
	for k, v := range initial { //windtunnel:unordered copying a map
		init[k] = v
	}
	return porcupine.Model{
		Partition:      partitionByKey,
		PartitionEvent: partitionEventsByKey,
		Init:           func() interface{} { return registerState{} },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			return registerStep(init, state, input, output)
		},
		Hash:              hashRegisterState,
		DescribeOperation: describeRegisterOperation,
		DescribeState:     describeRegisterState,
	}
}

// registerStep is the sequential specification: a write always succeeds and
// sets the value; a read succeeds only if it observed the current value.
func registerStep(init map[string]bool, state, input, output interface{}) (bool, interface{}) {
	st, ok := state.(registerState)
	if !ok {
		return false, state
	}
	in, ok := input.(RegisterInput)
	if !ok {
		return false, state
	}
	cur := st.value
	if !st.known {
		cur = init[in.Key]
	}
	if in.Write {
		return true, registerState{known: true, value: in.Value}
	}
	got, ok := output.(bool)
	if !ok || got != cur {
		return false, state
	}
	return true, registerState{known: true, value: cur}
}

func hashRegisterState(state interface{}) uint64 {
	st, _ := state.(registerState)
	switch {
	case !st.known:
		return 0
	case st.value:
		return 2
	default:
		return 1
	}
}

func describeRegisterOperation(input, output interface{}) string {
	in, ok := input.(RegisterInput)
	if !ok {
		return fmt.Sprintf("%v -> %v", input, output)
	}
	if in.Write {
		return fmt.Sprintf("write(%q, %t)", in.Key, in.Value)
	}
	return fmt.Sprintf("read(%q) -> %v", in.Key, output)
}

func describeRegisterState(state interface{}) string {
	st, ok := state.(registerState)
	if !ok {
		return fmt.Sprintf("%v", state)
	}
	if !st.known {
		return "initial"
	}
	return fmt.Sprintf("%t", st.value)
}

// registerKey is the partition key of an operation input; inputs of a
// foreign type share the partition "" so that checking reports them as
// illegal instead of crashing.
func registerKey(input interface{}) string {
	in, ok := input.(RegisterInput)
	if !ok {
		return ""
	}
	return in.Key
}

// partitionByKey splits a history into one partition per key, in sorted key
// order so that results and visualizations are reproducible.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := make(map[string][]porcupine.Operation)
	for _, op := range history {
		k := registerKey(op.Input)
		byKey[k] = append(byKey[k], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey { //windtunnel:unordered the keys are sorted after
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// partitionEventsByKey is partitionByKey for the event representation: a
// call carries the input, and its return goes to the same partition by Id.
func partitionEventsByKey(history []porcupine.Event) [][]porcupine.Event {
	byKey := make(map[string][]porcupine.Event)
	keyOfID := make(map[int]string)
	for _, ev := range history {
		k, seen := keyOfID[ev.Id]
		if !seen {
			k = registerKey(ev.Value)
			if ev.Kind == porcupine.CallEvent {
				keyOfID[ev.Id] = k
			}
		}
		byKey[k] = append(byKey[k], ev)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey { //windtunnel:unordered the keys are sorted after
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][]porcupine.Event, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}
