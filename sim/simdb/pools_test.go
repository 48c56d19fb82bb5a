package simdb_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// TestEachPoolWaitsForItsOwn: with two pools of one connection, a held
// connection of pool 0 makes pool 0's next caller wait for its release,
// while pool 1's caller gets its own connection at once, as two relays
// each wait on their own store's pool.
func TestEachPoolWaitsForItsOwn(t *testing.T) {
	var other, queued time.Duration
	var ids []int
	var badErr error
	var cfg simdb.Config
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{PoolSize: 1, Pools: 2})
		cfg = db.Config()
		held := s.NewEvent("held")
		s.Go("holder", func() {
			c, _ := db.AcquireFrom(bg, 0)
			ids = append(ids, c.ID())
			held.Set()
			_ = s.Sleep(bg, time.Second)
			c.Release()
		})
		_ = held.Wait(bg)
		c1, err := db.AcquireFrom(bg, 1)
		if err != nil {
			s.Failf("%v", err)
		}
		other, ids = s.Elapsed(), append(ids, c1.ID())
		c0, err := db.AcquireFrom(bg, 0)
		if err != nil {
			s.Failf("%v", err)
		}
		queued, ids = s.Elapsed(), append(ids, c0.ID())
		c0.Release()
		c1.Release()
		_, badErr = db.AcquireFrom(bg, 2)
	})
	assert.Equal(t, time.Duration(0), other, "pool 1 does not wait for pool 0")
	assert.Equal(t, time.Second, queued, "pool 0 waits for its own release")
	assert.Equal(t, []int{1, 2, 1}, ids)
	assert.Error(t, badErr)
	assert.Equal(t, "db pools=2×1 latency=0s read_errors=off write_errors=off", cfg.String())
	assert.Error(t, simdb.Config{Pools: -1}.Validate())
}
