package simdb

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
)

// Query runs the statement name on connection c, as PostgreSQL runs a
// statement in its own snapshot: the statement is issued, reaches the
// server after its drawn lag, q is evaluated on the state at that instant
// (the snapshot), then the statement takes its latency, then the result is
// returned. A write that commits during the latency is therefore not seen
// (OC-2, OC-4, MS-2 depend on exactly this); one that commits during the
// lag is. The rows function
// counts the rows of a result for the simdb_rows_total counter; it may be
// nil (0 rows).
//
// q must not block and must return data that later writes cannot change
// (copy slices out of the state). The statement fails with the context's
// error when ctx ends first, with a *TransientError when one is injected,
// or with the Hook's error. A failed statement returns the zero R and its
// rows are not counted. An undeclared name is an error wrapping
// ErrUnknownStatement. Misuse of the connection (released, or already
// running a statement) fails the run.
func Query[S, R any](ctx context.Context, c *Conn[S], name string, rows func(R) int, q func(*S) R) (R, error) {
	var zero R
	if c == nil || q == nil {
		return zero, fmt.Errorf("simdb: Query %q needs a connection and a query function", name)
	}
	db := c.db
	s := db.s
	if c.released {
		s.Failf("simdb: statement %q on connection %d (checkout #%d) after Release", name, c.id, c.handle)
	}
	if c.busy {
		s.Failf("simdb: statement %q on connection %d (checkout #%d) while another statement runs on it", name, c.id, c.handle)
	}
	if !slices.Contains(db.cfg.Statements, name) {
		return zero, fmt.Errorf("%w %q: declare it in Config.Statements (have %v)", ErrUnknownStatement, name, db.cfg.Statements)
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	c.busy = true
	defer func() { c.busy = false }()
	s.Yield() // the statement travels to the server: a commit may land first
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	db.m.statements.With(name).Inc()
	start := s.Now()
	lag, lat, after, breaks, errInjected := db.draw(Statement{Name: name, Conn: c.id, At: start}, SourceRead, db.cfg.ReadErrorProb)
	if lag > 0 {
		if err := s.Sleep(ctx, lag); err != nil {
			return zero, db.canceled(c, name, start, err)
		}
	}
	snap := s.Now()
	var r R
	if errInjected == nil {
		steps := protocol.Steps(s)
		r = q(&db.state) // the snapshot: the state once the server starts it
		if protocol.Steps(s) != steps {
			s.Failf("simdb: statement %q's query function hit a scheduling point: a snapshot is one instant", name)
		}
		if after != nil {
			after()
		}
	}
	if err := s.Sleep(ctx, lat); err != nil {
		return zero, db.canceled(c, name, start, err)
	}
	db.observe(Timing{Name: name, Pool: c.pool, Issued: start, Snapshot: snap, Done: s.Now(), Err: errInjected != nil})
	if errInjected != nil {
		c.broken = c.broken || breaks
		s.Tracef("simdb %s on conn %d failed after %v: %v", name, c.id, lat, errInjected)
		if s.Recording() {
			protocol.Interval(s, start, connName(c.id), "%s failed: %v", name, errInjected)
		}
		return zero, errInjected
	}
	n := 0
	if rows != nil {
		n = rows(r)
	}
	if n < 0 {
		s.Failf("simdb: rows function of statement %q returned %d", name, n)
	}
	db.m.rows.With(name).Add(int64(n))
	s.Tracef("simdb %s on conn %d: snapshot +%v, %v, %d rows", name, c.id, snap.Sub(sim.Epoch), lat, n)
	if s.Recording() {
		protocol.Interval(s, start, connName(c.id), "%s snapshot +%v, %d rows", name, snap.Sub(sim.Epoch), n)
	}
	return r, nil
}

// canceled counts and records a statement whose context ended during its
// lag or latency.
func (db *DB[S]) canceled(c *Conn[S], name string, start time.Time, err error) error {
	s := db.s
	db.m.canceled.Inc()
	s.Tracef("simdb %s on conn %d canceled after %v: %v", name, c.id, s.Now().Sub(start), err)
	if s.Recording() {
		protocol.Interval(s, start, connName(c.id), "%s issued +%v, canceled: %v", name, start.Sub(sim.Epoch), err)
	}
	return err
}

// connName is a connection's object in the run's record.
func connName(id int) string { return "conn " + strconv.Itoa(id) }
