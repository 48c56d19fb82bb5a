package sim

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim/record"
)

// Scheduling points of the locks. Lock yields before it acquires, so another
// task may take the lock first. Unlock yields while still holding the lock
// and only then releases it, so every critical section spans at least one
// scheduling point: a task that arrives while the lock is held has to wait,
// as it would in a real process where the section takes time. Without this,
// a critical section with no rt call inside would be invisible to other tasks
// and a lock held too long (DR-3) could never be observed.

// newObj numbers a new sync object and names it for reports. Ids start at 1:
// 0 is objAll.
func (s *Sim) newObj(kind, name string) (int32, string) {
	s.nextObj++
	// Concatenation rather than Sprintf: an exhaustive exploration builds
	// the program's objects again in every run.
	id := "#" + strconv.Itoa(int(s.nextObj))
	var full string
	if name == "" {
		full = kind + id
	} else {
		full = kind + " " + name + id
	}
	if s.objSel != nil { // SURW with a world's selection (Config.Selected)
		s.objSel = append(s.objSel, s.cfg.Selected(full))
	}
	return s.nextObj, full
}

// objOrAll is the object of an operation that waits with context c: a
// cancellable context can be cancelled by any step, so such an operation
// depends on everything.
func objOrAll(id int32, c *simCtx) int32 {
	if c != nil {
		return objAll
	}
	return id
}

// NewMutex implements rt.Runtime.
func (s *Sim) NewMutex(name string) rt.Mutex {
	id, n := s.newObj("mutex", name)
	return &mutex{s: s, id: id, name: n}
}

type mutex struct {
	s       *Sim
	id      int32
	name    string
	locked  bool
	holder  *task
	waiters waitQueue
}

// Lock is the common path, kept apart from LockContext: no context to
// consult, and an uncontended acquire is a scheduling point and two stores.
func (m *mutex) Lock() {
	s := m.s
	s.yieldOn(m.id)
	if m.locked {
		_ = m.wait(background, nil)
		return
	}
	m.locked = true
	m.holder = s.current
	if s.rec != nil {
		s.recordObj(record.EventLock, m.name, "")
	}
}

func (m *mutex) LockContext(ctx context.Context) error {
	c := m.s.simContext(ctx, "LockContext")
	return m.lock(ctx, c)
}

func (m *mutex) lock(ctx context.Context, c *simCtx) error {
	s := m.s
	s.yieldOn(objOrAll(m.id, c))
	t := s.cur()
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.locked {
		return m.wait(ctx, c)
	}
	m.locked = true
	m.holder = t
	if s.rec != nil {
		s.recordObj(record.EventLock, m.name, "")
	}
	return nil
}

// wait queues the current task for the held lock and takes it once Unlock
// hands it over, or gives up when ctx ends. The queue is FIFO; a woken task
// that finds the lock taken again goes back to the front. Background (what
// Lock waits with) cannot end: its wait skips the interface call (ctx.Err)
// per wake, as Sleep does.
func (m *mutex) wait(ctx context.Context, c *simCtx) error {
	live := ctx != background
	s := m.s
	t := s.current
	m.waiters.pushBack(t)
	c.watch(t)
	for m.locked {
		if live && ctx.Err() != nil {
			break
		}
		if !m.waiters.has(t) {
			// Woken by Unlock but another task took the lock first: keep
			// our place at the front of the queue.
			m.waiters.pushFront(t)
		}
		s.block("Lock", m.name)
	}
	c.unwatch(t)
	if m.waiters.has(t) {
		m.waiters.remove(t)
	}
	if m.locked {
		return ctx.Err()
	}
	m.locked = true
	m.holder = t
	if s.rec != nil {
		s.recordObj(record.EventLock, m.name, "")
	}
	return nil
}

func (m *mutex) TryLock() bool {
	m.s.yieldOn(m.id)
	if m.locked {
		return false
	}
	m.locked = true
	m.holder = m.s.cur()
	if m.s.rec != nil {
		m.s.recordObj(record.EventLock, m.name, "TryLock")
	}
	return true
}

