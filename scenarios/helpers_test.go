package scenarios

import (
	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/scenarios/relay"
	"github.com/windtunnel/windtunnel/sim"
)

func accesschannelsNew(s *sim.Sim, st relay.Store) (*accesschannels.Cache, error) {
	return accesschannels.New(s, st, accesschannels.Config{})
}
