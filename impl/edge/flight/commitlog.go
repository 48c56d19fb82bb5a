package flight

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// CommitLogSchema is the flight's commit log: every write of the flight
// inserts one row, in the same transaction as the change, holding the
// changed row's new state. Its at is clock_timestamp() at that insert, the
// last statement before COMMIT: no later than the instant the change
// became visible, so staleness measured from it is never understated.
const CommitLogSchema = `
CREATE TABLE IF NOT EXISTS flight_commits (
	seq       bigserial   PRIMARY KEY,
	at        timestamptz NOT NULL DEFAULT clock_timestamp(),
	what      text        NOT NULL,
	community uuid        NOT NULL,
	channel   uuid        NOT NULL,
	user_id   uuid        NULL,
	open      boolean     NOT NULL DEFAULT false,
	listed    boolean     NOT NULL DEFAULT false,
	deleted   boolean     NOT NULL DEFAULT false,
	active    boolean     NOT NULL DEFAULT false
);
`

// Commit is one row of the commit log, with the writer's own instants
// around it (wall clock, UnixNano): Sent just before COMMIT was sent,
// Acked once PostgreSQL acknowledged it. The change became visible at
// some instant in [At, Acked].
type Commit struct {
	Seq       int64
	At        int64 // the server's clock_timestamp() (µs resolution), ns
	Sent      int64
	Acked     int64
	What      string // created, private, open, unlisted, listed, deleted, granted, removed
	Community authz.ID
	Channel   authz.ID
	User      authz.ID // membership writes only
	Open      bool     // the channel's state after the write (channel writes)
	Listed    bool
	Deleted   bool
	Active    bool // the membership's state after the write (membership writes)
}

// Writer commits the seeds' writes one at a time on its own connection,
// each with its commit-log row: commits are serialized, so the log's seq
// order is the database's commit order.
type Writer struct {
	mu   sync.Mutex
	conn *pgx.Conn
}

// NewWriter connects to the flight's schema directly (no proxy) and creates
// the commit log.
func NewWriter(ctx context.Context, url, schema string) (*Writer, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["search_path"] = schema
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("flight: writer: %w", err)
	}
	if _, err := c.Exec(ctx, CommitLogSchema); err != nil {
		_ = c.Close(ctx)
		return nil, fmt.Errorf("flight: commit log: %w", err)
	}
	return &Writer{conn: c}, nil
}

// Close closes the writer's connection.
func (w *Writer) Close(ctx context.Context) error { return w.conn.Close(ctx) }

func uuid(id authz.ID) pgtype.UUID { return pgtype.UUID{Bytes: id, Valid: true} }

// CreateChannel inserts a channel.
func (w *Writer) CreateChannel(ctx context.Context, community, channel authz.ID, open, listed bool) (Commit, error) {
	return w.channelWrite(ctx, "created", channel, func(tx pgx.Tx) error {
		vis := "private"
		if open {
			vis = "open"
		}
		_, err := tx.Exec(ctx, `INSERT INTO channels (id, community_id, visibility, listed) VALUES ($1, $2, $3, $4)`,
			uuid(channel), uuid(community), vis, listed)
		return err
	})
}

// SetOpen makes a channel open or private.
func (w *Writer) SetOpen(ctx context.Context, channel authz.ID, open bool) (Commit, error) {
	vis, what := "private", "private"
	if open {
		vis, what = "open", "open"
	}
	return w.channelWrite(ctx, what, channel, func(tx pgx.Tx) error {
		return one(tx.Exec(ctx, `UPDATE channels SET visibility = $2 WHERE id = $1`, uuid(channel), vis))
	})
}

// SetListed lists or unlists a channel.
func (w *Writer) SetListed(ctx context.Context, channel authz.ID, listed bool) (Commit, error) {
	what := "unlisted"
	if listed {
		what = "listed"
	}
	return w.channelWrite(ctx, what, channel, func(tx pgx.Tx) error {
		return one(tx.Exec(ctx, `UPDATE channels SET listed = $2 WHERE id = $1`, uuid(channel), listed))
	})
}

// Delete soft-deletes a channel.
func (w *Writer) Delete(ctx context.Context, channel authz.ID) (Commit, error) {
	return w.channelWrite(ctx, "deleted", channel, func(tx pgx.Tx) error {
		return one(tx.Exec(ctx, `UPDATE channels SET deleted_at = now() WHERE id = $1`, uuid(channel)))
	})
}

