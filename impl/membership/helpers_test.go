package membership_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

var (
	bg        = context.Background()
	community = authz.NewID('k', 1)
	user      = authz.NewID('u', 1)
)

func ch(n int) authz.ID { return authz.NewID('c', uint64(n)) }

// world is one community in an authztest database with a cache on top.
type world struct {
	r  rt.Runtime
	db *authztest.DB
	c  *membership.Cache
}

// newWorld adds channels 1..channels to community, makes user a member of
// those for which member(i) is true, and builds a cache over pool (the
// database itself when pool is nil).
func newWorld(t *testing.T, r rt.Runtime, channels int, member func(i int) bool, cfg membership.Config, pool func(*authztest.DB) authz.Pool) *world {
	db := authztest.New(r)
	for i := 1; i <= channels; i++ {
		if err := db.AddChannel(authztest.Channel{ID: ch(i), Community: community}); err != nil {
			panic(err)
		}
		if member != nil && member(i) {
			if err := db.SetMember(user, ch(i), true); err != nil {
				panic(err)
			}
		}
	}
	var p authz.Pool = db
	if pool != nil {
		p = pool(db)
	}
	c, err := membership.New(r, p, cfg)
	if err != nil {
		panic(err)
	}
	return &world{r: r, db: db, c: c}
}

// stmts counts statements of one kind so far.
func (w *world) stmts(name string) int64 { return w.db.Stats().ByStatement[name] }

func (w *world) loads() int64  { return w.stmts(authztest.StmtActiveMemberships) }
func (w *world) points() int64 { return w.stmts(authztest.StmtIsActiveMember) }

// metric reads one series of the cache's registry.
func (w *world) metric(name string) int64 { return w.c.Metrics().Snapshot()[name] }

func (w *world) hits() int64   { return w.metric(membership.MetricHits) }
func (w *world) misses() int64 { return w.metric(membership.MetricMisses) }
func (w *world) fallbacks(reason string) int64 {
	return w.metric(membership.MetricFallbacks + `{reason="` + reason + `"}`)
}

func (w *world) revoke(i int) {
	if err := w.db.SetMember(user, ch(i), false); err != nil {
		panic(err)
	}
}

func (w *world) grant(i int) {
	if err := w.db.SetMember(user, ch(i), true); err != nil {
		panic(err)
	}
}

func (w *world) invalidate(i int) {
	w.c.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user, ChannelID: ch(i)})
}

// latency makes every statement of kind stmt take d.
func latency(db *authztest.DB, stmt string, d time.Duration) {
	db.Latency = func(s string) time.Duration {
		if s == stmt {
			return d
		}
		return 0
	}
}

// simRun runs f as the main task of a simulation and requires a clean run.
func simRun(t *testing.T, seed uint64, f func(s *sim.Sim)) sim.Result {
	t.Helper()
	res := sim.Run(sim.Config{Seed: seed}, f)
	require.NoError(t, res.Err)
	return res
}

// answer is the outcome of one check, recorded inside a task and asserted
// after the run.
type answer struct {
	ok       bool
	err      error
	returned time.Duration // virtual time since the start of the run
}

// seeds returns n seeds for a schedule sweep.
func seeds(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = 0x5eed0000 + uint64(i)
	}
	return out
}

func (w *world) membershipMsg(i int) authz.Message {
	return authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user, ChannelID: ch(i)}
}

func authztestChannel(id, comm authz.ID) authztest.Channel {
	return authztest.Channel{ID: id, Community: comm}
}

func userN(n int) authz.ID { return authz.NewID('u', uint64(n)) }
