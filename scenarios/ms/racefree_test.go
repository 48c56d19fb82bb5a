package ms

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims"
)

// TestMS3_RealGoroutinesRaceFree runs the membership cache on real
// goroutines (rt.Real): readers check while a writer changes memberships
// and invalidates each change, and an invalidator drops the whole
// community now and then; a small cap and budget keep markers and
// evictions in play. Once they are done, every answer must be the
// database's: no load that raced a change published it (MS-3). Under the
// race detector (make race, and the audit's Race mutants) it is MS-3's
// check for what the simulator cannot see: it runs one task at a time, so
// a lock left out where no scheduling point lies inside (the fence's peek
// and put, the waiters' recheck) changes nothing a simulated check
// observes, while real goroutines race on the cache's map.
//
// The race detector only sees accesses that happen between two
// synchronizations: every goroutine yields after each operation, so checks,
// writes and invalidations interleave even with one processor
// (GOMAXPROCS=1, where the audit runs Race mutants) or on a loaded machine,
// instead of one goroutine running its whole loop before the next starts.
func TestMS3_RealGoroutinesRaceFree(t *testing.T) {
	const users, channels, readers, checksEach, writes = 6, 24, 6, 800, 300
	r := rt.Real()
	db := authztest.New(r)
	for c := 1; c <= channels; c++ {
		if err := db.AddChannel(authztest.Channel{ID: channel(c), Community: community}); err != nil {
			t.Fatal(err)
		}
	}
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			if err := db.SetMember(user(u), channel(c), (u+c)%3 == 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	pool := authztest.NewLocked(r, db)
	// A cap of 7 IDs puts some users above it (markers); a budget of three
	// full snapshots keeps evicting.
	cache, err := membership.New(r, pool, membership.Config{MaxSnapshotIDs: 7, BudgetBytes: 3 * membership.EntryWeight(membership.Snapshot, 7)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reader := func(i int) error {
		for j := range checksEach {
			u, c := 1+(i+j)%users, 1+(i*7+j*5)%channels
			if _, err := cache.IsMember(ctx, community, user(u), channel(c)); err != nil {
				return fmt.Errorf("check u%d/c%d: %w", u, c, err)
			}
			r.Yield()
		}
		return nil
	}
	writer := func() error {
		for j := range writes {
			u, c := 1+j%users, 1+(j*11)%channels
			pool.Write(func(db *authztest.DB) { _ = db.SetMember(user(u), channel(c), j%2 == 0) })
			cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user(u), ChannelID: channel(c)})
			if j%30 == 0 {
				cache.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community})
			}
			r.Yield()
		}
		return nil
	}
	maintainer := func() error {
		for range 50 {
			cache.Maintain()
			r.Yield()
		}
		return nil
	}
	claims.Concurrently(t, r, append(claims.Workers("reader", readers, reader),
		claims.Goroutine{Name: "writer", Run: writer},
		claims.Goroutine{Name: "maintainer", Run: maintainer})...)
	// Quiescent: every answer is the database's.
	wrong := 0
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			got, err := cache.IsMember(ctx, community, user(u), channel(c))
			var want bool
			pool.Write(func(db *authztest.DB) { want = db.Tables().IsActiveMember(community, user(u), channel(c)) })
			if err != nil || got != want {
				wrong++
				t.Errorf("MS-3: after the writes, u%d/c%d answered %v (%v), the database says %v", u, c, got, err, want)
			}
		}
	}
	t.Logf("MS-3 on real goroutines: %d checks beside %d writes, then %d quiescent answers, %d wrong", readers*checksEach, writes, users*channels, wrong)
}
