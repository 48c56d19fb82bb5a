package integration_test

import (
	"context"
	"log"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/redisbus"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// A relay service's authorization wiring: the same impl/relay code the
// simulated pods and the integration tests run, on PostgreSQL (pgxpool),
// Redis pub/sub and the real runtime. (Compiled, not run: it needs the
// servers; the integration tests run the same wiring against them.)
func Example_service() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), pgstore.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	bus := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
	pub, err := redisbus.NewPublisher(bus, "authz-invalidations")
	if err != nil {
		log.Fatal(err)
	}
	r, err := relay.New(rt.Real(), store, pub, relay.Config{}) // the source texts' defaults: 1 s, 10 s, 64 MiB, 16,384
	if err != nil {
		log.Fatal(err)
	}
	sub, err := redisbus.Subscribe(ctx, bus, r, redisbus.SubscriberConfig{Channel: "authz-invalidations"})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()

	// A request: may this reader see the channel?
	ok, err := r.OC.Granted(ctx, community, reader, channel)
	_, _ = ok, err
	// After an admin's committed change: drop locally, tell the others.
	_ = r.Changed(ctx, relay.MembershipChanged(community, reader, channel))
}

var community, reader, channel = [16]byte{'k', 1}, [16]byte{'u', 1}, [16]byte{'c', 1}
