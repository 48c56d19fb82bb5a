package simbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/internal/protocol"
	"github.com/windtunnel/windtunnel/sim/record"
)

// Defaults of a Config.
const (
	// DefaultQueueLen bounds one subscriber's messages in flight or queued.
	// Redis cuts off a pub/sub client whose output buffer passes its limit
	// (32 MB hard by default); with invalidations of a few hundred bytes
	// this is well below that, and far above what a healthy relay holds.
	DefaultQueueLen = 10_000
	// DefaultMaxMessages bounds the messages one bus may carry in a run, so
	// that the records checkers read stay bounded.
	DefaultMaxMessages = 1 << 20
)

// ErrClosed is returned by Publish and Subscribe on a closed bus.
var ErrClosed = errors.New("simbus: bus closed")

// Config is a bus's defaults and limits.
type Config struct {
	// Faults apply to every subscriber made with Subscribe (each draws its
	// own losses, delays and gaps). SubscribeWith overrides them.
	Faults Faults
	// QueueLen bounds each subscriber's messages in flight or queued (0:
	// DefaultQueueLen); a message that finds the queue full is lost with
	// CauseOverflow. Publish never blocks.
	QueueLen int
	// MaxMessages bounds the messages published on the bus (0:
	// DefaultMaxMessages); the run fails past it.
	MaxMessages int
	// PublishHook, if set, may fail, slow down or cancel particular
	// publishes (a Redis PUBLISH that errors or stalls). See PublishFault.
	PublishHook func(from string) PublishFault
}

// PublishFault is what a PublishHook decides for one publish, once the
// message reaches the server. Before runs first, at that instant (it may
// cancel the publisher's context or start other tasks). Latency is then
// spent before the message is sent, and a context that ends meanwhile fails
// the publish with its error. Err fails it after that. A failed publish
// sends nothing. Each is an injected fault a shrinker may drop
// (sim.Keep(sim.KeepFault)).
type PublishFault struct {
	Err     error
	Latency time.Duration
	Before  func()
}

// Validate reports the first problem with c, or nil.
func (c Config) Validate() error {
	if c.QueueLen < 0 {
		return fmt.Errorf("simbus: QueueLen must not be negative, got %d", c.QueueLen)
	}
	if c.MaxMessages < 0 {
		return fmt.Errorf("simbus: MaxMessages must not be negative, got %d", c.MaxMessages)
	}
	return c.Faults.Validate()
}

// Bus is a simulated Redis-like pub/sub channel carrying messages of type M
// to subscribers, each over its own faulty link. It belongs to one sim run:
// create it inside the run and use it from that run's tasks.
type Bus[M any] struct {
	s         *sim.Sim
	cfg       Config
	subs      []*Subscriber[M]
	published uint64
	closed    bool
}

