package relay

import (
	"fmt"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/membership"
	"github.com/windtunnel/windtunnel/sim/simbus"
)

// Pod is one relay: its own caches over the shared database, fed by its own
// subscription to the invalidation bus.
type Pod struct {
	ID   int
	Name string
	OC   *accesschannels.Cache
	MS   *membership.Cache
	Sub  *simbus.Subscriber[[]byte]
	// Restarts counts how often the pod restarted (and lost its caches).
	Restarts int
	// BadMessages counts invalidations that failed to decode (and changed
	// nothing).
	BadMessages int

	w *World
}

func (w *World) newPod(i int) (*Pod, error) {
	p := &Pod{ID: i, Name: fmt.Sprintf("pod%d", i), w: w}
	if err := p.startCaches(); err != nil {
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

func (p *Pod) startCaches() error {
	oc, err := accesschannels.New(p.w.S, p.w.Store, p.w.cfg.OC)
	if err != nil {
		return err
	}
	ms, err := membership.New(p.w.S, p.w.Store, p.w.cfg.MS)
	if err != nil {
		return err
	}
	p.OC, p.MS = oc, ms
	return nil
}

// Restart empties the pod's caches, as a restarted relay process starts
// cold. Requests in flight on the old caches finish on them.
func (p *Pod) Restart() error {
	p.Restarts++
	p.w.S.Tracef("%s restarts with empty caches", p.Name)
	return p.startCaches()
}

// handle decodes one invalidation from the bus; a malformed one changes
// nothing.
func (p *Pod) handle(b []byte) {
	m, err := authz.DecodeMessage(b)
	if err != nil {
		p.BadMessages++
		p.w.S.Tracef("%s dropped a malformed invalidation: %v", p.Name, err)
		return
	}
	p.apply(m)
}

func (p *Pod) apply(m authz.Message) {
	p.OC.Invalidate(m)
	p.MS.Invalidate(m)
}
