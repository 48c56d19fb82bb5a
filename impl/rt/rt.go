// Package rt is the runtime seam: the only way production code in impl/
// touches time, locks and tasks.
//
// Code written against a Runtime runs unchanged in two worlds:
//
//   - Real() implements it on the sync and time packages and real goroutines.
//     This is what a service uses.
//   - The deterministic simulator (package sim) implements it on coroutines
//     driven by a seeded scheduler and a virtual clock, so that every
//     interleaving and every instant of a run is reproducible from one seed.
//
// The seam is deliberately small. Every method that can block takes part in
// the simulator's scheduling: Lock, Unlock, Sleep, Go, Yield, Event.Wait and
// friends are scheduling points, where the simulator may switch to another
// task. Now is not: reading the clock never yields, so a computation between
// two rt calls is atomic under the simulator.
//
// Rules for code behind the seam (a source scan in this repository enforces
// them outside impl/rt):
//   - No go statements (use Go).
//   - No time.Now, time.Sleep, time.After or timers (use Now, Sleep,
//     AfterFunc).
//   - No sync locks, Go channels or select between tasks (use Mutex,
//     RWMutex, Event, WaitGroup, Cond, Once, and the seam's Chan and Select).
//   - No global math/rand, and no map iteration whose order affects
//     behaviour.
//
// Contexts: cancellation and deadlines must run on the Runtime's clock. So
// derive them with WithCancel, WithTimeout and WithDeadline of the Runtime,
// never with the context package's constructors. Never block on ctx.Done() itself:
// pass the context to an rt call (LockContext, Sleep, Wait), which returns
// the context's error when it ends. Checking ctx.Err() is always fine.
package rt

import (
	"context"
	"time"
)

// Runtime is the set of operations impl code may use to observe time and to
// coordinate tasks. Implementations: Real() and the simulator in package sim.
type Runtime interface {
	// Now returns the current instant on this runtime's clock. It is never a
	// scheduling point.
	Now() time.Time

	// Sleep pauses the calling task for d, or until ctx ends, whichever comes
	// first. It returns nil after a full sleep and ctx.Err() otherwise. A
	// non-positive d still yields once.
	Sleep(ctx context.Context, d time.Duration) error

	// AfterFunc runs f on its own task once d has elapsed, unless the timer
	// is stopped first.
	AfterFunc(d time.Duration, f func()) Timer

	// Go starts f on a new task. The name identifies the task in traces,
	// deadlock reports and panics; it need not be unique.
	Go(name string, f func())

	// Yield is an explicit scheduling point: other tasks may run before the
	// caller continues. Long computations call it between units of work.
	Yield()

	// NewMutex returns an unlocked mutual-exclusion lock. The name appears in
	// traces and deadlock reports.
	NewMutex(name string) Mutex

	// NewRWMutex returns an unlocked reader/writer lock. Like sync.RWMutex,
	// a blocked writer keeps new readers out, so writers cannot starve.
	NewRWMutex(name string) RWMutex

	// NewEvent returns a one-shot latch: unset until Set, then set forever.
	NewEvent(name string) Event

	// NewWaitGroup returns a counter that Wait blocks on until it is zero.
	NewWaitGroup(name string) WaitGroup

	// NewChan returns a channel with room for size values; code uses the
	// typed NewChan[T] over it.
	NewChan(name string, size int) AnyChan

	// Select performs one ready case (see the package function Select); with
	// block false it returns -1 when none is ready, like a default case.
	Select(cases []Case, block bool) (chosen int, v any, ok bool)

	// NewCond returns a condition variable over l.
	NewCond(name string, l Locker) Cond

	// NewOnce returns a fresh Once.
	NewOnce(name string) Once

	// WithCancel, WithDeadline and WithTimeout derive contexts whose
	// cancellation and deadline run on this runtime's clock. The returned
	// CancelFunc must be called to release resources, as with the context
	// package.
	WithCancel(parent context.Context) (context.Context, context.CancelFunc)
	WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc)
	WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc)
}

// Mutex is a mutual-exclusion lock. The zero value is not usable; create one
// with Runtime.NewMutex. Unlocking an unlocked Mutex panics.
type Mutex interface {
	Lock()
	Unlock()
	// TryLock acquires the lock if it is free and reports whether it did.
	TryLock() bool
	// LockContext acquires the lock, or gives up when ctx ends and returns
	// ctx.Err(). On error the lock is not held.
	LockContext(ctx context.Context) error
}

// RWMutex is a reader/writer lock. The write half has the Mutex methods.
type RWMutex interface {
	Mutex
	RLock()
	RUnlock()
	TryRLock() bool
	RLockContext(ctx context.Context) error
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the function from running. It reports whether it did so:
	// false means the function already started or the timer was stopped.
	Stop() bool
}

// Event is a one-shot latch, the runtime-neutral form of a closed channel.
type Event interface {
	// Set sets the event and releases every waiter. Setting twice is a no-op.
	Set()
	// IsSet reports whether Set has been called. It is not a scheduling point.
	IsSet() bool
	// Wait blocks until the event is set (returning nil) or ctx ends
	// (returning ctx.Err()).
	Wait(ctx context.Context) error
}

// WaitGroup waits for a collection of tasks to finish, like sync.WaitGroup,
// but with a cancellable Wait. A negative counter panics.
type WaitGroup interface {
	Add(delta int)
	Done()
	Wait(ctx context.Context) error
}
