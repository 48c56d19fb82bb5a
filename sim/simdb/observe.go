package simdb

import "time"

// Timing is one checkout or one statement as it ended, for a scenario
// that measures the model's distributions (Config.Observe): the flight
// sets them beside the real servers'.
type Timing struct {
	Name string // the statement's, or AcquireStatement for a checkout
	Pool int
	// Issued is when the Acquire reached the pool or the statement was
	// issued; Snapshot when a read took its snapshot (a checkout's is its
	// checkout); Done when the connection was handed over or the
	// statement returned.
	Issued, Snapshot, Done time.Time
	// Err: the statement failed (injected or the Hook's), or the Acquire
	// handed no connection over (Done is then when it gave up).
	Err bool
}

// Wait is a checkout's queueing time, or a statement's issue to return.
func (t Timing) Wait() time.Duration { return t.Done.Sub(t.Issued) }

// Lag is a statement's issue to its snapshot.
func (t Timing) Lag() time.Duration { return t.Snapshot.Sub(t.Issued) }

func (db *DB[S]) observe(t Timing) {
	if db.cfg.Observe != nil {
		db.cfg.Observe(t)
	}
}