func (m *mutex) Unlock() {
	s := m.s
	if !m.locked {
		panic(fmt.Sprintf("sim: Unlock of unlocked %s", m.name))
	}
	s.yieldOn(m.id)
	m.locked = false
	m.holder = nil
	if s.rec != nil {
		s.recordObj(record.EventUnlock, m.name, "")
	}
	if w := m.waiters.popFront(); w != nil {
		s.wake(w)
	}
}

// NewRWMutex implements rt.Runtime: writer-preferring, like sync.RWMutex, so
// a waiting writer keeps new readers out.
func (s *Sim) NewRWMutex(name string) rt.RWMutex {
	id, n := s.newObj("rwmutex", name)
	return &rwmutex{s: s, id: id, name: n}
}

type rwmutex struct {
	s              *Sim
	id             int32
	name           string
	writer         *task
	readers        int
	writersWaiting int
	waiters        []*task // everyone blocked; woken together on a release
}

// wakeAll wakes every waiter. Waking only makes tasks runnable, so the
// queue's array is kept for the next waiters instead of reallocated.
func (m *rwmutex) wakeAll() {
	for _, w := range m.waiters {
		m.s.wake(w)
	}
	m.waiters = m.waiters[:0]
}

func (m *rwmutex) wait(t *task, op string) {
	m.waiters = append(m.waiters, t)
	m.s.block(op, m.name)
}

func (m *rwmutex) Lock() { _ = m.lock(context.Background(), nil) }

func (m *rwmutex) LockContext(ctx context.Context) error {
	return m.lock(ctx, m.s.simContext(ctx, "LockContext"))
}

func (m *rwmutex) lock(ctx context.Context, c *simCtx) error {
	s := m.s
	s.yieldOn(objOrAll(m.id, c))
	t := s.cur()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if m.writer == nil && m.readers == 0 {
		m.writer = t
		if s.rec != nil {
			s.recordObj(record.EventLock, m.name, "")
		}
		return nil
	}
	m.writersWaiting++
	c.watch(t)
	defer c.unwatch(t)
	for m.writer != nil || m.readers > 0 {
		if ctx.Err() != nil {
			m.writersWaiting--
			m.waiters = slices.DeleteFunc(m.waiters, func(x *task) bool { return x == t })
			m.wakeAll() // readers held back by this writer may go
			return ctx.Err()
		}
		m.wait(t, "Lock")
	}
	m.writersWaiting--
	m.writer = t
	if s.rec != nil {
		s.recordObj(record.EventLock, m.name, "")
	}
	return nil
}

func (m *rwmutex) TryLock() bool {
	m.s.yieldOn(m.id)
	if m.writer != nil || m.readers > 0 {
		return false
	}
	m.writer = m.s.cur()
	if m.s.rec != nil {
		m.s.recordObj(record.EventLock, m.name, "TryLock")
	}
	return true
}

func (m *rwmutex) Unlock() {
	if m.writer == nil {
		panic(fmt.Sprintf("sim: Unlock of unlocked %s", m.name))
	}
	m.s.yieldOn(m.id)
	m.writer = nil
	if m.s.rec != nil {
		m.s.recordObj(record.EventUnlock, m.name, "")
	}
	m.wakeAll()
}

func (m *rwmutex) RLock() { _ = m.rlock(context.Background(), nil) }

func (m *rwmutex) RLockContext(ctx context.Context) error {
	return m.rlock(ctx, m.s.simContext(ctx, "RLockContext"))
}

func (m *rwmutex) rlock(ctx context.Context, c *simCtx) error {
	s := m.s
	s.yieldOn(objOrAll(m.id, c))
	t := s.cur()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.watch(t)
	defer c.unwatch(t)
	for m.writer != nil || m.writersWaiting > 0 {
		if ctx.Err() != nil {
			m.waiters = slices.DeleteFunc(m.waiters, func(x *task) bool { return x == t })
			return ctx.Err()
		}
		m.wait(t, "RLock")
	}
	m.readers++
	if s.rec != nil {
		s.recordObj(record.EventRLock, m.name, "")
	}
	return nil
}

