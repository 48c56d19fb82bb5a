package redisbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// Subscriber defaults.
const (
	// DefaultHealthCheck is how long the subscription may be silent before
	// the subscriber pings Redis; a ping with no reply within another
	// DefaultHealthCheck means the connection is dead, and it is replaced.
	// go-redis's own channel helper pings every 3 s.
	DefaultHealthCheck = 3 * time.Second

	// DefaultMaxBackoff caps the wait between attempts to reach Redis after
	// an error. The wait starts at minBackoff and doubles.
	DefaultMaxBackoff = 5 * time.Second

	// DefaultStartTimeout bounds Subscribe's wait for Redis to confirm the
	// subscription when the caller's context has no deadline.
	DefaultStartTimeout = 10 * time.Second

	minBackoff = 50 * time.Millisecond

	// maxLoggedPayload bounds how much of a malformed message is logged.
	maxLoggedPayload = 256
)

// Subscriber metric names.
const (
	MetricReceived      = "invalidation_bus_received_total"
	MetricApplied       = "invalidation_bus_applied_total"
	MetricMalformed     = "invalidation_bus_malformed_total"
	MetricReceiveErrors = "invalidation_bus_receive_errors_total"
	// MetricSubscriptions counts subscriptions Redis confirmed: the first,
	// and every one after a reconnect or Resubscribe. Messages published
	// between a connection's loss and the next confirmation are lost.
	MetricSubscriptions = "invalidation_bus_subscriptions_total"
	// MetricSubscribed is 1 while the channel is subscribed, else 0.
	MetricSubscribed = "invalidation_bus_subscribed"
)

// SubscriberConfig tunes a Subscriber. The zero value means every default.
type SubscriberConfig struct {
	// Channel is the Redis channel to listen on; "" means DefaultChannel.
	Channel string
	// Logger receives malformed messages and connection trouble; nil means
	// slog.Default().
	Logger *slog.Logger
	// HealthCheck: see DefaultHealthCheck. 0 means the default.
	HealthCheck time.Duration
	// MaxBackoff: see DefaultMaxBackoff. 0 means the default.
	MaxBackoff time.Duration
}

// Subscriber receives invalidation messages from a Redis channel and
// applies each to an authz.Invalidator, on one goroutine, in the order Redis
// delivers them. A message that does not decode (authz.DecodeMessage) is
// logged, counted and dropped: it changes nothing.
//
// Delivery is best effort, as in the seeds. Messages are lost while the
// connection is down (go-redis reconnects and resubscribes on its own) or the
// subscription is cut (Unsubscribe). The caches' staleness bounds are what
// limits the damage (OC-2, MS-2, MS-10).
//
// Close stops the goroutine. All methods are safe for concurrent use.
type Subscriber struct {
	client  redis.UniversalClient
	channel string
	inv     authz.Invalidator
	cfg     SubscriberConfig
	log     *slog.Logger

	stop chan struct{} // closed by Close
	done chan struct{} // closed when the loop has returned

	mu      sync.Mutex
	ps      *redis.PubSub // replaced when a connection is found dead
	want    bool          // whether the channel should be subscribed
	closed  bool
	waiters []waiter // Unsubscribe/Resubscribe waiting for Redis's reply

	reg                                         stats.Registry
	received, applied, malformed, errs, confirm stats.Counter
	subscribed                                  stats.Gauge
}

type waiter struct {
	kind string // "subscribe" or "unsubscribe"
	ch   chan struct{}
}

