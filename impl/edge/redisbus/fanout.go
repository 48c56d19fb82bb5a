package redisbus

import "github.com/windtunnel/windtunnel/impl/authz"

// Fanout applies each message to every invalidator in order: one
// subscription feeds both caches of a relay (accessible channels and
// membership), each of which decides what the message drops (OC-5, MS-9).
type Fanout []authz.Invalidator

var _ authz.Invalidator = Fanout(nil)

// Invalidate implements authz.Invalidator.
func (f Fanout) Invalidate(m authz.Message) {
	for _, inv := range f {
		inv.Invalidate(m)
	}
}
