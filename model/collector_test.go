package model

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func rec(key string, ts int64, v float64) CollectorInput {
	return CollectorInput{Op: OpRecord, Key: key, TS: ts, Value: v}
}

func op(client int, in CollectorInput, out CollectorOutput, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret}
}

func TestCollectorStepSequence(t *testing.T) {
	var s CollectorState
	s, _ = CollectorStep(s, rec("b", 20, 1))
	s, _ = CollectorStep(s, rec("a", 5, 2))
	s, _ = CollectorStep(s, rec("b", 3, 3))
	s, _ = CollectorStep(s, rec("a", 30, 4))
	s, out := CollectorStep(s, CollectorInput{Op: OpDrain, Cutoff: 20})
	assert.Equal(t, []Point{{"a", 5, 2}, {"b", 3, 3}}, out.Points, "grouped by key, recorded order")
	assert.Equal(t, []Point{{"b", 20, 1}, {"a", 30, 4}}, s.Points())
	_, out = CollectorStep(s, CollectorInput{Op: OpQuery, Key: "a", From: 0, To: 31})
	assert.Equal(t, []Point{{"a", 30, 4}}, out.Points)
	s, out = CollectorStep(s, CollectorInput{Op: OpPrune, Cutoff: 25})
	assert.EqualValues(t, 1, out.Count)
	assert.Equal(t, []Point{{"a", 30, 4}}, s.Points())
}

// TestCollectorStepIsPure: porcupine explores several successors of one
// state, so Step must never change the state it is given.
func TestCollectorStepIsPure(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s CollectorState
		var history []CollectorState
		var copies [][]Point
		for i := range rapid.IntRange(1, 60).Draw(t, "ops") {
			history = append(history, s)
			copies = append(copies, s.Points())
			in := CollectorInput{
				Op:     rapid.SampledFrom([]CollectorOp{OpRecord, OpRecord, OpDrain, OpPrune, OpQuery}).Draw(t, "op"),
				Key:    rapid.SampledFrom([]string{"a", "b"}).Draw(t, "key"),
				TS:     rapid.Int64Range(0, 20).Draw(t, "ts"),
				Value:  float64(i),
				Cutoff: rapid.Int64Range(0, 21).Draw(t, "cutoff"),
				From:   0, To: 21,
			}
			// Step twice from the same state: the same answer both times.
			s1, o1 := CollectorStep(s, in)
			s2, o2 := CollectorStep(s, in)
			require.True(t, s1.Equal(s2) && EqualOutputs(o1, o2))
			s = s1
		}
		for i, h := range history {
			require.Equal(t, copies[i], h.Points(), "state %d was modified by a later step", i)
		}
	})
}

func TestCollectorModelAcceptsLinearizableHistories(t *testing.T) {
	h := []porcupine.Operation{
		op(0, rec("a", 5, 1), CollectorOutput{}, 0, 10),
		op(1, rec("a", 50, 2), CollectorOutput{}, 5, 30),
		// Concurrent with the second record: it may or may not see it.
		op(2, CollectorInput{Op: OpDrain, Cutoff: 60}, CollectorOutput{Points: []Point{{"a", 5, 1}}}, 12, 40),
		op(0, CollectorInput{Op: OpQuery, Key: "a", From: 0, To: 100}, CollectorOutput{Points: []Point{{"a", 50, 2}}}, 41, 50),
	}
	assert.Equal(t, porcupine.Ok, porcupine.CheckOperationsTimeout(CollectorModel, h, 0))
}

// TestCollectorModelRejectsWrongDrains: the model is the checker's
// strength; these histories must be reported as violations.
func TestCollectorModelRejectsWrongDrains(t *testing.T) {
	offByOne := []porcupine.Operation{
		op(0, rec("a", 10, 1), CollectorOutput{}, 0, 1),
		// A point exactly at the cutoff must be kept, not drained.
		op(0, CollectorInput{Op: OpDrain, Cutoff: 10}, CollectorOutput{Points: []Point{{"a", 10, 1}}}, 2, 3),
	}
	assert.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(CollectorModel, offByOne, 0))

	duplicated := []porcupine.Operation{
		op(0, rec("a", 1, 1), CollectorOutput{}, 0, 1),
		op(1, CollectorInput{Op: OpDrain, Cutoff: 10}, CollectorOutput{Points: []Point{{"a", 1, 1}}}, 2, 5),
		op(2, CollectorInput{Op: OpDrain, Cutoff: 10}, CollectorOutput{Points: []Point{{"a", 1, 1}}}, 2, 5),
	}
	assert.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(CollectorModel, duplicated, 0))

	reordered := []porcupine.Operation{
		op(0, rec("a", 2, 1), CollectorOutput{}, 0, 1),
		op(0, rec("a", 1, 2), CollectorOutput{}, 2, 3),
		op(0, CollectorInput{Op: OpDrain, Cutoff: 10}, CollectorOutput{Points: []Point{{"a", 1, 2}, {"a", 2, 1}}}, 4, 5),
	}
	assert.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(CollectorModel, reordered, 0))
}

// TestCollectorModelFlagsTheQueryDeviation reproduces DR-7's documented
// deviation: a query overlapping a drain's split returns none of the
// buffered points, which no linearization allows (the young point is kept by
// the drain either way).
func TestCollectorModelFlagsTheQueryDeviation(t *testing.T) {
	h := []porcupine.Operation{
		op(0, rec("a", 50, 1), CollectorOutput{}, 0, 1),
		op(1, CollectorInput{Op: OpDrain, Cutoff: 10}, CollectorOutput{}, 2, 10),
		op(2, CollectorInput{Op: OpQuery, Key: "a", From: 0, To: 100}, CollectorOutput{}, 4, 6),
	}
	assert.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(CollectorModel, h, 0))
}

func TestCollectorModelDescribes(t *testing.T) {
	assert.Equal(t, "drain(<10) -> [a@1=2]", CollectorModel.DescribeOperation(CollectorInput{Op: OpDrain, Cutoff: 10}, CollectorOutput{Points: []Point{{"a", 1, 2}}}))
	assert.Equal(t, "[a@1=2]", CollectorModel.DescribeState(NewCollectorState(Point{"a", 1, 2})))
	assert.Equal(t, CollectorModel.Hash(NewCollectorState(Point{"a", 1, 2})), CollectorModel.Hash(NewCollectorState(Point{"a", 1, 2})))
}
