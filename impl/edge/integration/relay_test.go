package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/impl/edge/pgstore/pgtest"
	"github.com/windtunnel/windtunnel/impl/edge/redisbus"
	"github.com/windtunnel/windtunnel/impl/edge/testenv"
	"github.com/windtunnel/windtunnel/impl/membership"
	authzrelay "github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/impl/rt"
)

// relay is one relay's authorization state, as in the source texts' relays.
// It has its own connection pool on the shared database and the production
// wiring (impl/relay: both caches, the write path, the receiving fan-out). It
// may sit on a Redis publisher and subscriber on the shared invalidation
// channel.
type relay struct {
	store  *pgstore.Store
	wiring *authzrelay.Relay
	oc     *accesschannels.Cache
	ms     *membership.Cache
	sub    *redisbus.Subscriber // nil: no pub/sub
}

type relayConfig struct {
	oc accesschannels.Config
	ms membership.Config
	// bus: Redis client and channel; nil client means no pub/sub.
	bus     redis.UniversalClient
	channel string
}

func newRelay(t *testing.T, f *pgtest.Fixture, cfg relayConfig) *relay {
	t.Helper()
	r := &relay{store: f.Open(pgstore.Config{})}
	var pub authz.Publisher // nil: invalidations stay local
	if cfg.bus != nil {
		p, err := redisbus.NewPublisher(cfg.bus, cfg.channel)
		require.NoError(t, err)
		pub = p
	}
	var err error
	r.wiring, err = authzrelay.New(rt.Real(), r.store, pub, authzrelay.Config{OC: cfg.oc, MS: cfg.ms})
	require.NoError(t, err)
	r.oc, r.ms = r.wiring.OC, r.wiring.MS
	if cfg.bus != nil {
		r.sub, err = redisbus.Subscribe(ctxT(t), cfg.bus, r.wiring, redisbus.SubscriberConfig{Channel: cfg.channel})
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.sub.Close() })
	}
	return r
}

// changed is the write path after a committed change: the production
// wiring invalidates this relay's caches, then tells the others (if
// connected).
func (r *relay) changed(t *testing.T, m authz.Message) {
	t.Helper()
	require.NoError(t, r.wiring.Changed(ctxT(t), m))
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// redisClient returns a client on WINDTUNNEL_REDIS_ADDR (skip or fail as
// testenv decides) and a channel name no other test uses.
func redisClient(t *testing.T) (*redis.Client, string) {
	t.Helper()
	c := redis.NewClient(testenv.RedisOptions(t))
	t.Cleanup(func() { _ = c.Close() })
	var b [6]byte
	_, _ = rand.Read(b[:])
	return c, "wt-integration:" + hex.EncodeToString(b[:])
}

// ids hands out IDs unique within one test's schema.
type ids struct{ next uint64 }

func (g *ids) id(kind byte) authz.ID {
	g.next++
	return authz.NewID(kind, g.next)
}

// check is one timed answer of a cache.
type check struct {
	invoke, ret time.Time
	ok          bool
}

func timed(t *testing.T, f func() (bool, error)) check {
	t.Helper()
	c := check{invoke: time.Now()}
	ok, err := f()
	c.ret = time.Now()
	require.NoError(t, err)
	c.ok = ok
	return c
}
