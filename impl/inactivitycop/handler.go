package inactivitycop

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/rt"
)

// Handler is one net thread's connections and their inactivity cop, on a
// Runtime: a Cop behind a lock, a clock, and a task that runs one pass per
// tick. It is safe for concurrent use.
type Handler struct {
	r         rt.Runtime
	name      string
	cfg       Config
	origin    time.Time
	mu        rt.Mutex // guards cop
	cop       *Cop
	onTimeout func(Timeout)
}

// NewHandler returns a handler whose passes fall on the grid origin+k*Tick,
// origin being now. onTimeout, which may be nil, is called once per fired
// timeout, from the task running the pass, after the handler's lock is
// released. So it may call the handler (typically Close). Closing is its
// business: a timed-out connection stays open until somebody closes it. An
// eviction from the full queue is reported the same way, once, from the task
// whose Open evicted it. That connection is already closed.
func NewHandler(r rt.Runtime, name string, cfg Config, onTimeout func(Timeout)) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("inactivitycop: NewHandler needs a Runtime (rt.Real() in a service)")
	}
	origin := r.Now()
	cop, err := NewCop(cfg, origin)
	if err != nil {
		return nil, err
	}
	return &Handler{
		r: r, name: name, cfg: cfg, origin: origin,
		mu:        r.NewMutex("inactivitycop/" + name),
		cop:       cop,
		onTimeout: onTimeout,
	}, nil
}

// Metrics returns the counters the handler updates.
func (h *Handler) Metrics() *Metrics { return h.cop.m }

// Open adds a connection with no timeout armed. If the thread's queue is
// full, the least recently active connection is evicted to make room
// (Cop.Open): onTimeout receives its Evicted timeout, from the calling
// task, after the lock is released and before Open returns (TW-10).
func (h *Handler) Open() *Conn {
	h.mu.Lock()
	c, evicted := h.cop.Open(h.r.Now())
	h.mu.Unlock()
	if evicted != nil && h.onTimeout != nil {
		h.onTimeout(*evicted) // TW-10: the evicted connection's handler gets exactly one timeout
	}
	return c
}

// SetInactivityTimeout arms the inactivity timeout at now+d (0 disarms).
func (h *Handler) SetInactivityTimeout(c *Conn, d time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cop.SetInactivityTimeout(c, h.r.Now(), d)
}

// SetActiveTimeout arms the active timeout at now+d (0 disarms).
func (h *Handler) SetActiveTimeout(c *Conn, d time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cop.SetActiveTimeout(c, h.r.Now(), d)
}

// NetActivity records activity: the inactivity deadline moves later, the
// wheel is not touched (TW-1).
func (h *Handler) NetActivity(c *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cop.NetActivity(c, h.r.Now())
}

// Close removes the connection; closing twice is a no-op.
func (h *Handler) Close(c *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cop.Close(c)
}

// Do runs f with the handler's lock held and the current instant, for
// reading connections consistently or auditing. f must not call the
// handler's other methods (the lock is not reentrant).
func (h *Handler) Do(f func(cop *Cop, now time.Time)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h.cop, h.r.Now())
}

// Pass runs one pass now, records its duration in the pass-time metrics and
// then calls onTimeout for each fired timeout, outside the lock.
func (h *Handler) Pass() PassResult {
	h.mu.Lock()
	start := h.r.Now()
	res := h.cop.Pass(start)
	res.Timeouts = slices.Clone(res.Timeouts) // the cop reuses its buffer
	us := h.r.Now().Sub(start).Microseconds()
	h.mu.Unlock()
	m := h.cop.m
	m.PassTimeUS.Add(us)
	m.PassMaxUS.SetMax(us)
	if h.onTimeout != nil {
		for _, t := range res.Timeouts {
			h.onTimeout(t)
		}
	}
	return res
}

// Run is the cop task: one pass per tick, on the grid origin+k*Tick, and a
// continuation Config.Continuation after a pass that hit its budget. It
// returns ctx's error when ctx ends; it runs until then.
func (h *Handler) Run(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		res := h.Pass()
		wait := h.untilNextTick(h.r.Now())
		if res.Exhausted {
			wait = h.cfg.Continuation // TW-4: an exhausted pass continues 1 ms later
		}
		if err := h.r.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// Start runs Run on a new task and returns an event set when it returns.
func (h *Handler) Start(ctx context.Context) rt.Event {
	done := h.r.NewEvent("inactivitycop/" + h.name + "/done")
	h.r.Go("inactivitycop/"+h.name, func() {
		defer done.Set()
		_ = h.Run(ctx)
	})
	return done
}

// untilNextTick returns the time from now to the next grid instant
// origin+k*Tick strictly after now.
func (h *Handler) untilNextTick(now time.Time) time.Duration {
	since := now.Sub(h.origin)
	if since < 0 {
		return -since
	}
	return h.cfg.Tick - since%h.cfg.Tick
}
