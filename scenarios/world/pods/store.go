package pods

import (
	"context"
	"slices"
	"time"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// Statement names, as the pool counts them.
const (
	StmtMemberChannels     = "member_channels"
	StmtListedOpenChannels = "listed_open_channels"
	StmtActiveMemberships  = "active_memberships"
	StmtIsActiveMember     = "is_active_member"
)

// Statements lists every statement the store runs (simdb's Config.Statements).
var Statements = []string{StmtMemberChannels, StmtListedOpenChannels, StmtActiveMemberships, StmtIsActiveMember}

// Store is the relay database behind an authz.Pool: the production caches
// read it exactly as they read PostgreSQL through pgxpool.
type Store struct {
	DB *simdb.DB[authztest.Tables]
	S  *sim.Sim
	// Reads measures, per statement, the longest time from the Acquire that
	// preceded it to its return: pool wait plus statement. A cache entry
	// filled by such a read can be that much older than its insertion
	// (OC-7's bound counts the TTL from insertion).
	Reads *ReadTimes
	// pod and flights, when set, attribute the statements to one pod for
	// the world's probes (inflight.go).
	pod     int
	flights *inflight
	// pool is the simdb pool the store acquires from: its pod's own when
	// the world gives each pod one, else the shared pool 0.
	pool int
}

// ReadTimes is the longest read per statement, in ns.
type ReadTimes struct {
	Max map[string]int64
}

// Acquire implements authz.Pool: it waits for a pool connection.
func (s Store) Acquire(ctx context.Context) (authz.Conn, error) {
	at := int64(s.S.Elapsed())
	c, err := s.DB.AcquireFrom(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	return conn{c: c, acquiredAt: at, reads: s.Reads, s: s.S, pod: s.pod, flights: s.flights}, nil
}

type conn struct {
	c          *simdb.Conn[authztest.Tables]
	acquiredAt int64
	reads      *ReadTimes
	s          *sim.Sim
	pod        int
	flights    *inflight
}

// track brackets one statement for the probes; call the result when it
// returns.
func (c conn) track(stmt string, subject authz.ID) func() {
	if c.flights == nil {
		return func() {}
	}
	k := inflightKey{c.pod, stmt, subject}
	c.flights.begin(k)
	return func() { c.flights.end(k) }
}

func (c conn) done(stmt string) {
	if c.reads == nil {
		return
	}
	if d := int64(c.s.Elapsed()) - c.acquiredAt; d > c.reads.Max[stmt] {
		c.reads.Max[stmt] = d
	}
}

func (c conn) CheckedOutAt() time.Time { return c.c.CheckedOutAt() }
func (c conn) Release()                { c.c.Release() }

func countIDs(ids []authz.ID) int { return len(ids) }

func (c conn) MemberChannels(ctx context.Context, community, user authz.ID) ([]authz.ID, error) {
	defer c.done(StmtMemberChannels)
	defer c.track(StmtMemberChannels, user)()
	return simdb.Query(ctx, c.c, StmtMemberChannels, countIDs, func(t *authztest.Tables) []authz.ID {
		return t.MemberChannels(community, user, -1)
	})
}

func (c conn) ListedOpenChannels(ctx context.Context, community authz.ID) ([]authz.ID, error) {
	defer c.done(StmtListedOpenChannels)
	defer c.track(StmtListedOpenChannels, community)()
	return simdb.Query(ctx, c.c, StmtListedOpenChannels, countIDs, func(t *authztest.Tables) []authz.ID {
		return t.ListedOpenChannels(community)
	})
}

func (c conn) ActiveMemberships(ctx context.Context, community, user authz.ID, limit int) ([]authz.ID, error) {
	defer c.done(StmtActiveMemberships)
	defer c.track(StmtActiveMemberships, user)()
	defer c.track(stmtLoadsOfCommunity, community)()
	ids, err := simdb.Query(ctx, c.c, StmtActiveMemberships, countIDs, func(t *authztest.Tables) []authz.ID {
		return t.MemberChannels(community, user, limit)
	})
	// PostgreSQL returns rows in no particular order: the cache must sort.
	slices.Reverse(ids)
	return ids, err
}

func (c conn) IsActiveMember(ctx context.Context, community, user, channel authz.ID) (bool, error) {
	ok, err := simdb.Query(ctx, c.c, StmtIsActiveMember, func(ok bool) int {
		if ok {
			return 1
		}
		return 0
	}, func(t *authztest.Tables) bool { return t.IsActiveMember(community, user, channel) })
	return ok, err
}
