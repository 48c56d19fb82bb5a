package model

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// CollectorOp names an operation of the metrics collector.
type CollectorOp uint8

// The collector's operations.
const (
	OpRecord CollectorOp = iota + 1 // Key, TS, Value; no output
	OpDrain                         // Cutoff; output Points: the drained points
	OpPrune                         // Cutoff; output Count: the points discarded
	OpQuery                         // Key, From, To; output Points: the points in [From, To)
)

func (o CollectorOp) String() string {
	switch o {
	case OpRecord:
		return "record"
	case OpDrain:
		return "drain"
	case OpPrune:
		return "prune"
	case OpQuery:
		return "query"
	}
	return fmt.Sprintf("CollectorOp(%d)", uint8(o))
}

// CollectorInput is the input of one collector operation; the fields an
// operation does not use are ignored.
type CollectorInput struct {
	Op       CollectorOp
	Key      string
	TS       int64
	Value    float64
	Cutoff   int64
	From, To int64
}

// CollectorOutput is the output of one collector operation. Points of a
// drain are grouped by key in key order, each key's points in recorded order
// (GroupByKey); points of a query are one key's, in recorded order.
type CollectorOutput struct {
	Points []Point
	Count  int64
}

// CollectorState is the sequential state of the collector: every buffered
// point in recorded order. It is immutable: CollectorStep returns a new
// state and never changes the one it was given (copy-on-write), as
// porcupine requires.
type CollectorState struct {
	points []Point
}

// NewCollectorState returns a state buffering pts in this order.
func NewCollectorState(pts ...Point) CollectorState {
	return CollectorState{points: slices.Clone(pts)}
}

// Points returns a copy of the buffered points in recorded order.
func (s CollectorState) Points() []Point { return slices.Clone(s.points) }

// Record returns the state after recording pts in this order: the same as
// one OpRecord step per point, with one copy instead of one per point.
func (s CollectorState) Record(pts ...Point) CollectorState {
	return CollectorState{points: slices.Concat(s.points, pts)}
}

// Equal reports whether two states buffer the same points in the same order.
func (s CollectorState) Equal(o CollectorState) bool { return slices.Equal(s.points, o.points) }

// CollectorStep is the collector's sequential specification (DR-1, DR-7).
// Record appends. Drain returns exactly the plain partition's drained points
// (GroupByKey) and keeps the rest in recorded order. Prune discards the same
// points and returns their number. Query returns the key's points in [From,
// To) in recorded order. An unknown operation leaves the state unchanged and
// outputs nothing.
func CollectorStep(s CollectorState, in CollectorInput) (CollectorState, CollectorOutput) {
	switch in.Op {
	case OpRecord:
		return s.Record(Point{Key: in.Key, TS: in.TS, Value: in.Value}), CollectorOutput{}
	case OpDrain:
		drained, kept := Partition(s.points, in.Cutoff)
		return CollectorState{points: kept}, CollectorOutput{Points: GroupByKey(drained)}
	case OpPrune:
		drained, kept := Partition(s.points, in.Cutoff)
		return CollectorState{points: kept}, CollectorOutput{Count: int64(len(drained))}
	case OpQuery:
		var out []Point
		for _, p := range s.points {
			if p.Key == in.Key && in.From <= p.TS && p.TS < in.To {
				out = append(out, p)
			}
		}
		return s, CollectorOutput{Points: out}
	}
	return s, CollectorOutput{}
}

// EqualOutputs compares two outputs; nil and empty point lists are equal.
func EqualOutputs(a, b CollectorOutput) bool {
	return a.Count == b.Count && slices.Equal(a.Points, b.Points)
}

// CollectorModel is CollectorStep as a porcupine model, for record, drain,
// prune and query histories (DR-7). Inputs are CollectorInput and outputs
// CollectorOutput. It does not partition: a drain spans every key.
//
// Against this model, a query that overlaps a drain's split may return
// fewer points than any linearization allows: that is the collector's
// documented deviation, and a checker that finds it must label it so.
var CollectorModel = porcupine.Model{
	Init: func() interface{} { return CollectorState{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		next, want := CollectorStep(state.(CollectorState), input.(CollectorInput))
		return EqualOutputs(want, output.(CollectorOutput)), next
	},
	Equal: func(a, b interface{}) bool { return a.(CollectorState).Equal(b.(CollectorState)) },
	Hash: func(state interface{}) uint64 {
		h := fnv.New64a()
		var buf [16]byte
		for _, p := range state.(CollectorState).points {
			h.Write([]byte(p.Key))
			putUint64(buf[:8], uint64(p.TS))
			putUint64(buf[8:], math.Float64bits(p.Value))
			h.Write(buf[:])
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(CollectorInput), output.(CollectorOutput)
		switch in.Op {
		case OpRecord:
			return fmt.Sprintf("record(%s, %d, %g)", in.Key, in.TS, in.Value)
		case OpDrain:
			return fmt.Sprintf("drain(<%d) -> %s", in.Cutoff, describePoints(out.Points))
		case OpPrune:
			return fmt.Sprintf("prune(<%d) -> %d", in.Cutoff, out.Count)
		case OpQuery:
			return fmt.Sprintf("query(%s, [%d,%d)) -> %s", in.Key, in.From, in.To, describePoints(out.Points))
		}
		return in.Op.String()
	},
	DescribeState: func(state interface{}) string { return describePoints(state.(CollectorState).points) },
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

// describePoints prints at most 20 points, so a visualization stays small.
func describePoints(pts []Point) string {
	const most = 20
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range pts {
		if i == most {
			fmt.Fprintf(&b, " …%d more", len(pts)-most)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s@%d=%g", p.Key, p.TS, p.Value)
	}
	b.WriteByte(']')
	return b.String()
}
