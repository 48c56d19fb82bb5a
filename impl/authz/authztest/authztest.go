// Package authztest is an in-memory authz.Pool for tests of the authorization
// caches. It has the seeds' two tables (channels and memberships) and the
// seeds' query rules. It adds a latency per statement slept on the test's
// runtime, injectable errors, and exact counters of statements, rows and
// checkouts.
//
// A statement evaluates its query on the state at the instant it starts and
// then waits its latency, as a PostgreSQL statement reads one snapshot taken
// when it begins. Under the simulator the wait is virtual, so a test can
// place a write (and its invalidation) exactly inside a slow load.
//
// It is deliberately simple: connections are unlimited and checkout never
// waits. The simulated deployment in scenarios/world adds a bounded pool, a
// latency distribution, transient faults and a commit log on top of the same
// Tables.
package authztest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// Statement names, as passed to DB.Err and counted in Stats.ByStatement.
const (
	StmtMemberChannels     = "member_channels"
	StmtListedOpenChannels = "listed_open_channels"
	StmtActiveMemberships  = "active_memberships"
	StmtIsActiveMember     = "is_active_member"
)

// Stats counts what the database did. Rows counts IDs returned (a point
// check returns one row).
type Stats struct {
	Checkouts, Statements, Rows int64
	ByStatement                 map[string]int64
}

// DB is the in-memory database and its pool. Not safe for concurrent use by
// real goroutines; under the simulator one task runs at a time.
type DB struct {
	r rt.Runtime
	// Latency, if set, is the time each statement takes after reading its
	// snapshot. It is called once per statement.
	Latency func(stmt string) time.Duration
	// Err, if set, is called at the start of each statement; a non-nil error
	// fails the statement (transient database error).
	Err func(stmt string) error

	tables Tables
	stats  Stats
}

// New returns an empty database whose statements wait on r.
func New(r rt.Runtime) *DB {
	return &DB{r: r, tables: NewTables(), stats: Stats{ByStatement: map[string]int64{}}}
}

// Tables is the database's state: writes through it are seen by every
// statement that starts afterwards.
func (db *DB) Tables() *Tables { return &db.tables }

// AddChannel inserts a channel. Adding an existing ID is an error.
func (db *DB) AddChannel(c Channel) error { return db.tables.AddChannel(c) }

// UpdateChannel applies f to an existing channel row.
func (db *DB) UpdateChannel(id authz.ID, f func(*Channel)) error {
	return db.tables.UpdateChannel(id, f)
}

// SetMember makes user's membership in channel active or removed.
func (db *DB) SetMember(user, channel authz.ID, active bool) error {
	return db.tables.SetMember(user, channel, active)
}

// Stats returns a copy of the counters.
func (db *DB) Stats() Stats {
	s := db.stats
	s.ByStatement = make(map[string]int64, len(db.stats.ByStatement))
	for k, v := range db.stats.ByStatement { //windtunnel:unordered copying a map
		s.ByStatement[k] = v
	}
	return s
}

// Acquire implements authz.Pool: a connection is always available.
func (db *DB) Acquire(ctx context.Context) (authz.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	db.stats.Checkouts++
	return &conn{db: db, at: db.r.Now()}, nil
}

type conn struct {
	db       *DB
	at       time.Time
	released bool
}

var errReleased = errors.New("authztest: statement on a released connection")

func (c *conn) CheckedOutAt() time.Time { return c.at }

func (c *conn) Release() {
	if c.released {
		panic("authztest: connection released twice")
	}
	c.released = true
}

// run evaluates q on the current state, then waits the statement's latency.
func (c *conn) run(ctx context.Context, stmt string, q func() []authz.ID) ([]authz.ID, error) {
	if c.released {
		return nil, errReleased
	}
	db := c.db
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	db.stats.Statements++
	db.stats.ByStatement[stmt]++
	if db.Err != nil {
		if err := db.Err(stmt); err != nil {
			return nil, err
		}
	}
	rows := q() // the snapshot: state at the statement's start
	db.stats.Rows += int64(len(rows))
	if db.Latency != nil {
		if err := db.r.Sleep(ctx, db.Latency(stmt)); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func (c *conn) MemberChannels(ctx context.Context, community, user authz.ID) ([]authz.ID, error) {
	return c.run(ctx, StmtMemberChannels, func() []authz.ID { return c.db.tables.MemberChannels(community, user, -1) })
}

func (c *conn) ListedOpenChannels(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	return c.run(ctx, StmtListedOpenChannels, func() []authz.ID { return c.db.tables.ListedOpenChannels(community) })
}

func (c *conn) ActiveMemberships(ctx context.Context, community, user authz.ID, limit int) ([]authz.ID, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("authztest: limit must be positive, got %d", limit)
	}
	rows, err := c.run(ctx, StmtActiveMemberships, func() []authz.ID { return c.db.tables.MemberChannels(community, user, limit) })
	// Return rows in an order unlike the sort order, so callers must sort.
	slices.Reverse(rows)
	return rows, err
}

func (c *conn) IsActiveMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	rows, err := c.run(ctx, StmtIsActiveMember, func() []authz.ID {
		if c.db.tables.IsActiveMember(community, user, channel) {
			return []authz.ID{channel}
		}
		return nil
	})
	return len(rows) == 1, err
}
