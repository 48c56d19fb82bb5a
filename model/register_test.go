package model

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rd(key string, got bool, call, ret int64) porcupine.Operation {
	return porcupine.Operation{Input: RegisterInput{Key: key}, Output: got, Call: call, Return: ret}
}

func wr(key string, v bool, call, ret int64) porcupine.Operation {
	return porcupine.Operation{Input: RegisterInput{Key: key, Write: true, Value: v}, Call: call, Return: ret}
}

func TestRegisterStepIsPureAndUsesInitialValue(t *testing.T) {
	m := NewRegister(map[string]bool{"a": true, "b": false})
	s0 := m.Init()

	ok, s1 := m.Step(s0, RegisterInput{Key: "a"}, true)
	require.True(t, ok, "a starts true")
	ok, _ = m.Step(s0, RegisterInput{Key: "b"}, true)
	require.False(t, ok, "b starts false")
	assert.Equal(t, registerState{}, s0, "Step must not mutate its state")

	ok, s2 := m.Step(s1, RegisterInput{Key: "a", Write: true, Value: false}, nil)
	require.True(t, ok)
	ok, _ = m.Step(s2, RegisterInput{Key: "a"}, true)
	assert.False(t, ok, "a read after write(false) cannot see true")
	ok, _ = m.Step(s2, RegisterInput{Key: "a"}, false)
	assert.True(t, ok)
	assert.Equal(t, registerState{known: true, value: true}, s1, "s1 unchanged by later steps")
}

func TestRegisterStepRejectsForeignTypesWithoutPanicking(t *testing.T) {
	m := NewRegister(nil)
	ok, _ := m.Step(m.Init(), "not an input", true)
	assert.False(t, ok)
	ok, _ = m.Step(m.Init(), RegisterInput{Key: "k"}, "not a bool")
	assert.False(t, ok)
	ok, _ = m.Step(42, RegisterInput{Key: "k"}, false)
	assert.False(t, ok)
	ok, _ = m.Step(m.Init(), RegisterInput{Key: "missing"}, false)
	assert.True(t, ok, "a key missing from the initial table starts false")
}

func TestRegisterInitialTableIsCopied(t *testing.T) {
	init := map[string]bool{"k": true}
	m := NewRegister(init)
	init["k"] = false
	ok, _ := m.Step(m.Init(), RegisterInput{Key: "k"}, true)
	assert.True(t, ok)
}

func TestRegisterPartitionsBySortedKey(t *testing.T) {
	m := NewRegister(nil)
	h := []porcupine.Operation{rd("z", false, 0, 1), rd("a", false, 0, 1), wr("z", true, 2, 3), {Input: 7}}
	parts := m.Partition(h)
	require.Len(t, parts, 3)
	assert.Equal(t, 7, parts[0][0].Input, "foreign inputs go to partition \"\" (sorted first)")
	assert.Equal(t, "a", parts[1][0].Input.(RegisterInput).Key)
	assert.Len(t, parts[2], 2)

	evs := []porcupine.Event{
		{Kind: porcupine.CallEvent, Value: RegisterInput{Key: "b"}, Id: 0},
		{Kind: porcupine.CallEvent, Value: RegisterInput{Key: "a"}, Id: 1},
		{Kind: porcupine.ReturnEvent, Value: true, Id: 0},
		{Kind: porcupine.ReturnEvent, Value: false, Id: 1},
	}
	eparts := m.PartitionEvent(evs)
	require.Len(t, eparts, 2)
	assert.Equal(t, 1, eparts[0][0].Id)
	assert.Equal(t, 1, eparts[0][1].Id, "the return follows its call's key")
	assert.Equal(t, 0, eparts[1][1].Id)
}

func TestRegisterCheckerVerdicts(t *testing.T) {
	m := NewRegister(map[string]bool{"k": false, "j": true})
	// A stale read after a completed write is not linearizable.
	stale := []porcupine.Operation{wr("k", true, 0, 10), rd("k", false, 11, 12), rd("j", true, 0, 1)}
	assert.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(m, stale, 0))
	// A read concurrent with the write may see either value.
	racing := []porcupine.Operation{wr("k", true, 0, 10), rd("k", false, 5, 12), rd("k", true, 11, 13)}
	assert.Equal(t, porcupine.Ok, porcupine.CheckOperationsTimeout(m, racing, 0))
	// Porcupine intervals are closed: touching at an instant means concurrent.
	touching := []porcupine.Operation{wr("k", true, 10, 10), rd("k", false, 0, 10)}
	assert.Equal(t, porcupine.Ok, porcupine.CheckOperationsTimeout(m, touching, 0))
	// The initial value is per key.
	assert.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(m, []porcupine.Operation{rd("j", false, 0, 1)}, 0))
}

func TestRegisterDescriptions(t *testing.T) {
	m := NewRegister(nil)
	assert.Equal(t, `write("k", true)`, m.DescribeOperation(RegisterInput{Key: "k", Write: true, Value: true}, nil))
	assert.Equal(t, `read("k") -> false`, m.DescribeOperation(RegisterInput{Key: "k"}, false))
	assert.Equal(t, "initial", m.DescribeState(m.Init()))
	_, s := m.Step(m.Init(), RegisterInput{Key: "k", Write: true, Value: true}, nil)
	assert.Equal(t, "true", m.DescribeState(s))
	assert.NotEqual(t, m.Hash(m.Init()), m.Hash(s))
}
