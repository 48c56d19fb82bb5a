// Package redisbus carries the authorization caches' invalidation messages
// between relays over Redis pub/sub, as the seeds' relays do.
//
// A relay that changes authorization state (a membership granted or removed,
// a channel made private, unlisted or deleted) applies the invalidation to
// its own caches and publishes it. Every other relay receives it and applies
// it to theirs:
//
//	pub, _ := redisbus.NewPublisher(client, "")          // authz.Publisher
//	sub, _ := redisbus.Subscribe(ctx, client,
//		redisbus.Fanout{openCache, membershipCache},   // authz.Invalidator
//		redisbus.SubscriberConfig{})
//	defer sub.Close()
//	...
//	_ = pub.Publish(ctx, authz.Message{Kind: authz.KindVisibility, CommunityID: k, ChannelID: ch})
//
// The wire form is authz.Message's JSON encoding; membership messages keep
// channel_id for relays of the previous version (MS-9). A message that does
// not decode is logged through the configured slog.Logger, counted
// (invalidation_bus_malformed_total) and dropped.
//
// # Delivery is best effort
//
// Redis pub/sub does not store messages. A relay that is disconnected, or
// whose subscription is cut, when a message is published never receives it.
// The subscriber reconnects and resubscribes by itself: go-redis does the
// reconnect, and a silent connection is pinged every HealthCheck and replaced
// when a ping goes unanswered. But what was published in the gap is gone.
// That is the loss the seeds designed for. The open-channel set is then
// served for at most OPEN_CHANNELS_MAX_AGE (1 s) after its read began (OC-2).
// A membership snapshot is served for at most 10 s after its connection
// checkout (MS-2, MS-10). Unsubscribe and Resubscribe cut and restore the
// subscription on purpose. That is how the integration tests in
// impl/edge/integration produce a lost invalidation on real Redis.
//
// # Metrics
//
// Publisher.Metrics and Subscriber.Metrics return stats registries with the
// invalidation_bus_* counters documented on the Metric constants.
//
// This package is at the edge of the runtime seam, like impl/rt: it runs
// real goroutines and talks to the network, is never run by the simulator,
// and is exempt from the determinism contract. The simulated bus in sim
// models what it does.
package redisbus