func (m *rwmutex) TryRLock() bool {
	m.s.yieldOn(m.id)
	if m.writer != nil || m.writersWaiting > 0 {
		return false
	}
	m.readers++
	if m.s.rec != nil {
		m.s.recordObj(record.EventRLock, m.name, "TryRLock")
	}
	return true
}

func (m *rwmutex) RUnlock() {
	if m.readers <= 0 {
		panic(fmt.Sprintf("sim: RUnlock of unlocked %s", m.name))
	}
	m.s.yieldOn(m.id)
	m.readers--
	if m.s.rec != nil {
		m.s.recordObj(record.EventRUnlock, m.name, "")
	}
	if m.readers == 0 {
		m.wakeAll()
	}
}

// NewEvent implements rt.Runtime.
func (s *Sim) NewEvent(name string) rt.Event {
	id, n := s.newObj("event", name)
	return &event{s: s, id: id, name: n}
}

type event struct {
	s       *Sim
	id      int32
	name    string
	set     bool
	waiters []*task
}

func (e *event) Set() {
	e.s.yieldOn(e.id)
	if e.set {
		return
	}
	e.set = true
	for _, w := range e.waiters {
		e.s.wake(w)
	}
	e.waiters = nil
}

// IsSet reads the event without a scheduling point, in the middle of some
// other step: for the explorer that step now operates on the event too.
func (e *event) IsSet() bool {
	e.s.touch(e.id)
	return e.set
}

func (e *event) Wait(ctx context.Context) error {
	s := e.s
	c := s.simContext(ctx, "Event.Wait")
	s.yieldOn(objOrAll(e.id, c))
	t := s.cur()
	c.watch(t)
	defer c.unwatch(t)
	for !e.set {
		if err := ctx.Err(); err != nil {
			e.waiters = slices.DeleteFunc(e.waiters, func(x *task) bool { return x == t })
			return err
		}
		e.waiters = append(e.waiters, t)
		s.block("Event.Wait", e.name)
	}
	return nil
}

// NewWaitGroup implements rt.Runtime.
func (s *Sim) NewWaitGroup(name string) rt.WaitGroup {
	id, n := s.newObj("waitgroup", name)
	return &waitGroup{s: s, id: id, name: n}
}

type waitGroup struct {
	s       *Sim
	id      int32
	name    string
	n       int
	waiters []*task
}

func (w *waitGroup) Add(delta int) {
	w.s.yieldOn(w.id)
	if w.n+delta < 0 {
		panic(fmt.Sprintf("sim: negative counter in %s", w.name))
	}
	w.n += delta
	if w.n == 0 {
		for _, t := range w.waiters {
			w.s.wake(t)
		}
		w.waiters = w.waiters[:0] // keep the array for the next round
	}
}

func (w *waitGroup) Done() { w.Add(-1) }

func (w *waitGroup) Wait(ctx context.Context) error {
	s := w.s
	c := s.simContext(ctx, "WaitGroup.Wait")
	s.yieldOn(objOrAll(w.id, c))
	t := s.cur()
	c.watch(t)
	defer c.unwatch(t)
	for w.n > 0 {
		if err := ctx.Err(); err != nil {
			w.waiters = slices.DeleteFunc(w.waiters, func(x *task) bool { return x == t })
			return err
		}
		w.waiters = append(w.waiters, t)
		s.block("WaitGroup.Wait", w.name)
	}
	return nil
}

// Go implements rt.Runtime: f starts on a new task, and the caller yields.
func (s *Sim) Go(name string, f func()) {
	s.cur()
	if len(s.tasks) >= s.cfg.MaxTasks {
		s.failLimit(fmt.Sprintf("task limit of %d exceeded (starting %q)", s.cfg.MaxTasks, name))
		panic(killSignal{})
	}
	s.spawn(name, f)
	// The caller's next step touches only what it touched before the spawn
	// (the spawn orders it before everything the new task does): it needs no
	// object beyond its own.
	s.yieldOn(-1 - s.current.id)
}

// Yield implements rt.Runtime: an explicit scheduling point.
func (s *Sim) Yield() {
	if s.goOrder != nil {
		s.goOrder.yielded = true
	}
	s.yieldPoint()
}
