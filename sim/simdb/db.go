package simdb

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/stats"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
)

// Commit is one entry of the commit log: a write that took effect.
type Commit struct {
	Seq  uint64    // 1, 2, 3... in commit order
	At   time.Time // the virtual instant the write became visible
	What string    // the write's description, as given to Write
	// Event is the commit's interval in the run's record (record.NoEvent
	// when the run keeps none), for a check to blame with sim.Sim.Blame:
	// the commit that made an answer stale.
	Event record.EventID
}

// DB is a simulated database holding the scenario's tables S, a commit log
// and a pool of connections. It belongs to one sim run: create it inside the
// run and use it only from that run's tasks (one task runs at a time, so it
// needs no lock).
type DB[S any] struct {
	s     *sim.Sim
	cfg   Config
	state S
	log   []Commit
	m     *metrics

	committing bool // inside a write's f
	commitAt   time.Time
	commitEv   record.EventID

	pools  []pool
	conns  []connState // by connection number - 1
	nextID uint64      // checkout handles, for traces
}

// New returns a database with the initial state initial (true from the start
// of the run: it is not in the commit log) and Pools pools of PoolSize idle
// connections.
func New[S any](s *sim.Sim, cfg Config, initial S) (*DB[S], error) {
	if s == nil {
		return nil, fmt.Errorf("simdb: New needs the run's *sim.Sim")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	db := &DB[S]{s: s, cfg: cfg, state: initial, m: newMetrics(cfg.Statements)}
	db.pools = make([]pool, cfg.Pools)
	db.conns = make([]connState, cfg.Pools*cfg.PoolSize)
	for i := range db.conns {
		db.conns[i] = connState{open: !cfg.Connections.Lazy, idleSince: s.Now()}
	}
	for p := range db.pools {
		db.pools[p].free = make([]int, cfg.PoolSize)
		for i := range cfg.PoolSize {
			db.pools[p].free[i] = p*cfg.PoolSize + i + 1
		}
	}
	return db, nil
}

// Config returns the configuration in use, with defaults filled in.
func (db *DB[S]) Config() Config { return db.cfg }

// State returns the live state. It is for setting up tables before the
// workload starts and for checks after it ends: reading it during the run
// bypasses the snapshot and latency that Query models, and changing it then
// bypasses the commit log.
func (db *DB[S]) State() *S { return &db.state }

// Write applies f to the state atomically at one virtual instant and appends
// a Commit to the log. It first takes its own latency (drawn like a
// statement's), so the commit instant lies after the call and before its
// return. Inside f, CommitInstant returns it, so a scenario can record
// per-key truth at exactly the commit instant. f must not block or call any
// scheduling point (that would split the commit across instants; the run
// fails if it does).
//
// A write fails without committing when ctx ends during its latency (the
// context's error), on an injected *TransientError, or on the Hook's error.
func (db *DB[S]) Write(ctx context.Context, what string, f func(*S)) (time.Time, error) {
	s := db.s
	if f == nil {
		return time.Time{}, fmt.Errorf("simdb: Write %q with a nil function", what)
	}
	if db.committing {
		s.Failf("simdb: Write %q called from inside another write's function", what)
	}
	if err := ctx.Err(); err != nil {
		db.m.writesFailed.Inc()
		return time.Time{}, err
	}
	start := s.Now()
	_, lat, after, _, errInjected := db.draw(Statement{Name: what, Write: true, At: start}, SourceWrite, db.cfg.WriteErrorProb)
	if err := s.Sleep(ctx, lat); err != nil {
		db.m.writesFailed.Inc()
		s.Tracef("simdb write %q canceled after %v: %v", what, s.Now().Sub(start), err)
		if s.Recording() {
			protocol.Interval(s, start, "db", "write %s canceled: %v", what, err)
		}
		return time.Time{}, err
	}
	if errInjected != nil {
		db.m.writesFailed.Inc()
		s.Tracef("simdb write %q failed after %v: %v", what, lat, errInjected)
		if s.Recording() {
			protocol.Interval(s, start, "db", "write %s failed: %v", what, errInjected)
		}
		return time.Time{}, errInjected
	}
	if len(db.log) >= db.cfg.MaxCommits {
		s.Failf("simdb: commit log limit of %d exceeded by write %q (raise Config.MaxCommits)", db.cfg.MaxCommits, what)
	}
	c := Commit{Seq: uint64(len(db.log)) + 1, At: s.Now(), What: what, Event: record.NoEvent}
	if s.Recording() {
		c.Event = protocol.Interval(s, start, "db", "commit #%d %s", c.Seq, what)
	}
	steps := protocol.Steps(s)
	db.committing, db.commitAt, db.commitEv = true, c.At, c.Event
	f(&db.state)
	db.committing = false
	if protocol.Steps(s) != steps {
		s.Failf("simdb: write %q's function hit a scheduling point: a commit must happen at one instant", what)
	}
	db.log = append(db.log, c)
	db.m.commits.Inc()
	s.Tracef("simdb commit #%d %q after %v", c.Seq, what, lat)
	if after != nil {
		after()
	}
	return c.At, nil
}

// CommitInstant returns the commit instant of the write whose function is
// running. Calling it anywhere else fails the run.
func (db *DB[S]) CommitInstant() time.Time {
	if !db.committing {
		db.s.Failf("simdb: CommitInstant called outside a write's function")
	}
	return db.commitAt
}

// CommitEvent returns the recorded event of the commit whose write's
// function is running (record.NoEvent when the run keeps no record), so that a
// scenario can remember which commit changed which truth and blame it.
// Calling it anywhere else fails the run.
func (db *DB[S]) CommitEvent() record.EventID {
	if !db.committing {
		db.s.Failf("simdb: CommitEvent called outside a write's function")
	}
	return db.commitEv
}

// Commits returns a copy of the commit log, in commit order.
func (db *DB[S]) Commits() []Commit { return slices.Clone(db.log) }

// Registry returns the database's metrics (simdb_*), for a scenario's
// report.
func (db *DB[S]) Registry() *stats.Registry { return &db.m.reg }

// Stats returns a copy of the counters.
func (db *DB[S]) Stats() Stats {
	st := db.m.snapshot()
	for _, name := range db.cfg.Statements {
		st.Statements += db.m.statements.With(name).Value()
		st.Rows += db.m.rows.With(name).Value()
	}
	return st
}

// StatementsOf returns how many statements named name started (0 for an
// undeclared name).
func (db *DB[S]) StatementsOf(name string) int64 {
	if !slices.Contains(db.cfg.Statements, name) {
		return 0
	}
	return db.m.statements.With(name).Value()
}

// RowsOf returns how many rows successful statements named name returned.
func (db *DB[S]) RowsOf(name string) int64 {
	if !slices.Contains(db.cfg.Statements, name) {
		return 0
	}
	return db.m.rows.With(name).Value()
}

// draw decides a statement's snapshot lag, latency and injected error at
// its issue: the lag and latency from the model (a write ignores the lag), the random transient error, then the Hook, which
// may override either. The number of values drawn from the world's source
// does not depend on the outcome.
//
// Every fault it decides is optional (sim.Keep(sim.KeepFault), asked once
// the draws are made): a latency the Hook fixes, else a slow-tail latency,
// then an error, the Hook's, else the random one; but the Hook's Required
// ones, the scenario's premise, are always applied. A dropped one takes the
// fault-free path (the base latency, no error), which draws nothing more,
// so that the rest of an edited run's choices stay where they were. A
// latency the Hook fixes fixes the statement's whole timing: its snapshot
// at its issue instant (no lag), then that latency.
func (db *DB[S]) draw(st Statement, source string, errProb float64) (lag, lat time.Duration, after func(), breaks bool, err error) {
	s := db.s
	// The statement's draws and faults are its operation's, not the
	// workload's (protocol.Inside): a shrinker that drops the operation moves
	// no other one's.
	defer protocol.Inside(s).End()
	r := s.Rand()
	x := db.cfg.Latency.draw(r)
	lag, lat = x.lag, x.base
	if u := r.Float64(); errProb > 0 && u < errProb {
		err = &TransientError{Statement: st.Name, Write: st.Write, Conn: st.Conn, At: st.At}
	}
	fixed, fixedLat := false, time.Duration(0)
	required, hookErr := false, false // the Hook's fault is the scenario's premise (Fault.Required); it set the error
	if db.cfg.Hook != nil {
		f := db.cfg.Hook(st)
		required = f.Required
		if f.Fixed {
			if f.Latency < 0 {
				s.Failf("simdb: Hook gave statement %q a negative latency %v", st.Name, f.Latency)
			}
			fixed, fixedLat = true, f.Latency
		}
		if f.Err != nil {
			err, hookErr = f.Err, true
			source = SourceHook
			breaks = f.Breaks
		}
		after = f.AfterSnapshot
	}
	switch {
	case fixed:
		if required || s.Keep(sim.KeepFault) {
			lag, lat = 0, fixedLat
			if s.Recording() {
				s.Injected("%s: the hook fixes its latency at %v", describe(st), lat)
			}
		}
	case x.slow:
		if s.Keep(sim.KeepFault) {
			lat = x.tail
			db.m.slow.Inc()
			if s.Recording() {
				s.Injected("%s: slow, %v (the slow tail)", describe(st), lat)
			}
		}
	}
	if err != nil {
		if !(required && hookErr) && !s.Keep(sim.KeepFault) {
			return lag, lat, after, false, nil
		}
		db.m.injected.With(source).Inc()
		if s.Recording() {
			s.Injected("%s: fails (%s): %v", describe(st), source, err)
		}
	}
	return lag, lat, after, breaks, err
}

// describe names a statement for the record.
func describe(st Statement) string {
	if st.Write {
		return fmt.Sprintf("write %s", st.Name)
	}
	return fmt.Sprintf("%s on conn %d", st.Name, st.Conn)
}
