// Package relay is a relay's authorization wiring. It holds the two caches
// (accessible channels, impl/accesschannels; membership snapshots,
// impl/membership) over one database pool. It holds the write path that
// invalidates them after a committed change and tells the other relays, and
// the receiving path that applies what the others send.
//
// A change is made in the database first. Then Changed invalidates this
// relay's caches, so its own next read sees the change, and publishes the
// invalidation. Delivery is best effort (Redis pub/sub, or the simulated
// bus). The caches' time bounds (1 s for an open set, 10 s for the member
// half and for membership snapshots) are what limit a lost message's effect.
// On the receiving side, Invalidate (an authz.Invalidator) fans a message out
// to both caches, each of which decides what it drops. Receive does the same
// for a message still in its wire form, counting and dropping a malformed
// one.
//
// The same code runs in a service (rt.Real(), impl/edge/pgstore,
// impl/edge/redisbus: the integration tests), in the simulated pods of
// scenarios/world/pods, and in this package's tests.
package relay

import (
	"context"
	"errors"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/impl/stats"
)

// Config configures both caches; zero values take the source texts'
// defaults.
type Config struct {
	OC accesschannels.Config
	MS membership.Config
}

// Metric names of the wiring (the caches export their own).
const (
	MetricChanged       = "relay_invalidations_changed_total" // applied locally after a write
	MetricPublishErrors = "relay_invalidation_publish_errors_total"
	MetricReceived      = "relay_invalidations_received_total"  // applied from another relay
	MetricMalformed     = "relay_invalidations_malformed_total" // dropped: could not be decoded
)

// Relay is one relay's caches and invalidation paths. Its methods are safe
// for concurrent use as far as the caches' are.
type Relay struct {
	// OC answers accessible-channel lookups; MS answers membership checks.
	OC *accesschannels.Cache
	MS *membership.Cache

	pub                                         authz.Publisher
	reg                                         stats.Registry
	changed, publishErrors, received, malformed stats.Counter
}

var _ authz.Invalidator = (*Relay)(nil)

// New builds a relay's caches over pool. pub tells the other relays about
// changes; nil means this relay is alone (invalidations stay local).
func New(r rt.Runtime, pool authz.Pool, pub authz.Publisher, cfg Config) (*Relay, error) {
	if r == nil || pool == nil {
		return nil, errors.New("relay: New needs a runtime and a pool")
	}
	oc, err := accesschannels.New(r, pool, cfg.OC)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	ms, err := membership.New(r, pool, cfg.MS)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	rl := &Relay{OC: oc, MS: ms, pub: pub}
	rl.reg.Counter(MetricChanged, "Invalidations applied locally after a committed change.", &rl.changed)
	rl.reg.Counter(MetricPublishErrors, "Invalidations that could not be published to the other relays.", &rl.publishErrors)
	rl.reg.Counter(MetricReceived, "Invalidations received from other relays and applied.", &rl.received)
	rl.reg.Counter(MetricMalformed, "Received invalidations dropped because they could not be decoded.", &rl.malformed)
	return rl, nil
}

// Changed is the write path after a change committed in the database. It
// drops what the change makes stale from this relay's caches, then publishes
// the invalidation to the other relays. The local drop comes first so that
// this relay's next read sees the change even when the publish fails or is
// slow. A failed publish is returned (and counted); the other relays then
// learn of the change only through their time bounds.
func (r *Relay) Changed(ctx context.Context, m authz.Message) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	r.Invalidate(m)
	r.changed.Inc()
	if r.pub == nil {
		return nil
	}
	if err := r.pub.Publish(ctx, m); err != nil {
		r.publishErrors.Inc()
		return fmt.Errorf("relay: publishing %s invalidation: %w", m.Kind, err)
	}
	return nil
}

// Invalidate applies one invalidation to both caches: the receiving
// fan-out. Each cache drops what the message concerns (accessible channels:
// OC-5; membership: MS-9).
func (r *Relay) Invalidate(m authz.Message) {
	r.OC.Invalidate(m)
	r.MS.Invalidate(m)
}

// Receive decodes an invalidation in its wire form and applies it. A
// malformed message changes nothing: it is counted and its error returned,
// for the transport to log (the error quotes at most a short prefix of the
// message).
func (r *Relay) Receive(b []byte) error {
	m, err := authz.DecodeMessage(b)
	if err != nil {
		r.malformed.Inc()
		return err
	}
	r.Invalidate(m)
	r.received.Inc()
	return nil
}

// Metrics returns the wiring's counters.
func (r *Relay) Metrics() *stats.Registry { return &r.reg }
