package ms

import (
	"context"
	"fmt"
	"testing"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/scenarios/claims/racefree"
)

// TestMS3_RealGoroutinesRaceFree runs the membership cache on real
// goroutines (rt.Real). Readers check (and one check in five subscribes
// the user whose grants are never invalidated: its denials go stale). A
// writer meanwhile changes memberships and invalidates each change,
// dropping the whole community now and then (accessible_all, two channel
// deletions; visibility changes drop nothing). A maintainer removes
// expired entries and reads Usage and Inspect. A small cap and budget keep
// markers and evictions in play. Once they are done, every answer must be
// the database's: no load that raced a change published it (MS-3). Under
// the race detector (make race, and the audit's Race mutants) it is MS-3's
// check for what the simulator cannot see. The simulator runs one task at
// a time, so a lock left out where no scheduling point lies inside (the
// fence's peek and put, the waiters' recheck) changes nothing a simulated
// check observes, while real goroutines race on the cache's map.
//
// The race detector only sees accesses that happen between two
// synchronizations. Every goroutine yields after each operation, so checks,
// writes and invalidations interleave even with one processor
// (GOMAXPROCS=1, where the audit runs Race mutants) or on a loaded machine,
// instead of one goroutine running its whole loop before the next starts.
func TestMS3_RealGoroutinesRaceFree(t *testing.T) {
	const users, channels, readers, checksEach = 6, 24, 6, 800
	// The writer's grants to lossy lose their invalidations: its cached
	// snapshot's denials go stale, which subscriptions confirm against the
	// database.
	const lossy = 1
	r := racefree.Preempting(rt.Real()) // read holds yield inside, so two overlap even on one processor
	db := authztest.New(r)
	for c := 1; c <= channels; c++ {
		if err := db.AddChannel(authztest.Channel{ID: channel(c), Community: community}); err != nil {
			t.Fatal(err)
		}
	}
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			member := (u+c)%3 == 0 // 8 channels each: above the cap of 7, a marker
			if u == lossy {
				member = c%12 == 0 // 2, and the writer's grants add 4: a snapshot
			}
			if err := db.SetMember(user(u), channel(c), member); err != nil {
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
	subscribed := make([]int, readers) // each reader's own slot
	reader := func(i int) error {
		for j := range checksEach {
			u, c := 1+(i+j)%users, 1+(i*7+j*5)%channels
			if j%5 == 4 {
				// A subscription of the user whose grants are not
				// invalidated: a stale denial is confirmed by the database,
				// and the confirmed member's entry is dropped (MS-12).
				c := 1 + (i+j)%4 // the channels the lossy user is granted and revoked
				ok, err := cache.Subscribe(ctx, community, user(lossy), channel(c))
				if err != nil {
					return fmt.Errorf("subscribe u%d/c%d: %w", lossy, c, err)
				}
				if ok {
					subscribed[i]++
				}
			} else if _, err := cache.IsMember(ctx, community, user(u), channel(c)); err != nil {
				return fmt.Errorf("check u%d/c%d: %w", u, c, err)
			}
			r.Yield()
		}
		return nil
	}
	// The writer and the maintainer run in the background, a round at a
	// time, for as long as the readers read (racefree.Goroutine.Background).
	writes := 0
	writer := func() error { // one change a round
		j := writes
		writes++
		u, c := 1+j%users, 1+(j*11)%channels
		grant := j%2 == 0
		if u == lossy { // every users-th write: one of 4 channels granted, then revoked
			k := j / users
			c, grant = 1+(k/2)%4, k%2 == 0
		}
		pool.Write(func(db *authztest.DB) { _ = db.SetMember(user(u), channel(c), grant) })
		defer r.Yield()
		if u == lossy && grant {
			return nil // a lost invalidation: the lossy user's revocations alone arrive
		}
		cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user(u), ChannelID: channel(c)})
		// The community-wide invalidations race the loads too (MS-3's fence
		// holds for every drop, not only the per-user one): accessible_all
		// every 30 writes, a visibility change between them, and two
		// channel deletions, whose drop must keep every load that read
		// before the deletion from publishing a list that grants it.
		switch {
		case j%30 == 0:
			cache.Invalidate(authz.Message{Kind: authz.KindAccessibleAll, CommunityID: community})
		case j%30 == 15:
			ch := channel(1 + j%channels)
			pool.Write(func(db *authztest.DB) { _ = db.UpdateChannel(ch, func(c *authztest.Channel) { c.Open = !c.Open }) })
			cache.Invalidate(authz.Message{Kind: authz.KindVisibility, CommunityID: community, ChannelID: ch})
		case j == 100 || j == 400: // channels 24 and 23: the lossy user is in 24
			ch := channel(channels - j/400)
			pool.Write(func(db *authztest.DB) { _ = db.UpdateChannel(ch, func(c *authztest.Channel) { c.Deleted = true }) })
			cache.Invalidate(authz.Message{Kind: authz.KindChannelDeleted, CommunityID: community, ChannelID: ch})
		}
		return nil
	}
	// The maintainer removes expired entries and reads the cache as a
	// dashboard would (Usage, Inspect), checking what no lookup reports:
	// the retained weight stays within the budget (MS-8).
	maintained := 0
	maintainer := func() error {
		i := maintained
		maintained++
		if i%4 == 0 {
			cache.Maintain()
		}
		if u := cache.Usage(); u.WeightBytes > u.BudgetBytes {
			return fmt.Errorf("MS-8 on real goroutines: %d bytes retained, over the budget of %d", u.WeightBytes, u.BudgetBytes)
		}
		r.Yield()
		_, _ = cache.Inspect(community, user(1+i%users))
		r.Yield()
		return nil
	}
	racefree.Concurrently(t, r, append(racefree.Workers("reader", readers, reader),
		racefree.Goroutine{Name: "writer", Run: writer, Background: true},
		racefree.Goroutine{Name: "maintainer", Run: maintainer, Background: true})...)
	// Quiescent: every answer is the database's; the lossy user's through
	// subscriptions, since its last grants were never invalidated.
	wrong := 0
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			ask := cache.IsMember
			if u == lossy {
				ask = cache.Subscribe
			}
			got, err := ask(ctx, community, user(u), channel(c))
			var want bool
			pool.Write(func(db *authztest.DB) { want = db.Tables().IsActiveMember(community, user(u), channel(c)) })
			if err != nil || got != want {
				wrong++
				t.Errorf("MS-3: after the writes, u%d/c%d answered %v (%v), the database says %v", u, c, got, err, want)
			}
		}
	}
	confirmed := 0
	for _, n := range subscribed {
		confirmed += n
	}
	t.Logf("MS-3 on real goroutines: %d checks (%d subscriptions of the lossy user, %d of them members, %d overturning a stale denial by the metric) beside %d writes and %d maintenance rounds, then %d quiescent answers, %d wrong",
		readers*checksEach, readers*checksEach/5, confirmed, cache.Metrics().Snapshot()[membership.MetricConfirmedMembers], writes, maintained, users*channels, wrong)
}
