package oc

import (
	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simbus"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// onePod is the world of the directed open-set checks: one relay pod on
// the default churn's tables, the database at its default latency (which
// a check overrides per statement) and every invalidation delivered.
func onePod(s *sim.Sim) (*pods.World, pods.Churn, error) {
	c := pods.DefaultChurn()
	tables, err := c.Tables()
	if err != nil {
		return nil, c, err
	}
	w, err := pods.NewWorld(s, pods.Config{Pods: 1, DB: simdb.Config{Latency: simdb.DefaultLatency}, Bus: simbus.Config{Faults: simbus.Reliable()}}, tables)
	return w, c, err
}
