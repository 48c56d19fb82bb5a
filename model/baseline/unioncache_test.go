package baseline_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/model/baseline"
	"github.com/windtunnel/windtunnel/sim"
)

var (
	bg     = context.Background()
	k1, k2 = authz.NewID('k', 1), authz.NewID('k', 2)
)

func ch(n uint64) authz.ID   { return authz.NewID('c', n) }
func user(n uint64) authz.ID { return authz.NewID('u', n) }

// The baseline answers the same union, caches it per reader for its TTL, and
// applies the same invalidation scopes.
func TestUnionCacheBaselineBehaviour(t *testing.T) {
	var first, cached, afterTTL, afterMember, otherCommunity []authz.ID
	var grantedOpen, grantedOther bool
	var hits, misses int64
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		db := authztest.New(s)
		for _, c := range []authztest.Channel{
			{ID: ch(1), Community: k1, Open: true, Listed: true},
			{ID: ch(2), Community: k1},
			{ID: ch(3), Community: k2, Open: true, Listed: true},
		} {
			_ = db.AddChannel(c)
		}
		_ = db.SetMember(user(1), ch(2), true)
		u, err := baseline.NewUnionCache(s, db, baseline.UnionConfig{})
		if err != nil {
			s.Failf("%v", err)
		}
		first, _ = u.Accessible(bg, k1, user(1))
		_ = db.SetMember(user(1), ch(2), false) // no invalidation: cached union
		cached, _ = u.Accessible(bg, k1, user(1))
		_ = s.Sleep(bg, 10*time.Second)
		afterTTL, _ = u.Accessible(bg, k1, user(1))
		_ = db.SetMember(user(1), ch(2), true)
		u.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: k1, UserID: user(1), ChannelID: ch(2)})
		afterMember, _ = u.Accessible(bg, k1, user(1))
		grantedOpen, _ = u.Granted(bg, k1, user(9), ch(1))
		grantedOther, _ = u.Granted(bg, k1, user(9), ch(3))
		otherCommunity, _ = u.Accessible(bg, k2, user(1))
		hits, misses = u.Hits(), u.Misses()
	})
	require.NoError(t, res.Err)
	assert.Equal(t, []authz.ID{ch(1), ch(2)}, first)
	assert.Equal(t, first, cached)
	assert.Equal(t, []authz.ID{ch(1)}, afterTTL)
	assert.Equal(t, []authz.ID{ch(1), ch(2)}, afterMember)
	assert.True(t, grantedOpen)
	assert.False(t, grantedOther)
	assert.Equal(t, []authz.ID{ch(3)}, otherCommunity)
	assert.Equal(t, int64(2), hits, "cached, and user 9's second lookup")
	assert.Equal(t, int64(5), misses)
}

func TestUnionCacheCommunityInvalidationDropsEveryReader(t *testing.T) {
	var before, after int64
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		db := authztest.New(s)
		_ = db.AddChannel(authztest.Channel{ID: ch(1), Community: k1, Open: true, Listed: true})
		u, _ := baseline.NewUnionCache(s, db, baseline.UnionConfig{})
		for r := uint64(1); r <= 3; r++ {
			_, _ = u.Accessible(bg, k1, user(r))
			_, _ = u.Accessible(bg, k2, user(r))
		}
		before = db.Stats().Statements
		u.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: k1})
		u.Invalidate(authz.Message{Kind: authz.KindAccessibleAll}) // malformed: ignored
		for r := uint64(1); r <= 3; r++ {
			_, _ = u.Accessible(bg, k1, user(r))
			_, _ = u.Accessible(bg, k2, user(r))
		}
		after = db.Stats().Statements
	})
	require.NoError(t, res.Err)
	assert.Equal(t, int64(3*2), after-before, "three k1 readers re-read both queries; k2 untouched")
}

func TestNewUnionCacheRejectsNonsense(t *testing.T) {
	db := authztest.New(rt.Real())
	_, err := baseline.NewUnionCache(nil, db, baseline.UnionConfig{})
	assert.Error(t, err)
	_, err = baseline.NewUnionCache(rt.Real(), db, baseline.UnionConfig{TTL: -1})
	assert.Error(t, err)
	_, err = baseline.NewUnionCache(rt.Real(), db, baseline.UnionConfig{Capacity: -1})
	assert.Error(t, err)
	u, err := baseline.NewUnionCache(rt.Real(), db, baseline.UnionConfig{})
	require.NoError(t, err)
	_, err = u.Accessible(bg, authz.ID{}, user(1))
	assert.Error(t, err)
	assert.Contains(t, u.Metrics().Snapshot(), baseline.UnionMetricHits)
}

// OC-8's mechanism, counted: a cold burst of readers in one community with
// 2,000 listed open channels. The baseline re-reads every open channel per
// reader; the split cache reads them once. Exact row counts.
func TestColdBurstRowsBaselineVersusSplit(t *testing.T) {
	const open, readers, memberEach = 2000, 200, 5
	rows := map[string]int64{}
	for _, design := range []string{"union", "split"} {
		res := sim.Run(sim.Config{Seed: 7}, func(s *sim.Sim) {
			db := authztest.New(s)
			db.Latency = func(string) time.Duration { return 2 * time.Millisecond }
			for i := uint64(1); i <= open; i++ {
				_ = db.AddChannel(authztest.Channel{ID: ch(i), Community: k1, Open: true, Listed: true})
			}
			for r := uint64(1); r <= readers; r++ {
				for j := uint64(0); j < memberEach; j++ {
					id := ch(10_000 + r*memberEach + j)
					_ = db.AddChannel(authztest.Channel{ID: id, Community: k1})
					_ = db.SetMember(user(r), id, true)
				}
			}
			var accessible func(authz.ID) ([]authz.ID, error)
			if design == "union" {
				u, _ := baseline.NewUnionCache(s, db, baseline.UnionConfig{})
				accessible = func(r authz.ID) ([]authz.ID, error) { return u.Accessible(bg, k1, r) }
			} else {
				c, _ := accesschannels.New(s, db, accesschannels.Config{})
				accessible = func(r authz.ID) ([]authz.ID, error) { return c.Accessible(bg, k1, r) }
			}
			wg := s.NewWaitGroup("burst")
			wg.Add(readers)
			for r := uint64(1); r <= readers; r++ {
				s.Go("reader", func() {
					defer wg.Done()
					ids, err := accessible(user(r))
					if err != nil || len(ids) != open+memberEach {
						s.Failf("reader %d: %d ids, %v", r, len(ids), err)
					}
				})
			}
			_ = wg.Wait(bg)
			rows[design] = db.Stats().Rows
		})
		require.NoError(t, res.Err, design)
	}
	assert.Equal(t, int64(readers*(open+memberEach)), rows["union"])
	assert.Equal(t, int64(open+readers*memberEach), rows["split"])
}
