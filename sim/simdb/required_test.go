package simdb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
	"github.com/windtunnel/windtunnel/sim/simtest"
)

// A Hook's Required fault is the scenario's premise (a probe that takes the
// database offline): a replay whose Keep lists drop every fault still
// applies it, while the Hook's other faults are dropped like any injected
// one.
func TestARequiredFaultIsNeverDropped(t *testing.T) {
	errOffline, errFlaky := errors.New("offline"), errors.New("flaky")
	var results []error
	body := func(s *sim.Sim) {
		results = nil
		reads := 0
		db := newDB(s, simdb.Config{Statements: []string{"read"}, PoolSize: 1, Latency: fixed(ms(1)),
			Hook: func(st simdb.Statement) simdb.Fault {
				reads++
				if reads%2 == 1 {
					return simdb.Fault{Err: errOffline, Required: true}
				}
				return simdb.Fault{Err: errFlaky}
			}})
		ctx := context.Background()
		for range 4 {
			c, err := db.Acquire(ctx)
			if err != nil {
				s.Failf("acquire: %v", err)
			}
			_, err = read(ctx, s, c)
			c.Release()
			results = append(results, err)
		}
	}
	rec := sim.Run(simtest.RecordChoices(sim.Config{Seed: 1}), body)
	require.NoError(t, rec.Err)
	assert.Equal(t, []error{errOffline, errFlaky, errOffline, errFlaky}, results)
	assert.EqualValues(t, 2, simtest.ChoicesOf(&rec).Kept.Faults, "only the droppable faults ask Keep")

	r := sim.Run(simtest.ReplayChoices(sim.Config{Seed: 1}, rec, simtest.KeyedKeepsOf(rec).NoFaults()), body)
	require.NoError(t, r.Err)
	assert.Equal(t, []error{errOffline, nil, errOffline, nil}, results, "every fault dropped but the required ones")
}