// Subscribe subscribes to cfg.Channel on client and returns once Redis has
// confirmed the subscription: every message published after Subscribe
// returns reaches inv (unless the connection is lost meanwhile). It fails
// when Redis cannot be reached before ctx ends (or DefaultStartTimeout, if
// ctx has no deadline). The client stays the caller's to close, after the
// Subscriber.
func Subscribe(ctx context.Context, client redis.UniversalClient, inv authz.Invalidator, cfg SubscriberConfig) (*Subscriber, error) {
	switch {
	case client == nil:
		return nil, errors.New("redisbus: nil Redis client")
	case inv == nil:
		return nil, errors.New("redisbus: nil Invalidator")
	case cfg.HealthCheck < 0 || cfg.MaxBackoff < 0:
		return nil, fmt.Errorf("redisbus: negative HealthCheck (%v) or MaxBackoff (%v)", cfg.HealthCheck, cfg.MaxBackoff)
	}
	if cfg.Channel == "" {
		cfg.Channel = DefaultChannel
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HealthCheck == 0 {
		cfg.HealthCheck = DefaultHealthCheck
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	ps := client.Subscribe(ctx, cfg.Channel)
	if err := confirm(ctx, ps, "subscribe"); err != nil {
		_ = ps.Close()
		return nil, fmt.Errorf("redisbus: subscribe to %q: %w", cfg.Channel, err)
	}
	s := &Subscriber{client: client, channel: cfg.Channel, inv: inv, cfg: cfg, log: cfg.Logger,
		stop: make(chan struct{}), done: make(chan struct{}), ps: ps, want: true}
	s.reg.Counter(MetricReceived, "Messages received on the invalidation channel.", &s.received)
	s.reg.Counter(MetricApplied, "Messages decoded and applied to the caches.", &s.applied)
	s.reg.Counter(MetricMalformed, "Messages dropped because they did not decode.", &s.malformed)
	s.reg.Counter(MetricReceiveErrors, "Errors reading from Redis (each followed by a backoff and a retry).", &s.errs)
	s.reg.Counter(MetricSubscriptions, "Subscriptions Redis confirmed (first, after reconnects, after Resubscribe).", &s.confirm)
	s.reg.Gauge(MetricSubscribed, "1 while the invalidation channel is subscribed.", &s.subscribed)
	s.confirm.Inc()
	s.subscribed.Set(1)
	go s.loop()
	return s, nil
}

// confirm reads replies until Redis confirms kind ("subscribe"). Used only
// before the loop starts, when nothing else reads.
func confirm(ctx context.Context, ps *redis.PubSub, kind string) error {
	for range 16 { // a fresh connection has nothing else queued; bound anyway
		msg, err := ps.Receive(ctx)
		if err != nil {
			return err
		}
		if sub, ok := msg.(*redis.Subscription); ok && sub.Kind == kind {
			return nil
		}
	}
	return fmt.Errorf("no %s confirmation from Redis", kind)
}

// loop reads and applies messages until Close. Each iteration blocks in a
// read bounded by HealthCheck, so the loop runs for the Subscriber's life
// without spinning.
func (s *Subscriber) loop() {
	defer close(s.done)
	backoff := minBackoff
	pingPending := false
	for {
		ps, ok := s.current()
		if !ok {
			return
		}
		msg, err := ps.ReceiveTimeout(context.Background(), s.cfg.HealthCheck)
		if s.isStopped() {
			return
		}
		if err != nil {
			if isTimeout(err) {
				if pingPending {
					// The last ping got no reply in a whole HealthCheck:
					// the connection is dead without having said so.
					s.errs.Inc()
					s.log.Warn("redisbus: Redis did not answer a ping; replacing the connection",
						"channel", s.channel, "after", 2*s.cfg.HealthCheck)
					s.replace(ps)
					pingPending = false
					continue
				}
				pctx, cancel := context.WithTimeout(context.Background(), s.cfg.HealthCheck)
				perr := ps.Ping(pctx) // the reply arrives through ReceiveTimeout
				cancel()
				pingPending = perr == nil
				continue
			}
			s.errs.Inc()
			s.log.Warn("redisbus: receive failed; retrying (messages published meanwhile are lost)",
				"channel", s.channel, "error", err, "backoff", backoff)
			select {
			case <-s.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, s.cfg.MaxBackoff)
			continue
		}
		backoff = minBackoff
		pingPending = false
		switch m := msg.(type) {
		case *redis.Message:
			s.handle(m.Payload)
		case *redis.Subscription:
			s.onSubscription(m)
		case *redis.Pong:
			// The connection is alive.
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (s *Subscriber) handle(payload string) {
	s.received.Inc()
	m, err := authz.DecodeMessage([]byte(payload))
	if err != nil {
		s.malformed.Inc()
		if len(payload) > maxLoggedPayload {
			payload = payload[:maxLoggedPayload] + "..."
		}
		s.log.Warn("redisbus: dropped malformed invalidation message",
			"channel", s.channel, "error", err, "payload", payload)
		return
	}
	s.inv.Invalidate(m)
	s.applied.Inc()
}

func (s *Subscriber) onSubscription(sub *redis.Subscription) {
	if sub.Channel != s.channel {
		return
	}
	switch sub.Kind {
	case "subscribe":
		s.confirm.Inc()
		s.subscribed.Set(1)
		s.log.Info("redisbus: subscribed (messages published while unsubscribed were lost)", "channel", s.channel)
	case "unsubscribe":
		s.subscribed.Set(0)
	}
	s.mu.Lock()
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if w.kind == sub.Kind {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	s.waiters = kept
	s.mu.Unlock()
}

func (s *Subscriber) current() (*redis.PubSub, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ps, !s.closed
}

func (s *Subscriber) isStopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// replace closes a dead PubSub and opens a new one, subscribed if the
// channel should be. The new subscription's confirmation arrives through
// the loop.
func (s *Subscriber) replace(old *redis.PubSub) {
	s.mu.Lock()
	if s.closed || s.ps != old {
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.HealthCheck)
	defer cancel()
	if s.want {
		s.ps = s.client.Subscribe(ctx, s.channel)
	} else {
		s.ps = s.client.Subscribe(ctx)
	}
	s.subscribed.Set(0)
	s.mu.Unlock()
	_ = old.Close()
}

// Unsubscribe cuts the subscription until Resubscribe: messages published
// meanwhile are lost to this relay, exactly like messages lost by Redis
// pub/sub in production. It returns once Redis has confirmed, so a message
// published after it returns is not delivered. Tests use it to simulate a
// lost invalidation; a service can use it to drain.
func (s *Subscriber) Unsubscribe(ctx context.Context) error {
	return s.change(ctx, "unsubscribe", false)
}

// Resubscribe undoes Unsubscribe and returns once Redis has confirmed: a
// message published after it returns is delivered.
func (s *Subscriber) Resubscribe(ctx context.Context) error {
	return s.change(ctx, "subscribe", true)
}

func (s *Subscriber) change(ctx context.Context, kind string, want bool) error {
	w := waiter{kind: kind, ch: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("redisbus: subscriber is closed")
	}
	s.want = want
	ps := s.ps
	// Register before sending, so the reply cannot be missed.
	s.waiters = append(s.waiters, w)
	s.mu.Unlock()
	var err error
	if want {
		err = ps.Subscribe(ctx, s.channel)
	} else {
		err = ps.Unsubscribe(ctx, s.channel)
	}
	if err == nil {
		select {
		case <-w.ch:
			return nil
		case <-ctx.Done():
			err = ctx.Err()
		case <-s.done:
			err = errors.New("subscriber closed")
		}
	}
	s.dropWaiter(w)
	return fmt.Errorf("redisbus: %s %q: %w", kind, s.channel, err)
}

func (s *Subscriber) dropWaiter(w waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.waiters {
		if x.ch == w.ch {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return
		}
	}
}

// Channel returns the Redis channel the Subscriber listens on.
func (s *Subscriber) Channel() string { return s.channel }

// Metrics returns the Subscriber's counters.
func (s *Subscriber) Metrics() *stats.Registry { return &s.reg }

// Done is closed when the Subscriber's goroutine has stopped (after Close).
func (s *Subscriber) Done() <-chan struct{} { return s.done }

// Close stops receiving, closes the subscription's connection and waits
// for the goroutine to return. No Invalidate call starts after Close
// returns. While Redis is unreachable, Close may wait for a dial in
// progress (the client's DialTimeout, 5 s by default). It is idempotent and
// does not close the Redis client.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return nil
	}
	s.closed = true
	close(s.stop)
	ps := s.ps
	s.mu.Unlock()
	_ = ps.Close() // unblocks the loop's read
	<-s.done
	s.subscribed.Set(0)
	return nil
}
