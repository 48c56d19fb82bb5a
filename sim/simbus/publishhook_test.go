package simbus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// TestPublishReachesThePublishersOwnSubscription: a subscriber named like
// the publisher gets its own messages, as a relay subscribed to Redis does
// (the pods world relies on it: each pod's relay receives what it sent).
func TestPublishReachesThePublishersOwnSubscription(t *testing.T) {
	var r result
	run(t, 1, func(s *sim.Sim) {
		w := newWorld(s, simbus.Config{})
		w.subscribe("pod0", simbus.Reliable())
		w.subscribe("pod1", simbus.Reliable())
		w.publish("pod0")
		_ = s.Sleep(bg, time.Second)
		r = w.result()
	})
	require.Len(t, r.calls["pod0"], 1, "the publisher's own subscription")
	require.Len(t, r.calls["pod1"], 1)
}

// TestPublishHookFailsSlowsAndCancels: a hook's error fails the publish and
// sends nothing; its latency delays the send; a context it cancels fails
// the publish with the context's error, also during the latency.
func TestPublishHookFailsSlowsAndCancels(t *testing.T) {
	boom := errors.New("boom")
	var r result
	var errs []error
	var sentAt []time.Duration
	run(t, 1, func(s *sim.Sim) {
		var next simbus.PublishFault
		w := newWorld(s, simbus.Config{PublishHook: func(string) simbus.PublishFault { return next }})
		w.subscribe("pod0", simbus.Reliable())
		pub := func(f simbus.PublishFault, ctx context.Context) {
			next = f
			w.ids++
			errs = append(errs, w.bus.Publish(ctx, "pod0", msg{w.ids}))
			sentAt = append(sentAt, s.Elapsed())
		}
		pub(simbus.PublishFault{Err: boom}, bg)
		pub(simbus.PublishFault{Latency: 300 * time.Millisecond}, bg)
		ctx, cancel := s.WithCancel(bg)
		pub(simbus.PublishFault{Before: cancel}, ctx)
		ctx, cancel = s.WithCancel(bg)
		s.Go("canceller", func() { _ = s.Sleep(bg, 100*time.Millisecond); cancel() })
		pub(simbus.PublishFault{Latency: 300 * time.Millisecond}, ctx)
		_ = s.Sleep(bg, time.Second)
		r = w.result()
	})
	require.ErrorIs(t, errs[0], boom)
	require.NoError(t, errs[1])
	require.ErrorIs(t, errs[2], context.Canceled)
	require.ErrorIs(t, errs[3], context.Canceled)
	require.Equal(t, 300*time.Millisecond, sentAt[1])
	require.Equal(t, 400*time.Millisecond, sentAt[3], "a cancel during the latency ends the publish then")
	require.Len(t, r.calls["pod0"], 1, "only the slow publish was sent")
	require.Equal(t, 2, r.calls["pod0"][0].id)
	require.Equal(t, 300*time.Millisecond, r.calls["pod0"][0].at)
}
