package checks

import (
	"errors"
	"fmt"
)

// Op is one recorded client operation: who issued it (pod and client within
// the pod), what it was (Kind, Key, Input) and what it answered (Output). It
// also holds when, in virtual ns since the simulation's origin: Invoke at the
// call, Return at the response.
type Op struct {
	Pod, Client int
	Kind        string
	Key         string
	Input       any
	Output      any
	Invoke      int64
	Return      int64
}

// History is a recorded history: the completed operations in the order they
// were begun.
type History []Op

// DefaultMaxOps bounds a Recorder created with a non-positive limit.
const DefaultMaxOps = 10_000_000

// Recorder is an append-only history recorder. A scenario calls Begin when a
// client invokes an operation and End on the returned handle when it
// responds. It uses no locks and no goroutines: it is meant for simulated
// tasks, of which exactly one runs at a time. (With real goroutines, guard it
// with a lock of your own.)
//
// Misuse is never a panic: it is remembered and reported by History.
type Recorder struct {
	ops     []Op
	done    []bool
	maxOps  int
	dropped int
	errs    []error
}

// maxRecordedErrors bounds the misuse errors a Recorder keeps; the first ones
// are the useful ones.
const maxRecordedErrors = 8

// NewRecorder returns a recorder that keeps at most maxOps operations
// (DefaultMaxOps when maxOps ≤ 0); operations begun beyond it are dropped and
// reported by History as an error.
func NewRecorder(maxOps int) *Recorder {
	if maxOps <= 0 {
		maxOps = DefaultMaxOps
	}
	return &Recorder{maxOps: maxOps}
}

// Pending is the handle of a begun operation. Its zero value is a dropped
// operation: End on it does nothing and reports an error.
type Pending struct {
	r *Recorder
	i int
}

// Begin records the invocation of an operation at invokeNs and returns the
// handle to End it with.
func (r *Recorder) Begin(pod, client int, kind, key string, input any, invokeNs int64) Pending {
	if r == nil {
		return Pending{}
	}
	if len(r.ops) >= r.maxOps {
		r.dropped++
		return Pending{}
	}
	r.ops = append(r.ops, Op{Pod: pod, Client: client, Kind: kind, Key: key, Input: input, Invoke: invokeNs})
	r.done = append(r.done, false)
	return Pending{r: r, i: len(r.ops) - 1}
}

// End records the response of the operation: its output and return instant.
// Ending twice, or with a return before the invocation, is an error (also
// reported by History); the first End stands.
func (p Pending) End(output any, returnNs int64) error {
	if p.r == nil {
		return errors.New("checks: End on a dropped or zero Pending operation")
	}
	r := p.r
	op := &r.ops[p.i]
	var err error
	switch {
	case r.done[p.i]:
		err = fmt.Errorf("checks: op #%d (%s %q, pod %d client %d) ended twice", p.i, op.Kind, op.Key, op.Pod, op.Client)
	case returnNs < op.Invoke:
		err = fmt.Errorf("checks: op #%d (%s %q, pod %d client %d): return %d ns is before invoke %d ns", p.i, op.Kind, op.Key, op.Pod, op.Client, returnNs, op.Invoke)
	default:
		op.Output = output
		op.Return = returnNs
		r.done[p.i] = true
		return nil
	}
	if len(r.errs) < maxRecordedErrors {
		r.errs = append(r.errs, err)
	}
	return err
}

// Len is the number of operations begun and kept (completed or not).
func (r *Recorder) Len() int { return len(r.ops) }

// Unfinished returns the operations begun but never ended (for example,
// cut off when the run stopped), in the order they were begun. They have no
// output and are not part of History: a read without an answer constrains
// nothing, and writes are judged through the commit log.
func (r *Recorder) Unfinished() []Op {
	var out []Op
	for i, op := range r.ops {
		if !r.done[i] {
			out = append(out, op)
		}
	}
	return out
}

// History returns a copy of the completed operations, in the order they were
// begun. It also returns an error if anything went wrong while recording:
// dropped operations, double End, return before invoke. A history with holes
// must not pass a check silently.
func (r *Recorder) History() (History, error) {
	h := make(History, 0, len(r.ops))
	for i, op := range r.ops {
		if r.done[i] {
			h = append(h, op)
		}
	}
	errs := append([]error(nil), r.errs...)
	if r.dropped > 0 {
		errs = append(errs, fmt.Errorf("checks: %d operation(s) dropped beyond the recorder's bound of %d", r.dropped, r.maxOps))
	}
	return h, errors.Join(errs...)
}

// Reads extracts the operations of the given kind as staleness reads: the
// output must be the bool answer (granted or not). A read's ID is its index
// in h, so a witness points back at the op.
func (h History) Reads(kind string) ([]Read, error) {
	var out []Read
	for i, op := range h {
		if op.Kind != kind {
			continue
		}
		granted, ok := op.Output.(bool)
		if !ok {
			return nil, fmt.Errorf("checks: op #%d (%s %q): output %T is not a bool answer", i, op.Kind, op.Key, op.Output)
		}
		out = append(out, Read{ID: i, Key: op.Key, Invoke: op.Invoke, Return: op.Return, Granted: granted})
	}
	return out, nil
}

// LinOps extracts register operations for Linearizable: ops of readKind are
// reads whose output is the bool observed, ops of writeKind are writes whose
// input is the bool written. Other kinds are skipped.
func (h History) LinOps(readKind, writeKind string) ([]LinOp, error) {
	var out []LinOp
	for i, op := range h {
		var (
			v     bool
			ok    bool
			write bool
		)
		switch op.Kind {
		case readKind:
			v, ok = op.Output.(bool)
		case writeKind:
			v, ok = op.Input.(bool)
			write = true
		default:
			continue
		}
		if !ok {
			return nil, fmt.Errorf("checks: op #%d (%s %q): the register value must be a bool (input %T, output %T)", i, op.Kind, op.Key, op.Input, op.Output)
		}
		out = append(out, LinOp{Key: op.Key, Write: write, Value: v, Call: op.Invoke, Return: op.Return, Pod: op.Pod, Client: op.Client})
	}
	return out, nil
}
