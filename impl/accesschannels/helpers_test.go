package accesschannels_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/impl/accesschannels"
	"github.com/windtunnel/windtunnel/impl/authz"
	"github.com/windtunnel/windtunnel/impl/authz/authztest"
	"github.com/windtunnel/windtunnel/impl/rt"
	"github.com/windtunnel/windtunnel/sim"
)

var (
	bg         = context.Background()
	k1, k2     = authz.NewID('k', 1), authz.NewID('k', 2)
	maxAgeOpen = accesschannels.DefaultMaxAgeOpen
	ttl        = accesschannels.DefaultTTL
)

func ch(n uint64) authz.ID   { return authz.NewID('c', n) }
func user(n uint64) authz.ID { return authz.NewID('u', n) }

// runSim runs body as the root task of a simulation and fails the test if the
// run failed (a Failf, a panic, a deadlock or a limit).
func runSim(t *testing.T, seed uint64, body func(s *sim.Sim)) sim.Result {
	t.Helper()
	res := sim.Run(sim.Config{Seed: seed}, body)
	require.NoError(t, res.Err, "seed %d", seed)
	return res
}

// mustCache builds a cache inside a simulation; a construction error ends
// the run.
func mustCache(s *sim.Sim, pool authz.Pool, cfg accesschannels.Config) *accesschannels.Cache {
	c, err := accesschannels.New(s, pool, cfg)
	if err != nil {
		s.Failf("New: %v", err)
	}
	return c
}

// mustAdd inserts channels, ending the run on error.
func mustAdd(s *sim.Sim, db *authztest.DB, chans ...authztest.Channel) {
	for _, c := range chans {
		if err := db.AddChannel(c); err != nil {
			s.Failf("AddChannel: %v", err)
		}
	}
}

func mustMember(s *sim.Sim, db *authztest.DB, u authz.ID, chans ...authz.ID) {
	for _, c := range chans {
		if err := db.SetMember(u, c, true); err != nil {
			s.Failf("SetMember: %v", err)
		}
	}
}

func openCh(id, community authz.ID) authztest.Channel {
	return authztest.Channel{ID: id, Community: community, Open: true, Listed: true}
}

func privateCh(id, community authz.ID) authztest.Channel {
	return authztest.Channel{ID: id, Community: community}
}

// sleepUntil sleeps until virtual offset d since the start of the run.
func sleepUntil(s *sim.Sim, d time.Duration) {
	if err := s.Sleep(bg, d-s.Elapsed()); err != nil {
		s.Failf("sleep: %v", err)
	}
}

// granted is Granted that ends the run on error.
func granted(s *sim.Sim, c *accesschannels.Cache, community, reader, channel authz.ID) bool {
	ok, err := c.Granted(bg, community, reader, channel)
	if err != nil {
		s.Failf("Granted(%v, %v, %v): %v", community, reader, channel, err)
	}
	return ok
}

// accessible is Accessible that ends the run on error.
func accessible(s *sim.Sim, c *accesschannels.Cache, community, reader authz.ID) []authz.ID {
	ids, err := c.Accessible(bg, community, reader)
	if err != nil {
		s.Failf("Accessible(%v, %v): %v", community, reader, err)
	}
	return ids
}

// latency returns a Latency function: d for stmt, 0 for the others.
func latency(stmt string, d time.Duration) func(string) time.Duration {
	return func(s string) time.Duration {
		if s == stmt {
			return d
		}
		return 0
	}
}

// spawnAll runs each f on its own task and waits for all of them.
func spawnAll(s *sim.Sim, name string, fs ...func()) {
	wg := s.NewWaitGroup(name)
	wg.Add(len(fs))
	for _, f := range fs {
		s.Go(name, func() { defer wg.Done(); f() })
	}
	if err := wg.Wait(bg); err != nil {
		s.Failf("wait: %v", err)
	}
}

var _ rt.Runtime = (*sim.Sim)(nil)
