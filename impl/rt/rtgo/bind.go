package rtgo

import (
	"sync/atomic"

	"github.com/windtunnel/windtunnel/impl/rt"
)

type binding struct{ r rt.Runtime }

var bound atomic.Pointer[binding]

var realBinding = &binding{r: rt.Real()}

// Bind makes r the runtime of every rtgo call until the returned function
// is called. Binding while another runtime is bound panics: translated code
// shares its package state, so two runs of it cannot overlap.
func Bind(r rt.Runtime) (unbind func()) {
	b := &binding{r: r}
	if !bound.CompareAndSwap(nil, b) {
		panic("rtgo: a runtime is already bound; run translated code's seeds one at a time")
	}
	return func() { bound.CompareAndSwap(b, nil) }
}

// Use makes r the runtime of every rtgo call from now on, replacing any
// other: for a harness whose runs come one after another, each run's first
// task calls it. Unlike Bind it never unbinds, so that a run's tasks that go
// on after its main returns (the leak check) still reach its runtime. Use(nil)
// unbinds: rt.Real() again.
func Use(r rt.Runtime) {
	if r == nil {
		bound.Store(nil)
		return
	}
	bound.Store(&binding{r: r})
}

func cur() *binding {
	if b := bound.Load(); b != nil {
		return b
	}
	return realBinding
}

// R is the bound runtime, or rt.Real().
func R() rt.Runtime { return cur().r }

// lazy is an rt object made on first use, again when the runtime changed.
type lazy[T any] struct {
	p atomic.Pointer[lazyVal[T]]
}

type lazyVal[T any] struct {
	b *binding
	v T
}

func (l *lazy[T]) get(make func(rt.Runtime) T) T {
	b := cur()
	for {
		p := l.p.Load()
		if p != nil && p.b == b {
			return p.v
		}
		n := &lazyVal[T]{b: b, v: make(b.r)}
		if l.p.CompareAndSwap(p, n) {
			return n.v
		}
	}
}
