package racefree

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// TestPreemptingReadHoldsOverlapOnOneProcessor: on one processor, two
// goroutines taking a read lock of a Preempting runtime are inside it at
// once, which a plain runtime's never are (neither holds a blocking call);
// write holds are not stretched.
func TestPreemptingReadHoldsOverlapOnOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	overlap := func(r rt.Runtime, write bool) int {
		rw := r.NewRWMutex("x")
		count := r.NewMutex("count")
		inside, most := 0, 0
		enter := func(d int) {
			count.Lock()
			inside += d
			most = max(most, inside)
			count.Unlock()
		}
		body := func(int) error {
			for range 100 {
				// Inside from the lock's return to the unlock's.
				if write {
					rw.Lock()
					enter(1)
					rw.Unlock()
				} else {
					rw.RLock()
					enter(1)
					rw.RUnlock()
				}
				enter(-1)
				r.Yield()
			}
			return nil
		}
		Concurrently(t, r, Workers("reader", 2, body)...)
		return most
	}
	assert.Equal(t, 2, overlap(Preempting(rt.Real()), false), "read holds overlap")
	assert.Equal(t, 1, overlap(rt.Real(), false), "a plain runtime's read holds do not, on one processor")
	assert.Equal(t, 1, overlap(Preempting(rt.Real()), true), "write holds exclude each other")
}
