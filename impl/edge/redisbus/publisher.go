package redisbus

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// DefaultChannel is the Redis pub/sub channel invalidations travel on when
// no other is configured.
const DefaultChannel = "windtunnel:authz:invalidations"

// Publisher metric names.
const (
	MetricPublished     = "invalidation_bus_published_total"
	MetricPublishErrors = "invalidation_bus_publish_errors_total"
	// MetricDelivered sums, over published messages, the number of
	// subscribers Redis handed each one to (PUBLISH's reply). Zero for a
	// message means no relay was listening.
	MetricDelivered = "invalidation_bus_delivered_total"
)

// Publisher sends invalidation messages to every relay subscribed to its
// channel (authz.Publisher). Redis pub/sub is fire-and-forget: a relay that
// is disconnected or unsubscribed at that moment never sees the message,
// which is why both caches bound their staleness on their own (OC-2, MS-2).
// It is safe for concurrent use.
type Publisher struct {
	client  redis.UniversalClient
	channel string

	reg                    stats.Registry
	published, errs, deliv stats.Counter
}

var _ authz.Publisher = (*Publisher)(nil)

// NewPublisher returns a Publisher on client and channel ("" means
// DefaultChannel). The client stays the caller's to close.
func NewPublisher(client redis.UniversalClient, channel string) (*Publisher, error) {
	if client == nil {
		return nil, fmt.Errorf("redisbus: nil Redis client")
	}
	if channel == "" {
		channel = DefaultChannel
	}
	p := &Publisher{client: client, channel: channel}
	p.reg.Counter(MetricPublished, "Invalidation messages published.", &p.published)
	p.reg.Counter(MetricPublishErrors, "Invalidation messages that could not be published (invalid or Redis error).", &p.errs)
	p.reg.Counter(MetricDelivered, "Subscribers reached, summed over published messages.", &p.deliv)
	return p, nil
}

// Publish encodes m (authz.Message.Encode: an invalid message is an error
// and nothing is sent) and publishes it. It returns Redis's error, or ctx's
// when ctx ends first. A nil error means Redis accepted the message, not
// that any relay received it.
func (p *Publisher) Publish(ctx context.Context, m authz.Message) error {
	b, err := m.Encode()
	if err != nil {
		p.errs.Inc()
		return fmt.Errorf("redisbus: publish: %w", err)
	}
	n, err := p.client.Publish(ctx, p.channel, b).Result()
	if err != nil {
		p.errs.Inc()
		return fmt.Errorf("redisbus: publish to %q: %w", p.channel, err)
	}
	p.published.Inc()
	p.deliv.Add(n)
	return nil
}

// Channel returns the Redis channel the Publisher publishes on.
func (p *Publisher) Channel() string { return p.channel }

// Metrics returns the Publisher's counters.
func (p *Publisher) Metrics() *stats.Registry { return &p.reg }
