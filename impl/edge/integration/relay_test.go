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
	"github.com/windtunnel/windtunnel/impl/rt"
)

// relay is one relay's authorization state, as in the seeds' relays: its
// own connection pool on the shared database, both caches, and optionally
// a Redis publisher and subscriber on the shared invalidation channel.
type relay struct {
	store *pgstore.Store
	oc    *accesschannels.Cache
	ms    *membership.Cache
	pub   *redisbus.Publisher  // nil: no pub/sub
	sub   *redisbus.Subscriber // nil: no pub/sub
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
	var err error
	r.oc, err = accesschannels.New(rt.Real(), r.store, cfg.oc)
	require.NoError(t, err)
	r.ms, err = membership.New(rt.Real(), r.store, cfg.ms)
	require.NoError(t, err)
	if cfg.bus != nil {
		r.pub, err = redisbus.NewPublisher(cfg.bus, cfg.channel)
		require.NoError(t, err)
		r.sub, err = redisbus.Subscribe(ctxT(t), cfg.bus, redisbus.Fanout{r.oc, r.ms},
			redisbus.SubscriberConfig{Channel: cfg.channel})
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.sub.Close() })
	}
	return r
}

// changed is the write path after a committed change: invalidate this
// relay's caches, then tell the others (if connected).
func (r *relay) changed(t *testing.T, m authz.Message) {
	t.Helper()
	r.oc.Invalidate(m)
	r.ms.Invalidate(m)
	if r.pub != nil {
		require.NoError(t, r.pub.Publish(ctxT(t), m))
	}
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