// New returns a bus with no subscribers.
func New[M any](s *sim.Sim, cfg Config) (*Bus[M], error) {
	if s == nil {
		return nil, fmt.Errorf("simbus: New needs the run's *sim.Sim")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.QueueLen == 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	if cfg.MaxMessages == 0 {
		cfg.MaxMessages = DefaultMaxMessages
	}
	cfg.Faults.Partitions = slices.Clone(cfg.Faults.Partitions)
	return &Bus[M]{s: s, cfg: cfg}, nil
}

// Subscribe adds a subscriber with the bus's default Faults. See
// SubscribeWith.
func (b *Bus[M]) Subscribe(name string, handler func(M)) (*Subscriber[M], error) {
	return b.SubscribeWith(name, b.cfg.Faults, handler)
}

// SubscribeWith adds a subscriber whose link has faults f. It receives the
// messages published from now on; its delivery task (named "simbus <name>")
// calls handler with each message in order of arrival, one at a time. It is
// a scheduling point (the task starts). Names must be unique and non-empty.
func (b *Bus[M]) SubscribeWith(name string, f Faults, handler func(M)) (*Subscriber[M], error) {
	switch {
	case b.closed:
		return nil, ErrClosed
	case handler == nil:
		return nil, fmt.Errorf("simbus: subscriber %q has a nil handler", name)
	case name == "" || strings.ContainsAny(name, "\n"):
		return nil, fmt.Errorf("simbus: subscriber name %q is empty or has a newline", name)
	case slices.ContainsFunc(b.subs, func(x *Subscriber[M]) bool { return x.name == name }):
		return nil, fmt.Errorf("simbus: subscriber %q exists", name)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("simbus: subscriber %q: %w", name, err)
	}
	f.Partitions = slices.Clone(f.Partitions)
	s := b.s
	sub := &Subscriber[M]{
		bus: b, name: name, faults: f, handler: handler,
		// Each partition window is a fault a shrinker may drop.
		out: newOutages(f, s.Elapsed(), func(w Window) bool {
			if !s.Keep(sim.KeepFault) {
				return false
			}
			if s.Recording() {
				s.Injected("simbus %s partitioned during %v", name, w)
			}
			return true
		}),
		m:    newMetrics(),
		idle: s.NewEvent("simbus idle " + name),
	}
	b.subs = append(b.subs, sub)
	b.s.Tracef("simbus %s subscribed: %v", name, f)
	b.s.Go("simbus "+name, sub.run)
	return sub, nil
}

// Subscribers returns the subscribers, in subscription order.
func (b *Bus[M]) Subscribers() []*Subscriber[M] { return slices.Clone(b.subs) }

// Published returns how many messages were published.
func (b *Bus[M]) Published() int { return int(b.published) }

// Publish sends m to every current subscriber and returns at once: it never
// waits for delivery (Redis PUBLISH returns when the message is queued). It
// is a scheduling point. Each subscriber's fate for m (lost with a cause,
// or due at an arrival instant, maybe twice) is decided here, from the
// world's random source, and traced. It fails when ctx has ended or the bus
// is closed.
func (b *Bus[M]) Publish(ctx context.Context, from string, m M) error {
	s := b.s
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.closed {
		return ErrClosed
	}
	s.Yield() // the message travels to the server: others may publish first
	if err := b.publishFault(ctx, from); err != nil {
		return err
	}
	if b.closed {
		return ErrClosed
	}
	if b.published >= uint64(b.cfg.MaxMessages) {
		s.Failf("simbus: message limit of %d exceeded (raise Config.MaxMessages)", b.cfg.MaxMessages)
	}
	b.published++
	seq := b.published
	now := s.Now()
	if s.Recording() {
		protocol.Message(s, record.EventSend, int64(seq), from, "#%d from %s: %s", seq, from, describe(m))
	}
	// Each delivery's draws and faults belong to the publishing operation
	// (protocol.Inside): a shrinker that drops it moves no other one's.
	in := protocol.Inside(s)
	for _, sub := range b.subs {
		if !sub.closed {
			sub.offer(seq, from, m, now)
		}
	}
	in.End()
	return nil
}

// publishFault applies the PublishHook's fault to one publish.
func (b *Bus[M]) publishFault(ctx context.Context, from string) error {
	if b.cfg.PublishHook == nil {
		return nil
	}
	s := b.s
	f := b.cfg.PublishHook(from)
	if f.Before != nil {
		f.Before()
	}
	if f.Latency > 0 && s.Keep(sim.KeepFault) {
		if s.Recording() {
			s.Injected("publish from %s: the hook stalls it %v", from, f.Latency)
		}
		if err := s.Sleep(ctx, f.Latency); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.Err != nil && s.Keep(sim.KeepFault) {
		if s.Recording() {
			s.Injected("publish from %s: fails: %v", from, f.Err)
		}
		return f.Err
	}
	return nil
}

// Close closes every subscriber (see Subscriber.Close) and refuses further
// publishes and subscriptions.
func (b *Bus[M]) Close() {
	b.closed = true
	for _, sub := range b.subs {
		sub.Close()
	}
}

// Records returns every subscriber's records, keyed by subscriber name.
func (b *Bus[M]) Records() map[string][]Record[M] {
	out := make(map[string][]Record[M], len(b.subs))
	for _, sub := range b.subs {
		out[sub.name] = sub.Records()
	}
	return out
}

// describe renders a message for the run's record: a wire form as its
// text, anything else as %v.
func describe(m any) string {
	const max = 160
	var text string
	switch v := m.(type) {
	case []byte:
		text = string(v)
	case string:
		text = v
	default:
		text = fmt.Sprintf("%v", v)
	}
	if len(text) > max {
		text = text[:max] + "…"
	}
	return text
}

// elapsed converts an instant to virtual ns since the epoch.
func elapsed(t time.Time) int64 { return int64(t.Sub(sim.Epoch)) }
