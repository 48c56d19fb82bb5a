package sim

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// simCtx is a context whose cancellation and deadline run on the virtual
// clock. Tasks never block on Done(); they pass the context to an rt call,
// which registers them as watchers so that cancellation wakes them.
type simCtx struct {
	s        *Sim
	parent   context.Context
	deadline int64 // virtual ns since Epoch
	hasDL    bool
	err      error
	done     chan struct{} // made on first Done(), closed on cancel
	children []*simCtx
	watchers []*task
	timer    *timer  // &dl while the deadline is pending
	dl       timer   // the deadline's timer, allocated with the context
	up       *simCtx // nearest simCtx ancestor, to unlink on cancel
}

type simCtxKey struct{}

var background = context.Background()

func (c *simCtx) Deadline() (time.Time, bool) {
	if !c.hasDL {
		return time.Time{}, false
	}
	return Epoch.Add(time.Duration(c.deadline)), true
}

// Done exists for the context.Context interface. Under the simulator a task
// must not block on it (that would stop the whole scheduler): pass the
// context to an rt call instead.
func (c *simCtx) Done() <-chan struct{} {
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *simCtx) Err() error {
	if c.err == nil && c.up == nil && c.parent.Err() != nil {
		// A foreign parent (never cancelled under the simulator in practice,
		// but honour it if it is).
		return c.parent.Err()
	}
	return c.err
}

func (c *simCtx) Value(key any) any {
	if key == (simCtxKey{}) {
		return c
	}
	return c.parent.Value(key)
}

func (c *simCtx) String() string { return fmt.Sprintf("sim.context(%v)", c.parent) }

// cancel ends c and every descendant with err, waking their watchers.
func (c *simCtx) cancel(err error) {
	// A cancel inside a step is seen by every task that uses the context,
	// through rt calls or ctx.Err: the step depends on everything.
	c.s.touchAll()
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.s.removeTimer(c.timer)
		c.timer = nil
	}
	for _, t := range c.watchers {
		c.s.wake(t)
	}
	for _, ch := range c.children {
		ch.up = nil // avoid unlinking from us while we iterate
		ch.cancel(err)
	}
	c.children = nil
	if c.up != nil {
		c.up.children = slices.DeleteFunc(c.up.children, func(x *simCtx) bool { return x == c })
		c.up = nil
	}
}

func (c *simCtx) watch(t *task) {
	if c != nil {
		c.watchers = append(c.watchers, t)
	}
}

func (c *simCtx) unwatch(t *task) {
	if c != nil { // small enough to inline: most waits have no context
		c.drop(t)
	}
}

func (c *simCtx) drop(t *task) {
	c.watchers = slices.DeleteFunc(c.watchers, func(x *task) bool { return x == t })
}

// simContext finds the simulator context behind ctx, so that a waiting task
// can be woken when it ends. A context that can be cancelled but not by this
// Sim (context.WithCancel of the real package) cannot be observed on the
// virtual clock: that is a programming error and fails the run loudly.
func (s *Sim) simContext(ctx context.Context, op string) *simCtx {
	// Fast paths for the two commonest contexts: no Value walk.
	if ctx == background {
		return nil
	}
	if c, ok := ctx.(*simCtx); ok && c.s == s {
		return c
	}
	if c, ok := ctx.Value(simCtxKey{}).(*simCtx); ok && c.s == s {
		return c
	}
	if ctx.Done() != nil {
		s.Failf("sim: %s got a context that was not derived with this Sim's WithCancel/WithDeadline/WithTimeout; its cancellation cannot be observed on the virtual clock", op)
	}
	return nil
}

func (s *Sim) newCtx(parent context.Context, deadline int64, hasDL bool) (*simCtx, context.CancelFunc) {
	c := &simCtx{s: s, parent: parent}
	if p, ok := parent.Value(simCtxKey{}).(*simCtx); ok && p.s == s {
		if p.err != nil {
			c.err = p.err
		} else {
			c.up = p
			p.children = append(p.children, c)
		}
	} else if err := parent.Err(); err != nil {
		c.err = err
	}
	if pd, ok := parent.Deadline(); ok {
		pdn := int64(pd.Sub(Epoch))
		if !hasDL || pdn < deadline {
			deadline, hasDL = pdn, true
		}
	}
	c.deadline, c.hasDL = deadline, hasDL
	if c.err == nil && hasDL {
		if deadline <= s.nowNs {
			c.cancel(context.DeadlineExceeded)
		} else {
			c.dl = timer{when: deadline, kind: timerDeadline, ctx: c}
			c.timer = s.addTimer(&c.dl)
		}
	}
	return c, func() { c.cancel(context.Canceled) }
}

// WithCancel implements rt.Runtime. Neither it nor the CancelFunc is a
// scheduling point.
func (s *Sim) WithCancel(parent context.Context) (context.Context, context.CancelFunc) {
	return s.newCtx(parent, 0, false)
}

// WithDeadline implements rt.Runtime on the virtual clock.
func (s *Sim) WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return s.newCtx(parent, int64(d.Sub(Epoch)), true)
}

// WithTimeout implements rt.Runtime on the virtual clock.
func (s *Sim) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return s.newCtx(parent, s.nowNs+int64(d), true)
}
