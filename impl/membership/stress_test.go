package membership_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// Real goroutines, rt.Real(), the race detector: readers check while a
// writer changes memberships and delivers every invalidation, and an
// invalidator drops whole communities. Afterwards (quiescent, no final
// invalidation) every answer is exact: no load that raced a change
// published (MS-3). Throughout, the counters add up and the weight stays
// within a small budget (MS-8).
func TestStressRealGoroutines(t *testing.T) {
	const (
		users, channels = 6, 24
		readers         = 8
		checksEach      = 1500
		writes          = 400
	)
	r := rt.Real()
	db := authztest.New(r)
	for i := 1; i <= channels; i++ {
		require.NoError(t, db.AddChannel(authztest.Channel{ID: ch(i), Community: community}))
	}
	uid := func(n int) authz.ID { return authz.NewID('u', uint64(n)) }
	truth := func(u, c int) bool { return (u+c)%3 == 0 }
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			require.NoError(t, db.SetMember(uid(u), ch(c), truth(u, c)))
		}
	}
	pool := authztest.NewLocked(r, db)
	// MaxSnapshotIDs 7: some users are above it (point checks), some below;
	// a budget of three full snapshots forces evictions.
	cache, err := membership.New(r, pool, membership.Config{MaxSnapshotIDs: 7, BudgetBytes: 3 * membership.EntryWeight(membership.Snapshot, 7), LockWait: 50 * time.Millisecond})
	require.NoError(t, err)

	var wg sync.WaitGroup
	var errs sync.Map
	var overBudget sync.Map
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range checksEach {
				u, c := 1+(i+j)%users, 1+(i*7+j*5)%channels
				if _, err := cache.IsMember(context.Background(), community, uid(u), ch(c)); err != nil {
					errs.Store(fmt.Sprint(i, j), err)
				}
				if j%100 == 0 {
					if us := cache.Usage(); us.WeightBytes > us.BudgetBytes {
						overBudget.Store(fmt.Sprint(i, j), us)
					}
				}
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for j := range writes {
			u, c := 1+j%users, 1+(j*11)%channels
			active := j%2 == 0
			pool.Write(func(db *authztest.DB) { _ = db.SetMember(uid(u), ch(c), active) })
			cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: uid(u), ChannelID: ch(c)})
		}
	}()
	go func() {
		defer wg.Done()
		for range 20 {
			cache.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community})
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()

	errs.Range(func(k, v any) bool { t.Errorf("check %v: %v", k, v); return true })
	overBudget.Range(func(k, v any) bool { t.Errorf("over budget at %v: %+v", k, v); return true })
	m := cache.Metrics().Snapshot()
	total := int64(readers * checksEach)
	// Every check is a hit, a load, or a point check; a load that finds an
	// oversize list also point-checks, so loads of marker users count twice.
	answered := m[membership.MetricHits] + m[membership.MetricMisses] +
		m[membership.MetricFallbacks+`{reason="oversize"}`] + m[membership.MetricFallbacks+`{reason="wait_timeout"}`]
	assert.GreaterOrEqual(t, answered, total)
	assert.LessOrEqual(t, answered, total+m[membership.MetricMisses])
	assert.Equal(t, m[membership.MetricMisses], db.Stats().ByStatement[authztest.StmtActiveMemberships], "one miss per load")

	// Quiescent: every answer matches the database.
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			got, err := cache.IsMember(context.Background(), community, uid(u), ch(c))
			require.NoError(t, err)
			var want bool
			pool.Write(func(db *authztest.DB) {
				conn, _ := db.Acquire(context.Background())
				want, _ = conn.IsActiveMember(context.Background(), community, uid(u), ch(c))
				conn.Release()
			})
			assert.Equal(t, want, got, "user %d channel %d", u, c)
		}
	}
}
