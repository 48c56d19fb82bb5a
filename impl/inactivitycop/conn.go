package inactivitycop

import (
	"fmt"
	"time"

	"github.com/windtunnel/windtunnel/impl/timerwheel"
)

// Kind says which timeout of a connection fired.
type Kind uint8

const (
	// Inactivity: no activity for the inactivity timeout.
	Inactivity Kind = iota + 1
	// Active: the connection's active timeout (total lifetime) passed.
	Active
	// Evicted: the connection was evicted from its thread's full queue to
	// make room for a new one (TW-10). It is closed: it left the queue and
	// the wheel, so it never times out again.
	Evicted
)

func (k Kind) String() string {
	switch k {
	case Inactivity:
		return "inactivity"
	case Active:
		return "active"
	case Evicted:
		return "evicted"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Conn is one connection's timeout state (the seed's NetEvent). Create it
// with Cop.Open or Handler.Open; change it only through its Cop or Handler.
// ID may be read at any time; the other accessors read state the cop
// changes, so under a Handler read them inside Handler.Do.
type Conn struct {
	timer connTimer
	cop   *Cop
	id    uint64
	// older and newer link the thread's connection queue, least recently
	// active first; queued says the connection is in it.
	older, newer      *Conn
	queued            bool
	closed            bool
	inactivityTimeout time.Duration
	inactivityAt      time.Time
	activeAt          time.Time
}

// connTimer is the wheel's view of a Conn: the embedded element and the two
// delegate methods, kept off Conn's own method set.
type connTimer struct {
	timerwheel.Element
	c *Conn
}

// Deadline is the real deadline the wheel re-reads on every visit.
func (t *connTimer) Deadline() time.Time { return t.c.Deadline() }

// Expired records the timeout for the pass in progress.
func (t *connTimer) Expired(now time.Time) { t.c.cop.expired(t.c, now) }

// ID returns the connection's number: 1, 2, 3... per Cop, in opening order.
func (c *Conn) ID() uint64 { return c.id }

// Closed reports whether the connection was closed (or evicted).
func (c *Conn) Closed() bool { return c.closed }

// InactivityTimeout returns the armed inactivity timeout, 0 if none.
func (c *Conn) InactivityTimeout() time.Duration { return c.inactivityTimeout }

// InactivityDeadline returns the inactivity deadline, zero if none.
func (c *Conn) InactivityDeadline() time.Time { return c.inactivityAt }

// ActiveDeadline returns the active-timeout deadline, zero if none.
func (c *Conn) ActiveDeadline() time.Time { return c.activeAt }

// Deadline returns the real deadline: the earlier armed one, zero if none.
func (c *Conn) Deadline() time.Time {
	a, b := c.inactivityAt, c.activeAt
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// WheelDeadline returns the deadline the wheel holds and whether it holds
// one. It is never later than Deadline (TW-1).
func (c *Conn) WheelDeadline() (time.Time, bool) { return c.timer.WheelDeadline() }
