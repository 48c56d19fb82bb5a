package membership_test

import (
	"context"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// A relay checks a user's access to its channels; the first check loads the
// user's memberships once, the rest are answered from the snapshot, and an
// invalidation for the user forces a reload.
func Example() {
	ctx := context.Background()
	db := authztest.New(rt.Real()) // any authz.Pool: PostgreSQL in a service
	community, user := authz.NewID('k', 1), authz.NewID('u', 1)
	general, random := authz.NewID('c', 1), authz.NewID('c', 2)
	_ = db.AddChannel(authztest.Channel{ID: general, Community: community})
	_ = db.AddChannel(authztest.Channel{ID: random, Community: community})
	_ = db.SetMember(user, general, true)

	cache, err := membership.New(rt.Real(), db, membership.Config{}) // defaults: 10 s, 64 MiB, 16,384 IDs
	if err != nil {
		panic(err)
	}
	a, _ := cache.IsMember(ctx, community, user, general)
	b, _ := cache.IsMember(ctx, community, user, random)
	fmt.Println("general:", a, "random:", b)

	_ = db.SetMember(user, random, true)
	cache.Invalidate(authz.Message{Kind: authz.KindMembership, CommunityID: community, UserID: user, ChannelID: random})
	b, _ = cache.IsMember(ctx, community, user, random)
	fmt.Println("random after grant:", b)

	m := cache.Metrics().Snapshot()
	fmt.Println("hits:", m[membership.MetricHits], "loads:", m[membership.MetricMisses], "reads:", db.Stats().Statements)
	// Output:
	// general: true random: false
	// random after grant: true
	// hits: 1 loads: 2 reads: 2
}
