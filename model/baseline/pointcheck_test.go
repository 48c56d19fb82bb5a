package baseline_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model/baseline"
	"github.com/windtunnel/windtunnel/sim"
)

// Names prefixed pc: the package's other external tests share this scope.
var pcCommunity = authz.NewID('k', 71)

func pcChannel(n int) authz.ID { return authz.NewID('c', uint64(n)) }
func pcUser(n int) authz.ID    { return authz.NewID('u', uint64(n)) }

// pcDB is a community of channels 1..channels where users 1..users are
// members of channels 1..member.
func pcDB(r rt.Runtime, channels, users, member int) *authztest.DB {
	db := authztest.New(r)
	for i := 1; i <= channels; i++ {
		_ = db.AddChannel(authztest.Channel{ID: pcChannel(i), Community: pcCommunity})
		for u := 1; u <= users && i <= member; u++ {
			_ = db.SetMember(pcUser(u), pcChannel(i), true)
		}
	}
	return db
}

// The baseline is a working design: right answers, a per-channel cache for
// 10 s from checkout, invalidation by (user, channel) as the old relays
// keyed it, errors not cached.
func TestPointCheckBaselineBehaviour(t *testing.T) {
	type got struct {
		ok  bool
		err error
	}
	var cold, warm, afterTTL, revokedCached, revokedInvalidated, otherChannelMsg, deleted got
	var failed error
	var db *authztest.DB
	var checkoutsAfterCold int64
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		ctx := context.Background()
		db = pcDB(s, 3, 1, 2)
		db.Latency = func(string) time.Duration { return 100 * time.Millisecond }
		p, err := baseline.NewPointCheckCache(s, db, baseline.PointCheckConfig{})
		if err != nil {
			s.Failf("new: %v", err)
			return
		}
		check := func(c int) got {
			ok, err := p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(c))
			return got{ok, err}
		}
		cold = check(1) // checkout at 0, answer cached until 10 s
		checkoutsAfterCold = db.Stats().Checkouts
		warm = check(1)
		_ = s.Sleep(ctx, 10*time.Second-s.Elapsed())
		afterTTL = check(1) // expired exactly at checkout + 10 s: a new point check
		_ = db.SetMember(pcUser(1), pcChannel(1), false)
		revokedCached = check(1)
		p.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: pcCommunity, UserID: pcUser(1), ChannelID: pcChannel(2)})
		otherChannelMsg = check(1) // keyed by channel: a message for channel 2 leaves channel 1's answer
		p.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: pcCommunity, UserID: pcUser(1), ChannelID: pcChannel(1)})
		revokedInvalidated = check(1)
		_ = check(2)
		_ = db.UpdateChannel(pcChannel(2), func(c *authztest.Channel) { c.Deleted = true })
		p.Invalidate(authz.Message{Kind: authz.KindChannelDeleted, CommunityID: pcCommunity, ChannelID: pcChannel(2)})
		deleted = check(2)
		db.Err = func(string) error { return errors.New("boom") }
		_, failed = p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(3))
		db.Err = nil
		if ok, err := p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(3)); ok || err != nil {
			s.Failf("after an error: %v %v", ok, err)
		}
	})
	require.NoError(t, res.Err)
	assert.Equal(t, got{true, nil}, cold)
	assert.Equal(t, int64(1), checkoutsAfterCold)
	assert.Equal(t, got{true, nil}, warm)
	assert.Equal(t, got{true, nil}, afterTTL)
	assert.Equal(t, got{true, nil}, revokedCached, "cached per channel for 10 s")
	assert.Equal(t, got{true, nil}, otherChannelMsg)
	assert.Equal(t, got{false, nil}, revokedInvalidated)
	assert.Equal(t, got{false, nil}, deleted)
	assert.Error(t, failed)
	st := db.Stats()
	assert.Equal(t, st.Checkouts, st.ByStatement[authztest.StmtIsActiveMember], "one checkout per point check")
	assert.Equal(t, int64(7), st.ByStatement[authztest.StmtIsActiveMember])
}

func TestPointCheckBaselineConfig(t *testing.T) {
	db := authztest.New(rt.Real())
	_, err := baseline.NewPointCheckCache(nil, db, baseline.PointCheckConfig{})
	assert.Error(t, err)
	_, err = baseline.NewPointCheckCache(rt.Real(), db, baseline.PointCheckConfig{TTL: -1})
	assert.Error(t, err)
	p, err := baseline.NewPointCheckCache(rt.Real(), db, baseline.PointCheckConfig{})
	require.NoError(t, err)
	_, err = p.IsMember(context.Background(), authz.ID{}, pcUser(1), pcChannel(1))
	assert.Error(t, err)
}

