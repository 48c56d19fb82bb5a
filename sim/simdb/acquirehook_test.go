package simdb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/windtunnel/windtunnel/sim"
	"github.com/windtunnel/windtunnel/sim/simdb"
)

// TestAcquireHookFailsSlowsAndCancels: the AcquireHook's error fails a
// checkout (and leaves the connection free), its latency delays it, and a
// context it cancels fails it with the context's error.
func TestAcquireHookFailsSlowsAndCancels(t *testing.T) {
	boom := errors.New("boom")
	var errs []error
	var ats []time.Duration
	var inUse int
	run(t, 1, func(s *sim.Sim) {
		var next simdb.Fault
		db := newDB(s, simdb.Config{PoolSize: 1, Statements: []string{"read"}, AcquireHook: func(st simdb.Statement) simdb.Fault {
			if st.Name != simdb.AcquireStatement {
				s.Failf("AcquireHook saw %q", st.Name)
			}
			return next
		}})
		acquire := func(ctx context.Context, f simdb.Fault) {
			next = f
			c, err := db.Acquire(ctx)
			errs, ats = append(errs, err), append(ats, s.Elapsed())
			if err == nil {
				c.Release()
			}
		}
		acquire(bg, simdb.Fault{Err: boom})
		acquire(bg, simdb.Fault{Fixed: true, Latency: 200 * time.Millisecond})
		ctx, cancel := s.WithCancel(bg)
		acquire(ctx, simdb.Fault{AfterSnapshot: cancel})
		inUse = db.InUse()
	})
	require.ErrorIs(t, errs[0], boom)
	require.NoError(t, errs[1])
	require.Equal(t, 200*time.Millisecond, ats[1])
	require.ErrorIs(t, errs[2], context.Canceled)
	require.Zero(t, inUse)
}
