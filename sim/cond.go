package sim

import "github.com/windtunnel/windtunnel/impl/rt"

// NewCond implements rt.Runtime: Wait queues the task, unlocks l, blocks
// until a Signal or Broadcast picks it (FIFO), then locks l again.
func (s *Sim) NewCond(name string, l rt.Locker) rt.Cond {
	id, n := s.newObj("cond", name)
	return &cond{s: s, id: id, name: n, l: l}
}

type cond struct {
	s       *Sim
	id      int32
	name    string
	l       rt.Locker
	waiters []*condWaiter
}

type condWaiter struct {
	t        *task
	signaled bool
}

func (c *cond) Wait() {
	s := c.s
	w := &condWaiter{t: s.cur()}
	c.waiters = append(c.waiters, w)
	c.l.Unlock()
	for !w.signaled {
		s.block("sync.Cond.Wait", c.name)
	}
	c.l.Lock()
}

func (c *cond) Signal() {
	c.s.yieldOn(c.id)
	if len(c.waiters) > 0 {
		w := c.waiters[0]
		c.waiters = c.waiters[1:]
		w.signaled = true
		c.s.wake(w.t)
	}
}

func (c *cond) Broadcast() {
	c.s.yieldOn(c.id)
	for _, w := range c.waiters {
		w.signaled = true
		c.s.wake(w.t)
	}
	c.waiters = nil
}

// NewOnce implements rt.Runtime: the first Do runs f; a Do that arrives while
// f runs waits for it, as with sync.Once.
func (s *Sim) NewOnce(name string) rt.Once {
	id, n := s.newObj("once", name)
	return &once{s: s, id: id, name: n}
}

type once struct {
	s       *Sim
	id      int32
	name    string
	done    bool
	running bool
	waiters []*task
}

func (o *once) Do(f func()) {
	s := o.s
	s.yieldOn(o.id)
	if o.done {
		return
	}
	if o.running {
		t := s.cur()
		for !o.done {
			o.waiters = append(o.waiters, t)
			s.block("sync.Once.Do", o.name)
		}
		return
	}
	o.running = true
	defer func() {
		o.done, o.running = true, false
		for _, t := range o.waiters {
			s.wake(t)
		}
		o.waiters = nil
	}()
	f()
}
