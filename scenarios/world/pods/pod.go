package pods

import (
	"context"
	"fmt"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/impl/relay"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// Pod is one relay: the production wiring (impl/relay: both caches over the
// shared database, the write path that invalidates locally and publishes,
// the receiving fan-out), fed by its own subscription to the invalidation
// bus.
type Pod struct {
	ID   int
	Name string
	// Relay is the pod's production wiring; OC and MS are its caches.
	Relay *relay.Relay
	OC    *accesschannels.Cache
	MS    *membership.Cache
	Sub   *simbus.Subscriber[[]byte]
	// Restarts counts how often the pod restarted (and lost its caches).
	Restarts int
	// BadMessages counts invalidations that failed to decode (and changed
	// nothing).
	BadMessages int
	// Delivered and Undecodable count what the bus handed the pod, decoded
	// by the world itself: the account the relay's received and malformed
	// counters are compared with.
	Delivered, Undecodable int

	w *World
}

// busPublisher is authz.Publisher on the simulated bus: the wire form, sent
// from one pod to every subscriber.
type busPublisher struct {
	bus  *simbus.Bus[[]byte]
	from string
}

func (p busPublisher) Publish(ctx context.Context, m authz.Message) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	return p.bus.Publish(ctx, p.from, b)
}

func (w *World) newPod(i int) (*Pod, error) {
	p := &Pod{ID: i, Name: fmt.Sprintf("pod%d", i), w: w}
	if err := p.startRelay(); err != nil {
		return nil, err
	}
	faults := w.cfg.Bus.Faults
	if w.cfg.PodFaults != nil {
		faults = w.cfg.PodFaults[i]
	}
	sub, err := w.Bus.SubscribeWith(p.Name, faults, p.handle)
	if err != nil {
		return nil, err
	}
	p.Sub = sub
	return p, nil
}

func (p *Pod) startRelay() error {
	store := p.w.Store
	store.pod, store.flights = p.ID, p.w.flights
	if p.w.ownPools {
		store.pool = p.ID // each pod waits on its own pool
	}
	r, err := relay.New(p.w.S, store, busPublisher{p.w.Bus, p.Name}, relay.Config{OC: p.w.cfg.OC, MS: p.w.cfg.MS})
	if err != nil {
		return err
	}
	p.Relay, p.OC, p.MS = r, r.OC, r.MS
	return nil
}

// Restart empties the pod's caches, as a restarted relay process starts
// cold. Requests in flight on the old caches finish on them.
//
// A restart is a fault a shrinker may drop (sim.Keep): then the pod keeps
// its caches and Restart returns nil.
func (p *Pod) Restart() error {
	s := p.w.S
	if !s.Keep(sim.KeepFault) {
		return nil
	}
	if s.Recording() {
		s.Injected("%s restarts with empty caches", p.Name)
	}
	p.Restarts++
	p.w.S.Tracef("%s restarts with empty caches", p.Name)
	return p.startRelay()
}

// handle receives one invalidation from the bus; a malformed one changes
// nothing.
func (p *Pod) handle(b []byte) {
	if _, err := authz.DecodeMessage(b); err != nil {
		p.Undecodable++
	} else {
		p.Delivered++
	}
	if err := p.Relay.Receive(b); err != nil {
		p.BadMessages++
		p.w.S.Tracef("%s dropped a malformed invalidation: %v", p.Name, err)
		return
	}
	if m, err := authz.DecodeMessage(b); err == nil {
		p.w.flights.invalidated(p.ID, m)
	}
}
