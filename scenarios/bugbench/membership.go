package bugbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// MembershipFence is MS-3's race between loads and invalidations, sized for
// many runs. Readers sweep the users in order, each check of a user not
// cached loading the user's channels, while a writer sweeps them a step
// behind or ahead: it changes one membership of each user and delivers the
// invalidation, and deletes a channel (a community-wide drop) every few
// users. Each user is changed once and nothing is evicted, so a load that
// read before a change and published after its invalidation stays wrong
// to the end. Once every goroutine is done, every answer must be the
// database's (MS-3's fence).
var MembershipFence = &Workload{Name: "membership-fence", Claim: "MS-3", Run: membershipFence, Selected: msSelected}

// msSelected: the cache's lock and its entries' loading locks, and the
// database's statements (the pool's lock).
func msSelected(obj string) bool {
	return strings.HasPrefix(obj, "mutex membership.") || strings.HasPrefix(obj, "mutex authztest.locked#")
}

var msCommunity = authz.NewID('c', 1)

func msUser(i int) authz.ID    { return authz.NewID('u', uint64(i)) }
func msChannel(i int) authz.ID { return authz.NewID('h', uint64(i)) }

func membershipFence(r rt.Runtime) error {
	const users, channels, readers, deleteEvery = 12, 8, 3, 4
	db := authztest.New(r)
	for c := 1; c <= channels; c++ {
		if err := db.AddChannel(authztest.Channel{ID: msChannel(c), Community: msCommunity}); err != nil {
			return err
		}
	}
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			if err := db.SetMember(msUser(u), msChannel(c), (u+c)%3 == 0); err != nil {
				return err
			}
		}
	}
	pool := authztest.NewLocked(r, db)
	// Room for every user's snapshot: an eviction would hide a stale one.
	cache, err := membership.New(r, pool, membership.Config{MaxSnapshotIDs: channels, BudgetBytes: 4 * users * membership.EntryWeight(membership.Snapshot, channels)})
	if err != nil {
		return err
	}
	ctx := context.Background()
	errs := make([]error, readers) // each reader's own slot
	wg := r.NewWaitGroup("bugbench.membership")
	wg.Add(readers + 1)
	for i := range readers {
		r.Go(fmt.Sprint("reader-", i), func() {
			defer wg.Done()
			for u := 1; u <= users; u++ {
				for k := range 2 {
					c := 1 + (i+u+k*3)%channels
					if _, err := cache.IsMember(ctx, msCommunity, msUser(u), msChannel(c)); err != nil {
						errs[i] = fmt.Errorf("check u%d/c%d: %w", u, c, err)
						return
					}
					r.Yield()
				}
			}
		})
	}
	r.Go("writer", func() {
		defer wg.Done()
		for u := 1; u <= users; u++ {
			c := 1 + u%channels
			pool.Write(func(db *authztest.DB) {
				_ = db.SetMember(msUser(u), msChannel(c), !db.Tables().IsActiveMember(msCommunity, msUser(u), msChannel(c)))
			})
			r.Yield()
			cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: msCommunity, UserID: msUser(u), ChannelID: msChannel(c)})
			if u%deleteEvery == 0 { // a deletion must drop every load that read before it
				ch := msChannel(channels + 1 - u/deleteEvery)
				pool.Write(func(db *authztest.DB) { _ = db.UpdateChannel(ch, func(c *authztest.Channel) { c.Deleted = true }) })
				r.Yield()
				cache.Invalidate(authz.Message{Kind: authz.KindChannelDeleted, CommunityID: msCommunity, ChannelID: ch})
			}
			r.Yield()
		}
	})
	if err := wg.Wait(ctx); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for u := 1; u <= users; u++ {
		for c := 1; c <= channels; c++ {
			got, err := cache.IsMember(ctx, msCommunity, msUser(u), msChannel(c))
			var want bool
			pool.Write(func(db *authztest.DB) { want = db.Tables().IsActiveMember(msCommunity, msUser(u), msChannel(c)) })
			if err != nil || got != want {
				return fmt.Errorf("MS-3: after the writes, u%d/c%d answered %v (%v), the database says %v", u, c, got, err, want)
			}
		}
	}
	return nil
}
