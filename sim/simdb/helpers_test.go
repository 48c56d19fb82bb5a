package simdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

var bg = context.Background()

// counter is the state of most tests: one integer that writes increment, so
// a read's value says exactly which commits it saw.
type counter struct{ n int }

func fixed(d time.Duration) simdb.Latency { return simdb.Latency{BaseMin: d, BaseMax: d} }

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// at is a virtual instant as an offset from the epoch, for readable asserts.
func at(t time.Time) time.Duration { return t.Sub(sim.Epoch) }

// newDB makes a database or fails the run.
func newDB(s *sim.Sim, cfg simdb.Config) *simdb.DB[counter] {
	db, err := simdb.New(s, cfg, counter{})
	if err != nil {
		s.Failf("simdb.New: %v", err)
	}
	return db
}

func read(ctx context.Context, s *sim.Sim, c *simdb.Conn[counter]) (int, error) {
	return simdb.Query(ctx, c, "read", func(int) int { return 1 }, func(st *counter) int { return st.n })
}

func inc(st *counter) { st.n++ }

// run runs body under the simulator and requires a clean run.
func run(t *testing.T, seed uint64, body func(s *sim.Sim)) sim.Result {
	t.Helper()
	res := sim.Run(sim.Config{Seed: seed}, body)
	require.NoError(t, res.Err, "seed %d", seed)
	return res
}

// failure runs body and returns the run's failure message, requiring one.
func failure(t *testing.T, body func(s *sim.Sim)) string {
	t.Helper()
	res := sim.Run(sim.Config{Seed: 1}, body)
	f := res.Failure()
	require.NotNil(t, f, "the run should have failed")
	return f.Message
}
