package rtgo

import (
	"context"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Sleep is time.Sleep on the bound runtime's clock.
func Sleep(d time.Duration) { _ = R().Sleep(bg, d) }

// Now, Since and Until read the bound runtime's clock.
func Now() time.Time                  { return R().Now() }
func Since(t time.Time) time.Duration { return Now().Sub(t) }
func Until(t time.Time) time.Duration { return t.Sub(Now()) }

// Gosched is runtime.Gosched: a scheduling point.
func Gosched() { R().Yield() }

// Go is the go statement: f on a new task named after where it started.
func Go(name string, f func()) { R().Go(name, f) }

// Timer is time.Timer: C receives the instant it fired (AfterFunc's has no
// C).
type Timer struct {
	C  *rt.Chan[time.Time]
	f  func()
	rt rt.Timer
}

// NewTimer is time.NewTimer. As since Go 1.23, C is unbuffered in effect: a
// stopped or reset timer never delivers a stale value, so C has room for one
// value which Stop and Reset drain.
func NewTimer(d time.Duration) *Timer {
	t := &Timer{C: MakeChan[time.Time](1)}
	t.start(d)
	return t
}

// AfterFunc is time.AfterFunc.
func AfterFunc(d time.Duration, f func()) *Timer {
	t := &Timer{f: f}
	t.start(d)
	return t
}

func (t *Timer) start(d time.Duration) {
	r := R()
	if t.f != nil {
		t.rt = r.AfterFunc(d, t.f)
		return
	}
	c := t.C
	t.rt = r.AfterFunc(d, func() {
		rt.TrySelect(r, c.SendCase(r.Now()))
	})
}

// Stop is (*time.Timer).Stop.
func (t *Timer) Stop() bool {
	stopped := t.rt.Stop()
	t.drain()
	return stopped
}

// Reset is (*time.Timer).Reset.
func (t *Timer) Reset(d time.Duration) bool {
	active := t.Stop()
	t.start(d)
	return active
}

func (t *Timer) drain() {
	if t.C != nil {
		rt.TrySelect(R(), t.C.RecvCase())
	}
}

// After is time.After.
func After(d time.Duration) *rt.Chan[time.Time] { return NewTimer(d).C }

// Ticker is time.Ticker: C receives an instant every period, dropping ticks
// a slow reader misses. One task per ticker sleeps from tick to tick, so
// that a ticker faster than the clock's steps costs a task, not one per
// tick.
type Ticker struct {
	C      *rt.Chan[time.Time]
	period time.Duration
	cancel context.CancelFunc
}

// NewTicker is time.NewTicker.
func NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic("non-positive interval for NewTicker")
	}
	t := &Ticker{C: MakeChan[time.Time](1), period: d}
	t.start()
	return t
}

func (t *Ticker) start() {
	r := R()
	ctx, cancel := r.WithCancel(bg)
	t.cancel = cancel
	c, period := t.C, t.period
	r.Go("ticker", func() {
		// In Go a ticker is no goroutine: the simulator's leak check is
		// told that this task only ticks on C.
		if m, ok := r.(interface{ TickerOf(rt.AnyChan) }); ok {
			m.TickerOf(c.Any())
		}
		for r.Sleep(ctx, period) == nil {
			rt.TrySelect(r, c.SendCase(r.Now()))
		}
	})
}

// Stop is (*time.Ticker).Stop.
func (t *Ticker) Stop() { t.cancel() }

// Reset is (*time.Ticker).Reset.
func (t *Ticker) Reset(d time.Duration) {
	t.Stop()
	t.period = d
	t.start()
}

// Tick is time.Tick.
func Tick(d time.Duration) *rt.Chan[time.Time] {
	if d <= 0 {
		return nil
	}
	return NewTicker(d).C
}

// WithCancel, WithTimeout and WithDeadline are the context package's on the
// bound runtime's clock.
func WithCancel(p context.Context) (context.Context, context.CancelFunc) { return R().WithCancel(p) }
func WithTimeout(p context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return R().WithTimeout(p, d)
}
func WithDeadline(p context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return R().WithDeadline(p, d)
}