func one(tag interface{ RowsAffected() int64 }, err error) error {
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("%d rows changed, want 1", tag.RowsAffected())
	}
	return err
}

func (w *Writer) channelWrite(ctx context.Context, what string, channel authz.ID, change func(pgx.Tx) error) (Commit, error) {
	return w.commit(ctx, what, func(tx pgx.Tx, c *Commit) error {
		if err := change(tx); err != nil {
			return err
		}
		var comm pgtype.UUID
		var at time.Time
		err := tx.QueryRow(ctx, `
INSERT INTO flight_commits (what, community, channel, open, listed, deleted)
SELECT $1, community_id, id, visibility = 'open', listed, deleted_at IS NOT NULL FROM channels WHERE id = $2
RETURNING seq, at, community, open, listed, deleted`, what, uuid(channel)).Scan(&c.Seq, &at, &comm, &c.Open, &c.Listed, &c.Deleted)
		c.At, c.Community, c.Channel = at.UnixNano(), authz.ID(comm.Bytes), channel
		return err
	})
}

// SetMember grants (active) or removes a user's membership in a channel.
func (w *Writer) SetMember(ctx context.Context, community, user, channel authz.ID, active bool) (Commit, error) {
	what := "removed"
	if active {
		what = "granted"
	}
	return w.commit(ctx, what, func(tx pgx.Tx, c *Commit) error {
		_, err := tx.Exec(ctx, `INSERT INTO channel_members (channel_id, user_id, removed_at)
VALUES ($1, $2, CASE WHEN $3::bool THEN NULL ELSE now() END)
ON CONFLICT (channel_id, user_id) DO UPDATE SET removed_at = EXCLUDED.removed_at`, uuid(channel), uuid(user), active)
		if err != nil {
			return err
		}
		c.Community, c.Channel, c.User, c.Active = community, channel, user, active
		var at time.Time
		err = tx.QueryRow(ctx, `INSERT INTO flight_commits (what, community, channel, user_id, active)
VALUES ($1, $2, $3, $4, $5) RETURNING seq, at`, what, uuid(community), uuid(channel), uuid(user), active).Scan(&c.Seq, &at)
		c.At = at.UnixNano()
		return err
	})
}

// commit runs one write transaction: body makes the change and fills the
// Commit from its commit-log row; commit adds the writer's instants.
func (w *Writer) commit(ctx context.Context, what string, body func(pgx.Tx, *Commit) error) (Commit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	tx, err := w.conn.Begin(ctx)
	if err != nil {
		return Commit{}, fmt.Errorf("flight: %s: begin: %w", what, err)
	}
	c := Commit{What: what}
	if err := body(tx, &c); err != nil {
		_ = tx.Rollback(ctx)
		return Commit{}, fmt.Errorf("flight: %s: %w", what, err)
	}
	c.Sent = time.Now().UnixNano()
	if err := tx.Commit(ctx); err != nil {
		return Commit{}, fmt.Errorf("flight: %s: commit: %w", what, err)
	}
	c.Acked = time.Now().UnixNano()
	return c, nil
}

// Log reads the whole commit log in seq order.
func (w *Writer) Log(ctx context.Context) ([]Commit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rows, err := w.conn.Query(ctx, `SELECT seq, at, what, community, channel, user_id, open, listed, deleted, active FROM flight_commits ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Commit
	for rows.Next() {
		var c Commit
		var at time.Time
		var comm, ch, u pgtype.UUID
		if err := rows.Scan(&c.Seq, &at, &c.What, &comm, &ch, &u, &c.Open, &c.Listed, &c.Deleted, &c.Active); err != nil {
			return nil, err
		}
		c.At, c.Community, c.Channel, c.User = at.UnixNano(), authz.ID(comm.Bytes), authz.ID(ch.Bytes), authz.ID(u.Bytes)
		out = append(out, c)
	}
	return out, rows.Err()
}

// ServerClock reads PostgreSQL's clock_timestamp() on the writer's
// connection between two readings of this process's wall clock.
func (w *Writer) ServerClock(ctx context.Context) (before, server, after int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ts time.Time
	before = time.Now().UnixNano()
	err = w.conn.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&ts)
	after = time.Now().UnixNano()
	return before, ts.UnixNano(), after, err
}
