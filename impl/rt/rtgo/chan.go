package rtgo

import (
	"cmp"
	"context"
	"iter"
	"maps"
	"slices"

	"github.com/windtunnel/windtunnel/impl/rt"
)

var bg = context.Background()

// MakeChan is make(chan T, size) on the bound runtime.
func MakeChan[T any](size int) *rt.Chan[T] { return rt.NewChan[T](R(), "", size) }

// forever blocks like an operation on a nil channel: a select with no case.
func forever() { R().Select(nil, true) }

// Send is c <- v, written Send(c)(v): v then converts to the channel's
// element type as in Go. On a nil channel it blocks forever.
func Send[T any](c *rt.Chan[T]) func(v T) {
	return func(v T) {
		if c == nil {
			forever()
		}
		c.Send(v)
	}
}

// Recv is <-c.
func Recv[T any](c *rt.Chan[T]) T {
	v, _ := Recv2(c)
	return v
}

// Recv2 is v, ok := <-c.
func Recv2[T any](c *rt.Chan[T]) (T, bool) {
	if c == nil {
		forever()
	}
	return c.Recv2()
}

// Close is close(c); closing a nil channel panics, as in Go.
func Close[T any](c *rt.Chan[T]) {
	if c == nil {
		panic("close of nil channel")
	}
	c.Close()
}

// Len and Cap are len(c) and cap(c).
func Len[T any](c *rt.Chan[T]) int { return c.Len() }
func Cap[T any](c *rt.Chan[T]) int { return c.Cap() }

// Range is for v := range c.
func Range[T any](c *rt.Chan[T]) iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			v, ok := Recv2(c)
			if !ok || !yield(v) {
				return
			}
		}
	}
}

// WaitDone is <-ctx.Done().
func WaitDone(ctx context.Context) {
	R().Select([]rt.Case{rt.DoneCase(ctx)}, true)
}

// Op is one case of a Select.
type Op interface{ rtCase() rt.Case }

// RecvOp is the case <-C; after Select chose it, V and OK hold what the
// receive got.
type RecvOp[T any] struct {
	c  *rt.Chan[T]
	V  T
	OK bool
}

// RecvCase is the case <-c.
func RecvCase[T any](c *rt.Chan[T]) *RecvOp[T] { return &RecvOp[T]{c: c} }

func (o *RecvOp[T]) rtCase() rt.Case { return o.c.RecvCase() }

// SendOp is the case C <- v.
type SendOp[T any] struct {
	c *rt.Chan[T]
	v T
}

// SendCase is the case c <- v, written SendCase(c)(v) as Send is.
func SendCase[T any](c *rt.Chan[T]) func(v T) Op {
	return func(v T) Op { return &SendOp[T]{c: c, v: v} }
}

func (o *SendOp[T]) rtCase() rt.Case { return o.c.SendCase(o.v) }

type doneOp struct{ ctx context.Context }

// DoneCase is the case <-ctx.Done().
func DoneCase(ctx context.Context) Op { return doneOp{ctx} }

func (o doneOp) rtCase() rt.Case { return rt.DoneCase(o.ctx) }

// Select is a select statement: it returns the index of the case that went
// on, or -1 for the default when hasDefault and none is ready.
func Select(hasDefault bool, ops ...Op) int {
	cases := make([]rt.Case, len(ops))
	for i, o := range ops {
		cases[i] = o.rtCase()
	}
	i, v, ok := R().Select(cases, !hasDefault)
	if i >= 0 {
		if g, isRecv := ops[i].(interface{ got(any, bool) }); isRecv {
			g.got(v, ok)
		}
	}
	return i
}

func (o *RecvOp[T]) got(v any, ok bool) { o.V, o.OK = rt.As[T](v), ok }

// Sorted is range over a map in the order of its keys: Go's order is random,
// which no seed could replay. A key deleted during the loop is skipped, as
// in Go; one added is not produced (Go may or may not).
func Sorted[M ~map[K]V, K cmp.Ordered, V any](m M) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v, ok := m[k]
			if ok && !yield(k, v) {
				return
			}
		}
	}
}
