package scanbad

import (
	"testing"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

func TestScanned(t *testing.T) {
	simtest.Run(t, simtest.Options{Seeds: 2}, func(s *sim.Sim) error { return nil })
}
