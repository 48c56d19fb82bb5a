package rt

import (
	"context"
	"iter"
)

// AnyChan is a channel of the runtime with its element type erased: what a
// Runtime implements. Code uses the typed *Chan[T] over it.
type AnyChan interface {
	// Send blocks until the value is handed over or buffered. Sending on a
	// closed channel panics, as in Go.
	Send(v any)
	// Recv blocks for a value; ok is false (and v nil) once the channel is
	// closed and drained.
	Recv() (v any, ok bool)
	// Close closes the channel; closing twice panics, as in Go.
	Close()
	Len() int
	Cap() int
}

// Chan is a channel of the runtime, the seam's form of a Go chan T: a
// scheduling point at every operation under the simulator, a real chan on
// Real. Create one with NewChan. A nil *Chan is a nil channel only as far as
// a select goes (its cases are never ready); any other operation on it panics,
// since it has no runtime to block on.
type Chan[T any] struct{ c AnyChan }

// NewChan returns a channel of r with room for size buffered values (0: an
// unbuffered channel, whose send and receive meet). The name appears in
// traces and deadlock reports.
func NewChan[T any](r Runtime, name string, size int) *Chan[T] {
	if size < 0 {
		panic("rt: NewChan with a negative size")
	}
	return &Chan[T]{c: r.NewChan(name, size)}
}

func (c *Chan[T]) core(op string) AnyChan {
	if c == nil {
		panic("rt: " + op + " on a nil Chan (block forever with Select and no cases)")
	}
	return c.c
}

// Send sends v: <-.
func (c *Chan[T]) Send(v T) { c.core("send").Send(v) }

// Recv receives a value, the zero value once the channel is closed and empty.
func (c *Chan[T]) Recv() T {
	v, _ := c.Recv2()
	return v
}

// Recv2 is the two-value receive, v, ok := <-c.
func (c *Chan[T]) Recv2() (T, bool) {
	v, ok := c.core("receive").Recv()
	return As[T](v), ok
}

// Close closes the channel.
func (c *Chan[T]) Close() { c.core("close").Close() }

// Len is the number of buffered values; 0 for a nil Chan, as len(nil chan).
func (c *Chan[T]) Len() int {
	if c == nil {
		return 0
	}
	return c.c.Len()
}

// Cap is the buffer's size; 0 for a nil Chan.
func (c *Chan[T]) Cap() int {
	if c == nil {
		return 0
	}
	return c.c.Cap()
}

// All receives until the channel is closed and drained: for v := range c.
func (c *Chan[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			v, ok := c.Recv2()
			if !ok || !yield(v) {
				return
			}
		}
	}
}

// SendCase is the select case c <- v.
func (c *Chan[T]) SendCase(v T) Case {
	if c == nil {
		return Case{Dir: SendDir}
	}
	return Case{Chan: c.c, Dir: SendDir, Value: v}
}

// RecvCase is the select case <-c; Select returns the value as an any (As
// turns it back into a T).
func (c *Chan[T]) RecvCase() Case {
	if c == nil {
		return Case{Dir: RecvDir}
	}
	if d, ok := c.c.(doneChan); ok {
		return DoneCase(d.ctx)
	}
	return Case{Chan: c.c, Dir: RecvDir}
}

// Any is the channel behind c, nil for a nil Chan.
func (c *Chan[T]) Any() AnyChan {
	if c == nil {
		return nil
	}
	return c.c
}

// As converts a value Select or AnyChan.Recv returned back to its type: the
// zero T for nil (a receive from a closed channel).
func As[T any](v any) T {
	if v == nil {
		var zero T
		return zero
	}
	return v.(T)
}

// CaseDir says what a select case does.
type CaseDir uint8

const (
	RecvDir CaseDir = iota // <-Chan
	SendDir                // Chan <- Value
	DoneDir                // <-Ctx.Done()
)

// Case is one case of a Select. A case with a nil Chan (and a Done case with
// a context that never ends) is never ready, like a nil channel in Go.
type Case struct {
	Chan  AnyChan
	Dir   CaseDir
	Value any             // SendDir: the value sent
	Ctx   context.Context // DoneDir: the context whose end the case waits for
}

// DoneCase is the select case <-ctx.Done(). Under the simulator ctx must come
// from the runtime's WithCancel, WithDeadline or WithTimeout (or be
// Background).
func DoneCase(ctx context.Context) Case { return Case{Dir: DoneDir, Ctx: ctx} }

// Select blocks until one case can go on, performs it and returns its index,
// with the value and ok of a receive. When several are ready one is chosen at
// random (on the simulator, from the seed). With no case at all it blocks
// forever.
func Select(r Runtime, cases ...Case) (chosen int, v any, ok bool) {
	return r.Select(cases, true)
}

// TrySelect is a select with a default: it returns -1 at once when no case
// is ready.
func TrySelect(r Runtime, cases ...Case) (chosen int, v any, ok bool) {
	return r.Select(cases, false)
}

// Locker is what a Cond waits with: a Mutex, or an RWMutex's write half.
type Locker interface {
	Lock()
	Unlock()
}

// Cond is a condition variable like sync.Cond: Wait unlocks its Locker,
// waits for a Signal or Broadcast and locks it again before it returns.
type Cond interface {
	Wait()
	Signal()
	Broadcast()
}

// Once runs a function once, like sync.Once: callers that arrive while it
// runs wait for it to finish.
type Once interface {
	Do(f func())
}
