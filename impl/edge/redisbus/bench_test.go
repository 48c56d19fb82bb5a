package redisbus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/edge/redisbus"
)

// signal is an Invalidator that wakes the benchmark on each message.
type signal struct{ ch chan struct{} }

func (s *signal) Invalidate(authz.Message) { s.ch <- struct{}{} }

// How long an invalidation takes from Publish to being applied on another
// relay. Baseline: one Redis round trip (PING) on the same client.
func BenchmarkInvalidationDelivery(b *testing.B) {
	c := client(b)
	ctx := b.Context()
	b.Run("baseline=ping_round_trip", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, c.Ping(ctx).Err())
		}
	})
	b.Run("publish_to_apply", func(b *testing.B) {
		name := channel()
		sig := &signal{ch: make(chan struct{}, 1)}
		sub, err := redisbus.Subscribe(ctx, c, sig, redisbus.SubscriberConfig{Channel: name})
		require.NoError(b, err)
		defer sub.Close()
		pub, err := redisbus.NewPublisher(c, name)
		require.NoError(b, err)
		m := msg(authz.KindMembership, 1)
		for b.Loop() {
			require.NoError(b, pub.Publish(ctx, m))
			<-sig.ch
		}
	})
}
