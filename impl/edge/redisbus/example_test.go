package redisbus_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/redisbus"
)

type printer string

func (p printer) Invalidate(m authz.Message) { fmt.Println(string(p), "drops", m.Kind, m.ChannelID) }

// Two relays on one Redis channel. (Compiled, not run: it needs a server.
// The integration tests run the same wiring with the real caches.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: os.Getenv("WINDTUNNEL_REDIS_ADDR")})
	defer client.Close()

	// Relay B listens; its caches would be the Fanout's members.
	sub, err := redisbus.Subscribe(ctx, client, redisbus.Fanout{printer("relay B")}, redisbus.SubscriberConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()

	// Relay A made a channel private: it invalidates locally, then publishes.
	pub, _ := redisbus.NewPublisher(client, "")
	m := authz.Message{Kind: authz.KindVisibility, CommunityID: authz.NewID('k', 1), ChannelID: authz.NewID('c', 7)}
	if err := pub.Publish(ctx, m); err != nil {
		log.Print(err) // best effort: the caches' age bounds cover a lost message
	}
}

// One subscription feeds every cache of a relay.
func ExampleFanout() {
	f := redisbus.Fanout{printer("open channels"), printer("memberships")}
	f.Invalidate(authz.Message{Kind: authz.KindChannelDeleted, CommunityID: authz.NewID('k', 1), ChannelID: authz.NewID('c', 7)})
	// Output:
	// open channels drops channel_deleted 63000000-0000-0000-0000-000000000007
	// memberships drops channel_deleted 63000000-0000-0000-0000-000000000007
}
