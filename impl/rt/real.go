package rt

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Real returns the Runtime of a real process: the wall clock, goroutines and
// locks built on sync and channels. It is safe for concurrent use and has no
// state of its own, so every call returns an equivalent value.
func Real() Runtime { return realRuntime{} }

type realRuntime struct{}

func (realRuntime) Now() time.Time { return time.Now() }

func (realRuntime) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		runtime.Gosched()
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (realRuntime) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

func (realRuntime) Go(_ string, f func()) { go f() }

func (realRuntime) Yield() { runtime.Gosched() }

func (realRuntime) NewMutex(string) Mutex { return &realMutex{ch: make(chan struct{}, 1)} }

func (realRuntime) NewRWMutex(string) RWMutex { return &realRWMutex{} }

func (realRuntime) NewEvent(string) Event { return &realEvent{ch: make(chan struct{})} }

func (realRuntime) NewWaitGroup(string) WaitGroup { return &realWaitGroup{} }

func (realRuntime) WithCancel(p context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(p)
}

func (realRuntime) WithDeadline(p context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(p, d)
}

func (realRuntime) WithTimeout(p context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(p, d)
}

// realMutex is a one-slot semaphore. sync.Mutex cannot give up a wait at a
// deadline, which LockContext needs (the membership cache's lock-wait
// timeout), so the slot is a buffered channel: sending takes the lock.
type realMutex struct{ ch chan struct{} }

func (m *realMutex) Lock() { m.ch <- struct{}{} }

func (m *realMutex) Unlock() {
	select {
	case <-m.ch:
	default:
		panic("rt: unlock of unlocked Mutex")
	}
}

func (m *realMutex) TryLock() bool {
	select {
	case m.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

func (m *realMutex) LockContext(ctx context.Context) error {
	// An ended context never acquires, even if the lock is free: the caller
	// asked to give up, and the simulator behaves the same way.
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case m.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// realRWMutex is a writer-preferring reader/writer lock with cancellable
// waits. State changes broadcast by closing a channel that waiters select on
// together with their context; the channel is only allocated when somebody
// waits, so uncontended operations cost one sync.Mutex round trip.
type realRWMutex struct {
	mu             sync.Mutex
	readers        int
	writer         bool
	writersWaiting int
	wake           chan struct{}
}

func (m *realRWMutex) waitChan() chan struct{} {
	if m.wake == nil {
		m.wake = make(chan struct{})
	}
	return m.wake
}

func (m *realRWMutex) broadcast() {
	if m.wake != nil {
		close(m.wake)
		m.wake = nil
	}
}

func (m *realRWMutex) Lock() { _ = m.LockContext(context.Background()) }

func (m *realRWMutex) TryLock() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writer || m.readers > 0 {
		return false
	}
	m.writer = true
	return true
}

func (m *realRWMutex) LockContext(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	if !m.writer && m.readers == 0 {
		m.writer = true
		m.mu.Unlock()
		return nil
	}
	m.writersWaiting++
	for {
		ch := m.waitChan()
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			m.mu.Lock()
			m.writersWaiting--
			// Readers held back by this writer may go now.
			m.broadcast()
			m.mu.Unlock()
			return ctx.Err()
		}
		m.mu.Lock()
		if !m.writer && m.readers == 0 {
			m.writer = true
			m.writersWaiting--
			m.mu.Unlock()
			return nil
		}
	}
}

func (m *realRWMutex) Unlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.writer {
		panic("rt: Unlock of unlocked RWMutex")
	}
	m.writer = false
	m.broadcast()
}

func (m *realRWMutex) RLock() { _ = m.RLockContext(context.Background()) }

func (m *realRWMutex) TryRLock() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writer || m.writersWaiting > 0 {
		return false
	}
	m.readers++
	return true
}

func (m *realRWMutex) RLockContext(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	for m.writer || m.writersWaiting > 0 {
		ch := m.waitChan()
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		m.mu.Lock()
	}
	m.readers++
	m.mu.Unlock()
	return nil
}

func (m *realRWMutex) RUnlock() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.readers <= 0 {
		panic("rt: RUnlock of unlocked RWMutex")
	}
	m.readers--
	if m.readers == 0 {
		m.broadcast()
	}
}

type realEvent struct {
	set atomic.Bool
	ch  chan struct{}
}

func (e *realEvent) Set() {
	if e.set.CompareAndSwap(false, true) {
		close(e.ch)
	}
}

func (e *realEvent) IsSet() bool { return e.set.Load() }

func (e *realEvent) Wait(ctx context.Context) error {
	if e.set.Load() {
		return nil
	}
	select {
	case <-e.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// realWaitGroup is sync.WaitGroup with a cancellable Wait: a counter and a
// channel closed whenever the counter returns to zero.
type realWaitGroup struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // nil while n == 0
}

func (w *realWaitGroup) Add(delta int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.n + delta
	if n < 0 {
		panic("rt: negative WaitGroup counter")
	}
	if w.n == 0 && n > 0 {
		w.zero = make(chan struct{})
	}
	if n == 0 && w.zero != nil {
		close(w.zero)
		w.zero = nil
	}
	w.n = n
}

func (w *realWaitGroup) Done() { w.Add(-1) }

func (w *realWaitGroup) Wait(ctx context.Context) error {
	w.mu.Lock()
	ch := w.zero
	w.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
