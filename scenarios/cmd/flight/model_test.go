package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/impl/edge/pgstore"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// TestSimulatedPoolIsProductions: the simulated worlds' default pool is
// the production store's (pgstore's default, max(4, GOMAXPROCS), at its
// floor: a world has no CPUs), the pool the flight's relays run with.
func TestSimulatedPoolIsProductions(t *testing.T) {
	assert.Equal(t, pgstore.DefaultMinMaxConns, simdb.DefaultPoolSize)
}