// pcClients runs the same cold-connect workload against either design and
// returns the database's counters. clients users, each a member of the first
// member channels, connect at staggered instants and check every channel they
// are in. 20 s later, after the 10 s bound, they check again.
func pcClients(t *testing.T, seed uint64, clients, member int, build func(s *sim.Sim, db *authztest.DB) interface {
	IsMember(ctx context.Context, community, user, channel authz.ID) (bool, error)
}) authztest.Stats {
	var db *authztest.DB
	wrong := 0
	res := sim.Run(sim.Config{Seed: seed}, func(s *sim.Sim) {
		db = pcDB(s, member+20, clients, member)
		db.Latency = func(string) time.Duration { return time.Duration(1+s.Rand().IntN(5)) * time.Millisecond }
		c := build(s, db)
		wg := s.NewWaitGroup("clients")
		wg.Add(clients)
		for u := 1; u <= clients; u++ {
			start := time.Duration(s.Rand().IntN(3000)) * time.Millisecond
			s.Go(fmt.Sprint("client-", u), func() {
				defer wg.Done()
				ctx := context.Background()
				_ = s.Sleep(ctx, start)
				for round := range 2 {
					if round == 1 {
						_ = s.Sleep(ctx, 20*time.Second)
					}
					for i := 1; i <= member; i++ {
						if ok, err := c.IsMember(ctx, pcCommunity, pcUser(u), pcChannel(i)); !ok || err != nil {
							wrong++
						}
					}
				}
			})
		}
		_ = wg.Wait(context.Background())
	})
	require.NoError(t, res.Err)
	assert.Zero(t, wrong)
	return db.Stats()
}

// MS-1 and MS-11: on the same workload of cold clients in 280 channels, the
// snapshot cache makes one membership read per client connect where the
// point-check design makes 280. It makes no per-channel membership reads at
// all. The seed's A/B measured ~99% fewer per-channel membership reads and
// ~74% fewer authorization checkouts. Its checkouts include other
// authorization queries, which this workload does not have, so here the drop
// is larger.
func TestSnapshotCacheVersusPointChecks(t *testing.T) {
	const clients, member = 12, 280
	for _, seed := range []uint64{1, 2, 3} {
		old := pcClients(t, seed, clients, member, func(s *sim.Sim, db *authztest.DB) interface {
			IsMember(context.Context, authz.ID, authz.ID, authz.ID) (bool, error)
		} {
			p, _ := baseline.NewPointCheckCache(s, db, baseline.PointCheckConfig{})
			return p
		})
		cur := pcClients(t, seed, clients, member, func(s *sim.Sim, db *authztest.DB) interface {
			IsMember(context.Context, authz.ID, authz.ID, authz.ID) (bool, error)
		} {
			c, _ := membership.New(s, db, membership.Config{})
			return c
		})
		// Exact: each client connects twice, cold both times (20 s apart).
		assert.Equal(t, int64(2*clients*member), old.ByStatement[authztest.StmtIsActiveMember], "baseline: one point check per channel per connect")
		assert.Equal(t, int64(2*clients*member), old.Checkouts)
		assert.Equal(t, int64(2*clients), cur.ByStatement[authztest.StmtActiveMemberships], "snapshot: one read per connect (MS-1)")
		assert.Zero(t, cur.ByStatement[authztest.StmtIsActiveMember], "no per-channel membership reads")
		assert.Equal(t, int64(2*clients), cur.Checkouts)
		t.Logf("seed %d: membership statements %d → %d, checkouts %d → %d (%.2f%% fewer)", seed,
			old.Statements, cur.Statements, old.Checkouts, cur.Checkouts, 100*(1-float64(cur.Checkouts)/float64(old.Checkouts)))
	}
}

// BenchmarkPerChannelCacheHit is the baseline's best case, a cached
// per-channel answer, for comparison with membership's
// BenchmarkSnapshotHit16384.
func BenchmarkPerChannelCacheHit(b *testing.B) {
	db := pcDB(rt.Real(), 16384, 1, 16384)
	p, err := baseline.NewPointCheckCache(rt.Real(), db, baseline.PointCheckConfig{})
	require.NoError(b, err)
	ctx := context.Background()
	for i := 1; i <= 16384; i++ {
		_, _ = p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(i))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = i%16384 + 1
		if ok, _ := p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(i)); !ok {
			b.Fatal("denied")
		}
	}
}

// BenchmarkPointCheckUncached: every check a point check on its own
// checkout, against the in-memory database (no network, no query planner).
func BenchmarkPointCheckUncached(b *testing.B) {
	db := pcDB(rt.Real(), 16384, 1, 16384)
	p, err := baseline.NewPointCheckCache(rt.Real(), db, baseline.PointCheckConfig{Uncached: true})
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = i%16384 + 1
		if ok, _ := p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(i)); !ok {
			b.Fatal("denied")
		}
	}
}

// The baseline asks the database once per channel: a cold client in three
// channels makes three point checks, each on its own checkout.
func ExamplePointCheckCache() {
	ctx := context.Background()
	db := pcDB(rt.Real(), 3, 1, 3)
	p, _ := baseline.NewPointCheckCache(rt.Real(), db, baseline.PointCheckConfig{})
	for i := 1; i <= 3; i++ {
		ok, _ := p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(i))
		fmt.Print(ok, " ")
	}
	ok, _ := p.IsMember(ctx, pcCommunity, pcUser(1), pcChannel(1)) // cached for 10 s
	st := db.Stats()
	fmt.Println(ok, st.ByStatement[authztest.StmtIsActiveMember], st.Checkouts, p.Hits())
	// Output: true true true true 3 3 1
}
