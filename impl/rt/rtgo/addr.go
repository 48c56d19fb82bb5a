package rtgo

import (
	"cmp"
	"context"
	"iter"
	"slices"
	"sync"
	"unsafe"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Done is ctx.Done() kept as a value: a Chan whose receive waits for ctx's
// end on the bound runtime.
func Done(ctx context.Context) *rt.Chan[struct{}] { return rt.DoneChan(R(), ctx) }

// addrTable gives each pointer a run asks the address of a stand-in drawn
// from the run's random stream: a real address differs from run to run, so
// no seed could replay it. The table lives as long as the binding.
type addrTable struct {
	mu   sync.Mutex // rt.Real() runs translated code on real goroutines
	m    map[unsafe.Pointer]uintptr
	used map[uintptr]bool
}

var addrs lazy[*addrTable]

func newAddrTable() *addrTable {
	return &addrTable{m: map[unsafe.Pointer]uintptr{}, used: map[uintptr]bool{}}
}

// Addr is uintptr(unsafe.Pointer(p)) with a stand-in address: the same p
// gives the same number for the whole run, distinct pointers distinct
// numbers, word-aligned and non-zero as a real address is (0 for nil). It is
// an identity, not a place: it cannot be turned back into a pointer.
func Addr(p unsafe.Pointer) uintptr {
	if p == nil {
		return 0
	}
	t := addrs.get(func(rt.Runtime) *addrTable {
		return &addrTable{m: map[unsafe.Pointer]uintptr{}, used: map[uintptr]bool{}}
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	if a, ok := t.m[p]; ok {
		return a
	}
	for range 64 { // a collision among 2^61 draws is all but impossible; bounded all the same
		a := uintptr(src().Uint64() &^ 7)
		if a != 0 && !t.used[a] {
			t.m[p], t.used[a] = a, true
			return a
		}
	}
	panic("rtgo: no free stand-in address")
}

// Key is a pointer used as a map key where it may enter the map: it takes
// k's stand-in address now, in program order, so that ByAddr's order is the
// seed's and not the order in which Go's map happens to yield its keys.
func Key[P ~*E, E any](k P) P {
	Addr(unsafe.Pointer(k))
	return k
}

// ByAddr is range over a map keyed by pointers in the order of the keys'
// stand-in addresses, which the seed draws. A key that never went through
// Key has no address drawn in program order: that panics rather than give a
// run no seed can replay. A key deleted during the loop is skipped, as in Go.
func ByAddr[M ~map[P]V, P ~*E, E any, V any](m M) iter.Seq2[P, V] {
	t := addrs.get(func(rt.Runtime) *addrTable { return newAddrTable() })
	type ka struct {
		k P
		a uintptr
	}
	var keys []ka
	t.mu.Lock()
	for k := range m { // sorted below: the map's order does not matter
		a, ok := t.m[unsafe.Pointer(k)]
		if !ok && k != nil {
			t.mu.Unlock()
			panic("rtgo: a map key that did not enter the map through rtgo.Key")
		}
		keys = append(keys, ka{k, a})
	}
	t.mu.Unlock()
	slices.SortFunc(keys, func(x, y ka) int { return cmp.Compare(x.a, y.a) })
	return func(yield func(P, V) bool) {
		for _, x := range keys {
			v, ok := m[x.k]
			if ok && !yield(x.k, v) {
				return
			}
		}
	}
}
