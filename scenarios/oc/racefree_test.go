package oc

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims/racefree"
)

// TestOC1_RealGoroutinesRaceFree runs the accessible-channels cache on real
// goroutines (rt.Real): readers ask Accessible and Granted while a writer
// changes memberships and visibility and invalidates each change, with a
// small member capacity that keeps evicting. Once they are done, and a
// community-wide invalidation has been applied, every answer must be the
// tables' union (OC-1). Under the race detector (make race, and the
// audit's Race mutants) it is OC-1's check for what the simulator cannot
// see. The simulator runs one task at a time, so a lock left out where no
// scheduling point lies inside (the member half's insert) changes nothing a
// simulated check observes, while real goroutines race on the cache's maps.
//
// The race detector only sees accesses that happen between two
// synchronizations: every goroutine yields after each operation, so
// lookups, writes and invalidations interleave even with one processor
// (GOMAXPROCS=1, where the audit runs Race mutants) or on a loaded machine.
func TestOC1_RealGoroutinesRaceFree(t *testing.T) {
	const channels, users, readers, lookupsEach = 24, 12, 6, 300
	r := racefree.Preempting(rt.Real()) // read holds yield inside, so two overlap even on one processor
	db := authztest.New(r)
	community := authz.NewID('k', 1)
	chID := func(i int) authz.ID { return authz.NewID('c', uint64(i)) }
	userID := func(i int) authz.ID { return authz.NewID('u', uint64(i)) }
	for i := 1; i <= channels; i++ {
		if err := db.AddChannel(authztest.Channel{ID: chID(i), Community: community, Open: i%3 != 0, Listed: i%4 != 0}); err != nil {
			t.Fatal(err)
		}
	}
	pool := authztest.NewLocked(r, db)
	cache, err := accesschannels.New(r, pool, accesschannels.Config{MemberCapacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The writer runs in the background, a change a round, for as long as
	// the readers read (racefree.Goroutine.Background).
	writes := 0
	writer := func() error {
		i := writes
		writes++
		n, u := 1+(i*7)%channels, userID(1+i%users)
		if i%2 == 0 {
			pool.Write(func(db *authztest.DB) { _ = db.SetMember(u, chID(n), i%4 == 0) })
			cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: u, ChannelID: chID(n)})
		} else {
			pool.Write(func(db *authztest.DB) {
				_ = db.UpdateChannel(chID(n), func(c *authztest.Channel) { c.Open = !c.Open })
			})
			cache.Invalidate(authz.Message{Kind: authz.KindVisibility, CommunityID: community, ChannelID: chID(n)})
		}
		r.Yield()
		return nil
	}
	reader := func(i int) error {
		for j := range lookupsEach {
			u := userID(1 + (i*5+j)%users)
			if _, err := cache.Accessible(ctx, community, u); err != nil {
				return fmt.Errorf("Accessible: %w", err)
			}
			r.Yield()
			if _, err := cache.Granted(ctx, community, u, chID(1+j%channels)); err != nil {
				return fmt.Errorf("Granted: %w", err)
			}
			r.Yield()
		}
		return nil
	}
	racefree.Concurrently(t, r, append([]racefree.Goroutine{{Name: "writer", Run: writer, Background: true}}, racefree.Workers("reader", readers, reader)...)...)
	// Quiescent, after a community-wide drop (the open set may be served
	// up to its max age otherwise): every answer is the tables' union.
	cache.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community})
	wrong := 0
	for u := 1; u <= users; u++ {
		got, err := cache.Accessible(ctx, community, userID(u))
		var want []authz.ID
		pool.Write(func(db *authztest.DB) { want = expectedAccessible(db.Tables(), community, userID(u)) })
		if err != nil || !slices.Equal(got, want) {
			wrong++
			t.Errorf("OC-1: after the writes, u%d was given %s (%v), the tables' union is %s", u, shortIDs(got), err, shortIDs(want))
		}
	}
	t.Logf("OC-1 on real goroutines: %d lookups beside %d writes, then %d quiescent answers, %d wrong", 2*readers*lookupsEach, writes, users, wrong)
}
