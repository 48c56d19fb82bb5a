package simdb

import (
	"context"
	"fmt"
	"time"
)

// The names a Hook sees for a connection's own round trips (Connections).
const (
	ConnectStatement = "connect"
	PingStatement    = "ping"
)

// Connections is the life of a pooled connection, which a checkout may have
// to pay for before it is handed over, as pgxpool's does. The zero value is
// the plain pool: every connection open from the start and never checked.
//
// With Lazy, a connection is opened by its first checkout. With IdlePing
// above 0, a connection idle for longer is pinged before it is handed over
// (pgxpool's ShouldPing). An opening and a ping are one round trip each,
// timed like a statement (drawn from Latency, which a Hook may fix or fail)
// under the names ConnectStatement and PingStatement; the checkout instant
// follows them, so they count in the pool wait and never inside a
// statement. A ping that fails closes the connection, and the checkout
// opens it again; an opening that fails fails the Acquire and leaves the
// connection closed for the next checkout. Before its round trip, an
// opening takes a time uniform in [OpenMin, OpenMax]: the server starting
// the connection's backend, which costs far more than a statement.
type Connections struct {
	Lazy             bool
	IdlePing         time.Duration
	OpenMin, OpenMax time.Duration
}

func (c Connections) validate() error {
	switch {
	case c.IdlePing < 0:
		return fmt.Errorf("simdb: Connections.IdlePing must not be negative, got %v", c.IdlePing)
	case c.OpenMin < 0 || c.OpenMin > c.OpenMax:
		return fmt.Errorf("simdb: Connections.OpenMin and OpenMax must satisfy 0 <= OpenMin <= OpenMax, got [%v, %v]", c.OpenMin, c.OpenMax)
	case c.OpenMax > maxSlowLatency:
		return fmt.Errorf("simdb: Connections.OpenMax %v is above the %v limit", c.OpenMax, maxSlowLatency)
	}
	return nil
}

// connState is what the pool knows of one connection between checkouts.
type connState struct {
	open      bool
	idleSince time.Time // its last release, or the database's creation
}

// ready makes connection id fit to hand over: it opens a closed one and
// pings one idle for longer than IdlePing. It reports whether it made a
// round trip (the checkout instant is then now, after it).
func (db *DB[S]) ready(ctx context.Context, id int) (bool, error) {
	c := &db.conns[id-1]
	ping := db.cfg.Connections.IdlePing
	if c.open && (ping <= 0 || db.s.Now().Sub(c.idleSince) <= ping) {
		return false, nil
	}
	if c.open {
		db.m.pings.Inc()
		err := db.roundTrip(ctx, PingStatement, id)
		if err == nil {
			return true, nil
		}
		c.open = false
		if ctx.Err() != nil {
			return true, err
		}
	}
	db.m.connects.Inc()
	start := db.s.Now()
	if o := db.cfg.Connections; o.OpenMax > 0 {
		if err := db.s.Sleep(ctx, pick(db.s.Rand().Uint64(), o.OpenMin, o.OpenMax)); err != nil {
			db.m.connectErrors.Inc()
			return true, fmt.Errorf("simdb: %s: %w", ConnectStatement, err)
		}
	}
	if err := db.roundTrip(ctx, ConnectStatement, id); err != nil {
		db.m.connectErrors.Inc()
		return true, err
	}
	db.m.connectNs.Add(int64(db.s.Now().Sub(start)))
	c.open = true
	return true, nil
}

// roundTrip spends one round trip of connection id to the server, drawn and
// faulted as a statement named name is, and returns its error.
func (db *DB[S]) roundTrip(ctx context.Context, name string, id int) error {
	s := db.s
	lag, lat, after, _, err := db.draw(Statement{Name: name, Conn: id, At: s.Now()}, SourceHook, 0)
	if lag > 0 { // as in Query: no lag, no scheduling point
		if err := s.Sleep(ctx, lag); err != nil {
			return fmt.Errorf("simdb: %s: %w", name, err)
		}
	}
	if after != nil {
		after()
	}
	if err := s.Sleep(ctx, lat); err != nil {
		return fmt.Errorf("simdb: %s: %w", name, err)
	}
	if err != nil {
		s.Tracef("simdb %s on conn %d failed after %v: %v", name, id, lag+lat, err)
		return fmt.Errorf("simdb: %s: %w", name, err)
	}
	return nil
}
