package pods_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/scenarios/world/pods"
	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// TestEachPodHasItsOwnPool: a world that names no pool size gives each
// pod simdb's default pool of its own, as each relay holds its own
// store's pool. With pod 0's pool exhausted, pod 1 still reads at once
// while pod 0's read waits; a world that names its size shares one pool.
func TestEachPodHasItsOwnPool(t *testing.T) {
	var own, shared simdb.Config
	var pod1Err, pod0Err error
	var pod1Took time.Duration
	res := sim.Run(sim.Config{Seed: 1}, func(s *sim.Sim) {
		ctx := context.Background()
		c := pods.DefaultChurn()
		tables, err := c.Tables()
		if err != nil {
			s.Failf("%v", err)
		}
		w, err := pods.NewWorld(s, pods.Config{Pods: 2}, tables)
		if err != nil {
			s.Failf("%v", err)
		}
		own = w.DB.Config()
		for range own.PoolSize {
			if _, err := w.DB.AcquireFrom(ctx, 0); err != nil {
				s.Failf("%v", err)
			}
		}
		start := s.Elapsed()
		_, pod1Err = w.Accessible(ctx, w.Pods[1], 1, c.Community, c.Members[0])
		pod1Took = s.Elapsed() - start
		tctx, cancel := s.WithTimeout(ctx, time.Second)
		defer cancel()
		_, pod0Err = w.Accessible(tctx, w.Pods[0], 2, c.Community, c.Members[0])
		w2, err := pods.NewWorld(s, pods.Config{Pods: 2, DB: simdb.Config{PoolSize: 8}}, tables)
		if err != nil {
			s.Failf("%v", err)
		}
		shared = w2.DB.Config()
	})
	require.NoError(t, res.Err)
	assert.Equal(t, simdb.DefaultPoolSize, own.PoolSize)
	assert.Equal(t, 2, own.Pools)
	assert.NoError(t, pod1Err)
	assert.Zero(t, pod1Took, "pod 1 does not wait for pod 0's pool")
	assert.ErrorIs(t, pod0Err, context.DeadlineExceeded, "pod 0 waits for its own exhausted pool")
	assert.Equal(t, 1, shared.Pools)
	assert.Equal(t, 8, shared.PoolSize)
}
