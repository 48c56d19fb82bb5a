package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/windtunnel/windtunnel/impl/authz"
)

// errReleased is returned by a statement on a connection already released.
var errReleased = errors.New("pgstore: statement on a released connection")

// conn is one checked-out connection (authz.Conn). Like the interface says,
// it is used by one goroutine at a time.
type conn struct {
	s        *Store
	c        *pgxpool.Conn
	at       time.Time
	released bool // a statement after Release is an error, not a panic in pgxpool
}

func (c *conn) CheckedOutAt() time.Time { return c.at }

// Release returns the connection to the pool. pgxpool closes it instead of
// reusing it when it is closed, still busy (a statement abandoned by a
// cancelled context, MS-7) or inside a transaction. So the next user gets a
// connection in a known state. A second Release is a no-op, as pgxpool's
// Release is idempotent. Releasing twice is a caller bug, but it must not
// hand one connection to two users.
func (c *conn) Release() {
	c.released = true
	c.c.Release()
}

func uuidArg(id authz.ID) pgtype.UUID { return pgtype.UUID{Bytes: id, Valid: true} }

func (c *conn) MemberChannels(ctx context.Context, community, user authz.ID) ([]authz.ID, error) {
	return c.ids(ctx, StmtMemberChannels, sqlMemberChannels, 0, uuidArg(community), uuidArg(user))
}

func (c *conn) ListedOpenChannels(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	return c.ids(ctx, StmtListedOpenChannels, sqlListedOpenChannels, 0, uuidArg(community))
}

// ActiveMemberships runs the bounded full-set load with LIMIT $3 (MS-4).
func (c *conn) ActiveMemberships(ctx context.Context, community, user authz.ID, limit int) ([]authz.ID, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("pgstore: ActiveMemberships limit must be positive, got %d", limit)
	}
	if limit > c.s.cfg.MaxRows {
		return nil, fmt.Errorf("pgstore: ActiveMemberships limit %d exceeds MaxRows %d", limit, c.s.cfg.MaxRows)
	}
	return c.ids(ctx, StmtActiveMemberships, sqlActiveMemberships, limit, uuidArg(community), uuidArg(user), int64(limit))
}

func (c *conn) IsActiveMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	if c.released {
		return false, errReleased
	}
	m := c.s.m
	m.statements.With(StmtIsActiveMember).Inc()
	var ok bool
	err := c.c.QueryRow(ctx, sqlIsActiveMember, uuidArg(community), uuidArg(user), uuidArg(channel)).Scan(&ok)
	if err != nil {
		m.statementErrors.With(StmtIsActiveMember).Inc()
		return false, fmt.Errorf("pgstore: %s: %w", StmtIsActiveMember, err)
	}
	m.rows.With(StmtIsActiveMember).Inc()
	return ok, nil
}

// ids runs a query returning one uuid column. capHint presizes the result.
// At most MaxRows rows are accepted: more is an error, not a truncated
// answer, because a truncated list read as complete would deny access.
func (c *conn) ids(ctx context.Context, stmt, sql string, capHint int, args ...any) ([]authz.ID, error) {
	if c.released {
		return nil, errReleased
	}
	m := c.s.m
	m.statements.With(stmt).Inc()
	out, err := c.collect(ctx, sql, min(capHint, 1024), args)
	m.rows.With(stmt).Add(int64(len(out)))
	if err != nil {
		m.statementErrors.With(stmt).Inc()
		return nil, fmt.Errorf("pgstore: %s: %w", stmt, err)
	}
	return out, nil
}

func (c *conn) collect(ctx context.Context, sql string, capHint int, args []any) ([]authz.ID, error) {
	rows, err := c.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]authz.ID, 0, capHint)
	maxRows := c.s.cfg.MaxRows
	var u pgtype.UUID
	for rows.Next() {
		if len(out) == maxRows {
			return out, fmt.Errorf("more than MaxRows (%d) rows", maxRows)
		}
		if err := rows.Scan(&u); err != nil {
			return out, err
		}
		if !u.Valid {
			return out, errors.New("NULL id")
		}
		out = append(out, authz.ID(u.Bytes))
	}
	return out, rows.Err()
}
