package inactivitycop

import (
	"errors"
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// ErrConn is returned for a connection that is closed or belongs to
// another Cop.
var ErrConn = errors.New("inactivitycop: connection is closed or belongs to another cop")

// Cop is the timeout state of one net thread: its open connections, their
// deadlines and the timer wheel that holds them. It is the pure core of a
// Handler: it never reads a clock (every call takes now), starts no tasks
// and is not safe for concurrent use.
type Cop struct {
	cfg   Config
	m     *Metrics
	wheel *timerwheel.Wheel
	// The connection queue, least recently active first (TW-10): a
	// connection moves to its newest end when it opens and on every
	// NetActivity; a full queue evicts from its oldest end.
	oldest, newest *Conn
	n              int
	nextID         uint64
	timeouts       []Timeout // the current pass's, reused
}

// NewCop returns a cop whose wheel's tick 0 starts at origin.
func NewCop(cfg Config, origin time.Time) (*Cop, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w, err := timerwheel.New(origin, cfg.Tick, cfg.Buckets)
	if err != nil {
		return nil, fmt.Errorf("inactivitycop: %w", err)
	}
	m := cfg.Metrics
	if m == nil {
		m = new(Metrics)
	}
	return &Cop{cfg: cfg, m: m, wheel: w}, nil
}

// Config returns the configuration.
func (p *Cop) Config() Config { return p.cfg }

// Metrics returns the counters the cop updates.
func (p *Cop) Metrics() *Metrics { return p.m }

// Wheel returns the timer wheel, for inspection (cursor, totals).
func (p *Cop) Wheel() *timerwheel.Wheel { return p.wheel }

// Len returns the number of open connections.
func (p *Cop) Len() int { return p.n }

// Conns returns the open connections in queue order: the least recently
// active first, the next to be evicted. The slice is a copy.
func (p *Cop) Conns() []*Conn {
	out := make([]*Conn, 0, p.n)
	for c := p.oldest; c != nil; c = c.newer {
		out = append(out, c)
	}
	return out
}

// Open adds a connection with no timeout armed at the newest end of the
// queue. If the queue already holds Config.MaxConns connections, the least
// recently active one (whose opening or last NetActivity is the oldest) is
// evicted first. It is closed, so it leaves the queue and the wheel and never
// times out again. It is returned as an Evicted timeout at now, which the
// caller must report to the connection's handler (TW-10; a Handler does).
// evicted is nil when the queue had room.
func (p *Cop) Open(now time.Time) (c *Conn, evicted *Timeout) {
	if p.n >= p.cfg.MaxConns {
		to := p.evict(now)
		evicted = &to
	}
	p.nextID++
	c = &Conn{cop: p, id: p.nextID}
	c.timer.c = c
	p.enqueue(c)
	return c, evicted
}

// evict makes room in a full queue: it closes the least recently active
// connection and returns its Evicted timeout (TW-10).
func (p *Cop) evict(now time.Time) Timeout {
	c := p.oldest
	p.m.Evicted.Inc()
	p.Close(c) // TW-10: an evicted connection leaves the queue and the wheel, so it never fires again
	return Timeout{Conn: c, Kind: Evicted, At: now}
}

// enqueue links c at the newest end of the queue.
func (p *Cop) enqueue(c *Conn) {
	c.older, c.newer, c.queued = p.newest, nil, true
	if p.newest != nil {
		p.newest.newer = c
	} else {
		p.oldest = c
	}
	p.newest = c
	p.n++
}

// unqueue unlinks c from the queue; a connection not in it is left alone.
func (p *Cop) unqueue(c *Conn) {
	if !c.queued {
		return
	}
	if c.older != nil {
		c.older.newer = c.newer
	} else {
		p.oldest = c.newer
	}
	if c.newer != nil {
		c.newer.older = c.older
	} else {
		p.newest = c.older
	}
	c.older, c.newer, c.queued = nil, nil, false
	p.n--
}

func (p *Cop) own(c *Conn) error {
	if c == nil || c.cop != p || c.closed {
		return ErrConn
	}
	return nil
}

// SetInactivityTimeout arms the inactivity timeout: the deadline becomes
// now+d and every later NetActivity pushes it to activity+d. 0 disarms it.
func (p *Cop) SetInactivityTimeout(c *Conn, now time.Time, d time.Duration) error {
	if err := p.own(c); err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("inactivitycop: negative inactivity timeout %v", d)
	}
	c.inactivityTimeout, c.inactivityAt = d, time.Time{}
	if d > 0 {
		c.inactivityAt = now.Add(d)
	}
	p.rearm(c) // TW-1: the new inactivity deadline may be earlier than the wheel's
	return nil
}

// SetActiveTimeout arms the active timeout at now+d. 0 disarms it.
func (p *Cop) SetActiveTimeout(c *Conn, now time.Time, d time.Duration) error {
	if err := p.own(c); err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("inactivitycop: negative active timeout %v", d)
	}
	c.activeAt = time.Time{}
	if d > 0 {
		c.activeAt = now.Add(d)
	}
	p.rearm(c) // TW-1: the new active deadline may be earlier than the wheel's
	return nil
}

// NetActivity is the hot path of every read and write: it pushes an armed
// inactivity deadline to now+timeout, never earlier, and does not touch the
// wheel (TW-1: the wheel may hold an earlier deadline; the pass that finds
// it re-arms). It moves the connection to the newest end of the queue
// (TW-10: evicted last). It ignores closed and foreign connections.
func (p *Cop) NetActivity(c *Conn, now time.Time) {
	if p.own(c) != nil {
		return
	}
	if c != p.newest { // the most recently active connection is evicted last (TW-10)
		p.unqueue(c)
		p.enqueue(c)
	}
	if c.inactivityTimeout <= 0 {
		return
	}
	if at := now.Add(c.inactivityTimeout); at.After(c.inactivityAt) {
		c.inactivityAt = at
	}
}

// Close removes the connection from the queue and the wheel; closing twice
// is a no-op.
func (p *Cop) Close(c *Conn) {
	if p.own(c) != nil {
		return
	}
	p.wheel.Cancel(&c.timer)
	p.unqueue(c)
	c.closed = true
	c.inactivityTimeout, c.inactivityAt, c.activeAt = 0, time.Time{}, time.Time{}
}

// rearm is the one path from a connection's deadlines to the wheel: every
// setter and every fired timeout goes through it (the seed's rearm_timer).
// Schedule cancels first, so it is O(1) either way (TW-6).
func (p *Cop) rearm(c *Conn) {
	d := c.Deadline()
	if d.IsZero() {
		p.wheel.Cancel(&c.timer)
		return
	}
	p.wheel.Schedule(&c.timer, d)
}

// expired fires the timeouts of a connection whose deadline passed: the
// inactivity one, then the active one, each if it passed. Firing disarms
// them; a timeout not yet passed stays armed and goes back in the wheel.
func (p *Cop) expired(c *Conn, now time.Time) {
	if !c.inactivityAt.IsZero() && timerwheel.Passed(c.inactivityAt, now) {
		p.timeouts = append(p.timeouts, Timeout{Conn: c, Kind: Inactivity, Deadline: c.inactivityAt, At: now})
		c.inactivityTimeout, c.inactivityAt = 0, time.Time{}
	}
	if !c.activeAt.IsZero() && timerwheel.Passed(c.activeAt, now) {
		p.timeouts = append(p.timeouts, Timeout{Conn: c, Kind: Active, Deadline: c.activeAt, At: now})
		c.activeAt = time.Time{}
	}
	p.rearm(c) // the remaining timeout, if any; the wheel inserts it after the pass
}
