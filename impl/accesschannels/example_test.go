package accesschannels_test

import (
	"context"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
)

func Example() {
	ctx := context.Background()
	community, reader := authz.NewID('k', 1), authz.NewID('u', 1)
	general, secret, lobby := authz.NewID('c', 1), authz.NewID('c', 2), authz.NewID('c', 3)

	// Any authz.Pool works; this one is the in-memory test database.
	db := authztest.New(rt.Real())
	_ = db.AddChannel(authztest.Channel{ID: general, Community: community, Open: true, Listed: true})
	_ = db.AddChannel(authztest.Channel{ID: secret, Community: community})
	_ = db.AddChannel(authztest.Channel{ID: lobby, Community: community, Open: true, Listed: true})
	_ = db.SetMember(reader, secret, true)

	cache, err := accesschannels.New(rt.Real(), db, accesschannels.Config{}) // 1 s open-set age, 10 s TTL
	if err != nil {
		panic(err)
	}
	ids, _ := cache.Accessible(ctx, community, reader)
	fmt.Println(len(ids), "accessible channels")

	// Another reader with no member channels still gets the open half,
	// from the cached open set.
	ok, _ := cache.Granted(ctx, community, authz.NewID('u', 2), lobby)
	fmt.Println("new reader granted lobby:", ok)

	// Channel made private elsewhere: the community-wide invalidation drops
	// both halves, so the next lookup re-reads.
	_ = db.UpdateChannel(lobby, func(ch *authztest.Channel) { ch.Open = false })
	cache.Invalidate(authz.Message{Kind: authz.KindVisibility, CommunityID: community, ChannelID: lobby})
	ok, _ = cache.Granted(ctx, community, authz.NewID('u', 2), lobby)
	fmt.Println("after invalidation:", ok)

	s := cache.Stats()
	fmt.Printf("open hits=%d absent=%d; member hits=%d misses=%d\n",
		s.OpenHits, s.OpenMissesAbsent, s.MemberHits, s.MemberMisses)
	// Output:
	// 3 accessible channels
	// new reader granted lobby: true
	// after invalidation: false
	// open hits=1 absent=2; member hits=0 misses=3
}
