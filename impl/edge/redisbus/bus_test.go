package redisbus_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/redisbus"
)

func subscribe(t *testing.T, c redis.UniversalClient, inv authz.Invalidator, cfg redisbus.SubscriberConfig) *redisbus.Subscriber {
	t.Helper()
	s, err := redisbus.Subscribe(ctxT(t), c, inv, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var allKinds = []authz.Kind{authz.KindMembership, authz.KindAccessibleAll, authz.KindVisibility, authz.KindChannelDeleted}

func TestEveryRelayReceivesEveryMessage(t *testing.T) {
	ctx := ctxT(t)
	c := client(t)
	name := channel()
	var a, b recorder
	sa := subscribe(t, c, &a, redisbus.SubscriberConfig{Channel: name})
	sb := subscribe(t, c, &b, redisbus.SubscriberConfig{Channel: name})
	pub, err := redisbus.NewPublisher(c, name)
	require.NoError(t, err)
	var want []authz.Message
	for i, k := range allKinds {
		m := msg(k, uint64(i+1))
		want = append(want, m)
		require.NoError(t, pub.Publish(ctx, m))
	}
	// Decoded equal, in publication order; membership keeps channel_id (MS-9).
	assert.Equal(t, want, a.waitFor(t, len(want)))
	assert.Equal(t, want, b.waitFor(t, len(want)))
	assert.Equal(t, authz.NewID('c', 1), a.got()[0].ChannelID)

	ps := pub.Metrics().Snapshot()
	assert.Equal(t, int64(4), ps[redisbus.MetricPublished])
	assert.Equal(t, int64(8), ps[redisbus.MetricDelivered], "two subscribers reached per message")
	for _, s := range []*redisbus.Subscriber{sa, sb} {
		snap := s.Metrics().Snapshot()
		assert.Equal(t, int64(4), snap[redisbus.MetricReceived])
		assert.Equal(t, int64(4), snap[redisbus.MetricApplied])
		assert.Equal(t, int64(1), snap[redisbus.MetricSubscribed])
		assert.Equal(t, int64(1), snap[redisbus.MetricSubscriptions])
	}
}

func TestMalformedMessagesAreLoggedAndDropped(t *testing.T) {
	ctx := ctxT(t)
	c := client(t)
	name := channel()
	var r recorder
	var logs syncBuffer
	s := subscribe(t, c, &r, redisbus.SubscriberConfig{Channel: name, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	bad := []string{
		`{`,
		`{"kind":"everything","community_id":"6b000000-0000-0000-0000-000000000001"}`,
		`{"kind":"membership","community_id":"6b000000-0000-0000-0000-000000000001"}`,
		strings.Repeat("x", 10_000),
	}
	for _, p := range bad {
		require.NoError(t, c.Publish(ctx, name, p).Err())
	}
	good := msg(authz.KindVisibility, 7)
	pub, _ := redisbus.NewPublisher(c, name)
	require.NoError(t, pub.Publish(ctx, good))
	assert.Equal(t, []authz.Message{good}, r.waitFor(t, 1), "malformed messages change nothing; the next good one applies")
	snap := s.Metrics().Snapshot()
	assert.Equal(t, int64(len(bad)), snap[redisbus.MetricMalformed])
	assert.Equal(t, int64(len(bad)+1), snap[redisbus.MetricReceived])
	assert.Equal(t, int64(1), snap[redisbus.MetricApplied])
	out := logs.String()
	assert.Equal(t, len(bad), strings.Count(out, "dropped malformed invalidation message"))
	assert.Less(t, len(out), 4_000, "a huge payload is logged truncated")
}

func TestPublishRejectsInvalidMessage(t *testing.T) {
	ctx := ctxT(t)
	c := client(t)
	name := channel()
	var r recorder
	s := subscribe(t, c, &r, redisbus.SubscriberConfig{Channel: name})
	pub, _ := redisbus.NewPublisher(c, name)
	err := pub.Publish(ctx, authz.Message{Kind: authz.KindMembership, CommunityID: authz.NewID('k', 1)})
	assert.ErrorContains(t, err, "needs user_id and channel_id")
	require.NoError(t, pub.Publish(ctx, msg(authz.KindAccessibleAll, 1)))
	assert.Len(t, r.waitFor(t, 1), 1)
	assert.Equal(t, int64(1), s.Metrics().Snapshot()[redisbus.MetricReceived], "nothing was sent for the invalid message")
	assert.Equal(t, int64(1), pub.Metrics().Snapshot()[redisbus.MetricPublishErrors])
}

// The cut used by the integration tests: while unsubscribed, messages are
// lost for good (Redis keeps nothing); after Resubscribe they flow again.
func TestUnsubscribeLosesMessagesUntilResubscribe(t *testing.T) {
	ctx := ctxT(t)
	c := client(t)
	name := channel()
	var cut, control recorder
	s := subscribe(t, c, &cut, redisbus.SubscriberConfig{Channel: name})
	subscribe(t, c, &control, redisbus.SubscriberConfig{Channel: name})
	pub, _ := redisbus.NewPublisher(c, name)

	require.NoError(t, s.Unsubscribe(ctx))
	assert.Equal(t, int64(0), s.Metrics().Snapshot()[redisbus.MetricSubscribed])
	lost := msg(authz.KindVisibility, 1)
	require.NoError(t, pub.Publish(ctx, lost))
	control.waitFor(t, 1) // delivered to the other relay, so it was sent

	require.NoError(t, s.Resubscribe(ctx))
	after := msg(authz.KindVisibility, 2)
	require.NoError(t, pub.Publish(ctx, after))
	assert.Equal(t, []authz.Message{after}, cut.waitFor(t, 1), "the message published during the cut is lost")
	snap := s.Metrics().Snapshot()
	assert.Equal(t, int64(1), snap[redisbus.MetricSubscribed])
	assert.Equal(t, int64(2), snap[redisbus.MetricSubscriptions])
}

// A killed connection is re-dialled and resubscribed by itself.
func TestResubscribesAfterConnectionKilled(t *testing.T) {
	ctx := ctxT(t)
	c := client(t)
	name := channel()
	var r recorder
	s := subscribe(t, c, &r, redisbus.SubscriberConfig{Channel: name, HealthCheck: 100 * time.Millisecond})
	require.NoError(t, c.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err())
	pub, _ := redisbus.NewPublisher(c, name)
	probe := msg(authz.KindAccessibleAll, 1)
	require.Eventually(t, func() bool {
		_ = pub.Publish(ctx, probe)
		return len(r.got()) > 0
	}, 10*time.Second, 50*time.Millisecond, "no message after the connection was killed")
	assert.GreaterOrEqual(t, s.Metrics().Snapshot()[redisbus.MetricSubscriptions], int64(2))
}

// A connection that goes silent without closing (a dropped network path)
// is noticed by the unanswered ping and replaced.
func TestReplacesSilentConnection(t *testing.T) {
	ctx := ctxT(t)
	direct := client(t)
	proxy := newFreezer(t, direct.Options().Addr)
	opts := *direct.Options()
	opts.Addr = proxy.addr()
	viaProxy := redis.NewClient(&opts)
	t.Cleanup(func() { _ = viaProxy.Close() })
	name := channel()
	var r recorder
	var logs syncBuffer
	s := subscribe(t, viaProxy, &r, redisbus.SubscriberConfig{Channel: name, HealthCheck: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	proxy.freeze()
	pub, _ := redisbus.NewPublisher(direct, name)
	probe := msg(authz.KindAccessibleAll, 1)
	require.Eventually(t, func() bool {
		_ = pub.Publish(ctx, probe)
		return len(r.got()) > 0
	}, 10*time.Second, 50*time.Millisecond, "the frozen subscription was never replaced")
	assert.Contains(t, logs.String(), "did not answer a ping")
	assert.GreaterOrEqual(t, s.Metrics().Snapshot()[redisbus.MetricSubscriptions], int64(2))
}

func TestCloseStopsTheSubscriber(t *testing.T) {
	ctx := ctxT(t)
	c := client(t)
	name := channel()
	var r recorder
	s, err := redisbus.Subscribe(ctx, c, &r, redisbus.SubscriberConfig{Channel: name})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	select {
	case <-s.Done():
	default:
		t.Fatal("Close returned before the goroutine stopped")
	}
	require.NoError(t, s.Close(), "Close is idempotent")
	pub, _ := redisbus.NewPublisher(c, name)
	require.NoError(t, pub.Publish(ctx, msg(authz.KindAccessibleAll, 1)))
	assert.Equal(t, int64(0), pub.Metrics().Snapshot()[redisbus.MetricDelivered], "the subscription is gone from Redis")
	assert.Error(t, s.Unsubscribe(ctx))
	assert.Error(t, s.Resubscribe(ctx))
	assert.Empty(t, r.got())
}

// These need no server.

func TestSubscribeFailsWhenRedisIsUnreachable(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := redisbus.Subscribe(ctx, c, &recorder{}, redisbus.SubscriberConfig{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), redisbus.DefaultChannel)
	assert.Less(t, time.Since(start), 3*time.Second)
	pub, err := redisbus.NewPublisher(c, "")
	require.NoError(t, err)
	assert.Error(t, pub.Publish(ctx, msg(authz.KindAccessibleAll, 1)))
	assert.Equal(t, int64(1), pub.Metrics().Snapshot()[redisbus.MetricPublishErrors])
}

func TestBadArguments(t *testing.T) {
	_, err := redisbus.NewPublisher(nil, "x")
	assert.Error(t, err)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	_, err = redisbus.Subscribe(context.Background(), nil, &recorder{}, redisbus.SubscriberConfig{})
	assert.Error(t, err)
	_, err = redisbus.Subscribe(context.Background(), c, nil, redisbus.SubscriberConfig{})
	assert.Error(t, err)
	_, err = redisbus.Subscribe(context.Background(), c, &recorder{}, redisbus.SubscriberConfig{HealthCheck: -1})
	assert.Error(t, err)
}

func TestFanoutAppliesToEveryCache(t *testing.T) {
	var a, b recorder
	m := msg(authz.KindMembership, 3)
	redisbus.Fanout{&a, &b}.Invalidate(m)
	assert.Equal(t, []authz.Message{m}, a.got())
	assert.Equal(t, []authz.Message{m}, b.got())
}
