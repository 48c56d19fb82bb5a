package simdb_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// TestObserveSeesWaitsAndLags: Observe reports a queued checkout's wait
// (request to checkout) and a statement's lag and time, as the model
// produced them; the flight's simulated column is built from these.
func TestObserveSeesWaitsAndLags(t *testing.T) {
	var got []simdb.Timing
	lat := simdb.Latency{BaseMin: time.Millisecond, BaseMax: time.Millisecond, LagMin: 50 * time.Microsecond, LagMax: 50 * time.Microsecond}
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{PoolSize: 1, Latency: lat, Statements: []string{"read"}, Observe: func(x simdb.Timing) { got = append(got, x) }})
		held := s.NewEvent("held")
		s.Go("holder", func() {
			c, _ := db.AcquireFrom(bg, 0)
			held.Set()
			_ = s.Sleep(bg, time.Second)
			c.Release()
		})
		_ = held.Wait(bg)
		c, err := db.Acquire(bg)
		if err != nil {
			s.Failf("%v", err)
		}
		if _, err := read(bg, s, c); err != nil {
			s.Failf("%v", err)
		}
		c.Release()
	})
	if assert.Len(t, got, 3) {
		assert.Equal(t, time.Duration(0), got[0].Wait(), "the holder's checkout is at once")
		assert.Equal(t, simdb.AcquireStatement, got[1].Name)
		assert.Equal(t, time.Second, got[1].Wait(), "the queued checkout waits for the release")
		assert.Equal(t, "read", got[2].Name)
		assert.Equal(t, 50*time.Microsecond, got[2].Lag())
		assert.Equal(t, time.Millisecond+50*time.Microsecond, got[2].Wait())
	}
}

// TestObserveSeesFailedAcquires: an Acquire that gives up in the queue is
// observed as a failed checkout, from its arrival to its giving up, so a
// flight can count and time what its real pools count apart.
func TestObserveSeesFailedAcquires(t *testing.T) {
	var got []simdb.Timing
	run(t, 1, func(s *sim.Sim) {
		db := newDB(s, simdb.Config{PoolSize: 1, Observe: func(x simdb.Timing) { got = append(got, x) }})
		c, err := db.Acquire(bg)
		if err != nil {
			s.Failf("%v", err)
		}
		ctx, cancel := s.WithTimeout(bg, 300*time.Millisecond)
		defer cancel()
		if _, err := db.Acquire(ctx); err == nil {
			s.Failf("the second Acquire must give up with its context")
		}
		c.Release()
	})
	if assert.Len(t, got, 2) {
		assert.False(t, got[0].Err)
		assert.True(t, got[1].Err, "the second gave up")
		assert.Equal(t, simdb.AcquireStatement, got[1].Name)
		assert.Equal(t, 300*time.Millisecond, got[1].Wait(), "from its arrival to its context's end")
	}
}
