package rtgo

import "github.com/windtunnel/windtunnel/impl/rt"

// Mutex is sync.Mutex on the bound runtime.
type Mutex struct{ l lazy[rt.Mutex] }

func (m *Mutex) get() rt.Mutex {
	return m.l.get(func(r rt.Runtime) rt.Mutex { return r.NewMutex("") })
}

func (m *Mutex) Lock()         { m.get().Lock() }
func (m *Mutex) Unlock()       { m.get().Unlock() }
func (m *Mutex) TryLock() bool { return m.get().TryLock() }

// RWMutex is sync.RWMutex on the bound runtime.
type RWMutex struct{ l lazy[rt.RWMutex] }

func (m *RWMutex) get() rt.RWMutex {
	return m.l.get(func(r rt.Runtime) rt.RWMutex { return r.NewRWMutex("") })
}

func (m *RWMutex) Lock()          { m.get().Lock() }
func (m *RWMutex) Unlock()        { m.get().Unlock() }
func (m *RWMutex) TryLock() bool  { return m.get().TryLock() }
func (m *RWMutex) RLock()         { m.get().RLock() }
func (m *RWMutex) RUnlock()       { m.get().RUnlock() }
func (m *RWMutex) TryRLock() bool { return m.get().TryRLock() }

// RLocker is the read half as a Locker, as sync.RWMutex.RLocker.
func (m *RWMutex) RLocker() rt.Locker { return rlocker{m} }

type rlocker struct{ m *RWMutex }

func (r rlocker) Lock()   { r.m.RLock() }
func (r rlocker) Unlock() { r.m.RUnlock() }

// WaitGroup is sync.WaitGroup on the bound runtime.
type WaitGroup struct{ l lazy[rt.WaitGroup] }

func (w *WaitGroup) get() rt.WaitGroup {
	return w.l.get(func(r rt.Runtime) rt.WaitGroup { return r.NewWaitGroup("") })
}

func (w *WaitGroup) Add(n int) { w.get().Add(n) }
func (w *WaitGroup) Done()     { w.get().Done() }
func (w *WaitGroup) Wait()     { _ = w.get().Wait(bg) }

// Go runs f on a new task between Add(1) and Done, as sync.WaitGroup.Go.
func (w *WaitGroup) Go(f func()) {
	w.Add(1)
	Go("WaitGroup.Go", func() {
		defer w.Done()
		f()
	})
}

// Once is sync.Once on the bound runtime.
type Once struct{ l lazy[rt.Once] }

func (o *Once) Do(f func()) {
	o.l.get(func(r rt.Runtime) rt.Once { return r.NewOnce("") }).Do(f)
}

// Cond is sync.Cond on the bound runtime: L is its Locker, as in sync.
type Cond struct {
	L rt.Locker
	c lazy[rt.Cond]
}

// NewCond is sync.NewCond.
func NewCond(l rt.Locker) *Cond { return &Cond{L: l} }

func (c *Cond) get() rt.Cond {
	return c.c.get(func(r rt.Runtime) rt.Cond { return r.NewCond("", c.L) })
}

func (c *Cond) Wait()      { c.get().Wait() }
func (c *Cond) Signal()    { c.get().Signal() }
func (c *Cond) Broadcast() { c.get().Broadcast() }
