package rtgo

import (
	"context"
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
