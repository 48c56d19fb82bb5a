package racefree

import (
	"context"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Preempting wraps a runtime so that every read lock made through it
// yields right after it is taken and right before it is released: a
// goroutine holding a read lock lets the others run while it holds it. On
// one processor (go test -cpu 1, where the RaceFree checks run first) a
// goroutine is otherwise never switched out inside a lock that holds no
// blocking call. So two read holds never overlap, and a write lock
// weakened to a read lock, which lets two writers in at once, races only
// when two cores happen to run both. Write holds are left alone: a
// yielding writer, behind a lock that keeps new readers out while a
// writer waits, starved the readers (DR-7's reader asked Query 3 times
// beside 8,000 records). The code under test is unchanged: it takes its
// locks through the runtime seam (impl/rt), as in production.
func Preempting(r rt.Runtime) rt.Runtime { return preempting{r} }

type preempting struct{ rt.Runtime }

func (p preempting) NewRWMutex(name string) rt.RWMutex {
	return &preemptingRWMutex{RWMutex: p.Runtime.NewRWMutex(name), r: p.Runtime}
}

// preemptingRWMutex yields inside every read hold of its RWMutex.
type preemptingRWMutex struct {
	rt.RWMutex
	r rt.Runtime
}

// yieldIf yields when the lock was taken, and says whether it was.
func yieldIf(r rt.Runtime, ok bool) bool {
	if ok {
		r.Yield()
	}
	return ok
}

func (l *preemptingRWMutex) RLock()         { l.RWMutex.RLock(); l.r.Yield() }
func (l *preemptingRWMutex) RUnlock()       { l.r.Yield(); l.RWMutex.RUnlock() }
func (l *preemptingRWMutex) TryRLock() bool { return yieldIf(l.r, l.RWMutex.TryRLock()) }
func (l *preemptingRWMutex) RLockContext(ctx context.Context) error {
	err := l.RWMutex.RLockContext(ctx)
	yieldIf(l.r, err == nil)
	return err
}
